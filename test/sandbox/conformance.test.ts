/** @module Runs the SandboxRunner conformance suite against every real driver on this host. */
import { conformanceSuite } from './conformance.case.js';
import { DRIVERS } from './drivers.js';

for (const runner of DRIVERS) conformanceSuite(runner);
