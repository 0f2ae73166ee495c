/**
 * @module The demo gateway now lives in the test world (world.ts); this re-export serves the
 * suites not yet moved to it.
 */
export { openDemoGateway } from './world.js';
