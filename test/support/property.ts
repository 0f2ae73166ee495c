/**
 * @module fast-check for the suite's properties, with one fixed seed for every property of the
 * process: each run tries the same cases, so a result never depends on chance and a failure
 * replays as it was. `TOOLGATE_FC_SEED=<n>` explores other cases by hand; a failure it finds
 * becomes an example test of its own.
 */
import fc from 'fast-check';

fc.configureGlobal({ seed: Number(process.env.TOOLGATE_FC_SEED ?? 20_261_206) | 0 });

export { fc };
