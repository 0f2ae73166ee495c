/**
 * @module The scan pool (docs/architecture.md §8, C3, "Bulk registration"): a few worker threads
 * (scan-worker.ts) that compute the poisoning scan of many definitions at once, in batches, while
 * the thread that asked waits. Started on first use and stopped after a quiet while; never keeps
 * the process alive. A batch a worker could not finish (it failed, it stopped) comes back as
 * null, and those definitions are scanned on the asking thread at registration.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { ScanInput } from './description-scan.js';
import type { ScanFinding } from './tool-text-scan.js';

/** Fewer definitions than this are scanned inline: starting a worker costs more. */
const DEFAULT_MINIMUM = 64;
/** Definitions per message: big enough to amortise the copy, small enough to share the work. */
const BATCH = 32;
/** Workers stop after this long without work (a bulk apply comes in bursts). */
const IDLE_MS = 30_000;
const MAX_WORKERS = 4;

/**
 * The worker module beside the code that starts it: compiled (.js; in the bundled command, the
 * worker is bundled beside main.js), or the source under a TypeScript loader.
 */
function workerUrl(): URL {
  const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  return new URL(`./scan-worker.${ext}`, import.meta.url);
}

type Reply = (findings: ScanFinding[][] | null) => void;

class ScanWorker {
  readonly #worker: Worker;
  readonly #pending = new Map<number, Reply>();
  #next = 0;
  dead = false;

  constructor(onDown: (w: ScanWorker) => void) {
    this.#worker = new Worker(workerUrl());
    this.#worker.unref();
    this.#worker.on('message', (m: { id: number; findings: ScanFinding[][] | null }) => {
      const reply = this.#pending.get(m.id);
      this.#pending.delete(m.id);
      reply?.(m.findings);
      if (this.#pending.size === 0) this.#worker.unref();
    });
    const down = (): void => {
      if (this.dead) return;
      this.dead = true;
      for (const reply of this.#pending.values()) reply(null);
      this.#pending.clear();
      onDown(this);
    };
    this.#worker.on('error', down);
    this.#worker.on('exit', down);
  }

  scan(inputs: readonly ScanInput[]): Promise<ScanFinding[][] | null> {
    if (this.dead) return Promise.resolve(null);
    const id = this.#next++;
    return new Promise((resolve) => {
      this.#pending.set(id, resolve);
      // Held while it works, so a waiting caller is not left with an exited process.
      this.#worker.ref();
      this.#worker.postMessage({ id, inputs });
    });
  }

  stop(): void {
    void this.#worker.terminate();
  }
}

let workers: ScanWorker[] = [];
let idle: NodeJS.Timeout | undefined;

function poolOf(size: number): ScanWorker[] {
  clearTimeout(idle);
  while (workers.length < size) {
    workers.push(
      new ScanWorker((down) => {
        workers = workers.filter((w) => w !== down);
      }),
    );
  }
  return workers;
}

function stopWhenIdle(): void {
  clearTimeout(idle);
  idle = setTimeout(() => {
    const stopping = workers;
    workers = [];
    for (const w of stopping) w.stop();
  }, IDLE_MS);
  idle.unref();
}

/**
 * Each input's findings, in order, each settling when its batch is back (so the first can be used
 * while later ones are scanned); null for any the pool did not scan (too few inputs, one core, a
 * failed worker), which the caller scans itself. Never rejects.
 */
export function scanInParallel(
  inputs: readonly ScanInput[],
  options: { readonly minimum?: number } = {},
): Promise<ScanFinding[] | null>[] {
  const size = Math.min(availableParallelism(), MAX_WORKERS);
  if (inputs.length < (options.minimum ?? DEFAULT_MINIMUM) || size < 2) {
    return inputs.map(() => Promise.resolve(null));
  }
  const pool = poolOf(size);
  const out: Promise<ScanFinding[] | null>[] = [];
  const batches: Promise<unknown>[] = [];
  for (let from = 0, n = 0; from < inputs.length; from += BATCH, n++) {
    const worker = pool[n % pool.length] as ScanWorker;
    const batch = worker.scan(inputs.slice(from, from + BATCH));
    batches.push(batch);
    const count = Math.min(BATCH, inputs.length - from);
    for (let i = 0; i < count; i++) out.push(batch.then((findings) => findings?.[i] ?? null));
  }
  void Promise.all(batches).then(stopWhenIdle);
  return out;
}
