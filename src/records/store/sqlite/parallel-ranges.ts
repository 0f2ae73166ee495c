/**
 * @module SQLite's parallel range check (docs/architecture.md C12, "Verify in parallel"): the
 * log's records 1..last cut into ranges, each read and checked by one of a few worker threads
 * (verify-worker.ts) on its own read-only connection to the file, the results handed back in seq
 * order. Only the hashing is spread out; what the results mean is decided by the verifier.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { RangeResult } from '../../audit-chain/index.js';
import type { RangeChecker, RangePlan } from '../audit-append.js';

/**
 * The worker module beside the code that starts it: compiled (.js; in the bundled command, the
 * worker is bundled beside main.js), or the source under a TypeScript loader.
 */
function workerUrl(): URL {
  const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  return new URL(`./verify-worker.${ext}`, import.meta.url);
}

export function sqliteRanges(path: string): RangeChecker {
  return { each: (plan, take) => eachRange(path, plan, take) };
}

/**
 * Calls `take(from, to, result)` for every range in seq order, each after the one before it has
 * been taken; a range a worker could not check (its start failed, it stopped) comes as not clean,
 * so the verifier checks it itself. At most two ranges per worker are in flight.
 */
async function eachRange(
  path: string,
  plan: RangePlan,
  take: (from: number, to: number, result: RangeResult) => Promise<void> | void,
): Promise<void> {
  const ranges: { from: number; to: number }[] = [];
  for (let from = 0; from < plan.last; from += plan.range) {
    ranges.push({ from, to: Math.min(plan.last, from + plan.range) });
  }
  const count = Math.max(
    1,
    Math.min(plan.workers ?? Math.min(availableParallelism(), 4), ranges.length),
  );
  const pending = new Map<number, (result: RangeResult) => void>();
  const owner = new Map<number, Worker>();
  const dead = new Set<Worker>();
  const workers: Worker[] = [];
  for (let i = 0; i < count; i++) {
    const worker = new Worker(workerUrl(), { workerData: { path } });
    worker.on('message', (m: { id: number; result: RangeResult }) => {
      const resolve = pending.get(m.id);
      pending.delete(m.id);
      owner.delete(m.id);
      resolve?.(m.result);
    });
    const down = () => {
      dead.add(worker);
      for (const [id, resolve] of pending) {
        if (owner.get(id) !== worker) continue;
        pending.delete(id);
        owner.delete(id);
        resolve({ clean: false });
      }
    };
    worker.on('error', down);
    worker.on('exit', down);
    workers.push(worker);
  }
  const send = (index: number): Promise<RangeResult> => {
    const range = ranges[index] as { from: number; to: number };
    const worker = workers[index % workers.length] as Worker;
    if (dead.has(worker)) return Promise.resolve({ clean: false });
    return new Promise<RangeResult>((resolve) => {
      pending.set(index, resolve);
      owner.set(index, worker);
      worker.postMessage({ id: index, from: range.from, to: range.to });
    });
  };
  const window = count * 2;
  const inFlight = new Map<number, Promise<RangeResult>>();
  try {
    for (let i = 0; i < Math.min(window, ranges.length); i++) inFlight.set(i, send(i));
    for (let i = 0; i < ranges.length; i++) {
      const result = await (inFlight.get(i) as Promise<RangeResult>);
      inFlight.delete(i);
      if (i + window < ranges.length) inFlight.set(i + window, send(i + window));
      const range = ranges[i] as { from: number; to: number };
      await take(range.from, range.to, result);
    }
  } finally {
    // Read-only connections: nothing is left half done when a worker is stopped.
    await Promise.all(workers.map((w) => w.terminate()));
  }
}
