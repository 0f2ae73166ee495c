/**
 * @module One host uid per process-driver run, from a configured range, so that RLIMIT_NPROC —
 * which the kernel counts per real uid — counts that run's processes only: a sandbox that holds
 * processes (or any other program running as the shared `nobody`) cannot use up the process limit
 * of another run. A uid is claimed by binding an abstract Unix socket named after it
 * (`@toolgate-run-uid-<uid>`): the bind is atomic and exclusive across every process in the host's
 * network namespace (so across toolgate processes too), and the kernel releases it when its owner
 * exits or dies, so a crashed gateway never leaves a stale claim. A claimed uid under which a
 * process still runs (started outside toolgate) is passed over.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';

/** The default range: 65,536 uids no Debian account is created in (above the 60000 system cap). */
export const DEFAULT_RUN_UIDS: UidRange = { first: 100_000, last: 165_535 };

/** Environment variable that sets the range, `FIRST-LAST` (inclusive). */
export const RUN_UIDS_ENV = 'TOOLGATE_SANDBOX_UIDS';

export interface UidRange {
  readonly first: number;
  readonly last: number;
}

/** A claimed uid; `release` gives it back (idempotent, never throws). */
export interface RunUid {
  readonly uid: number;
  release(): Promise<void>;
}

const NOBODY = 65_534;
/** Accounts below this are system and login users on every mainstream distribution. */
const LOWEST = 1_000;
const HIGHEST = 4_294_967_294;

/**
 * Parses `FIRST-LAST`. Throws with the reason when the text is not two decimal integers, or the
 * range would include root, a login or system account (< 1000), `nobody`, or (uid_t)-1.
 */
export function parseUidRange(text: string): UidRange {
  const parts = text.trim().split('-');
  const decimal = /^[0-9]{1,10}$/;
  if (parts.length !== 2 || !parts.every((p) => decimal.test(p))) {
    throw new Error(`${RUN_UIDS_ENV} must be FIRST-LAST (two decimal uids), got "${text}"`);
  }
  const [first, last] = parts.map(Number) as [number, number];
  if (first > last) throw new Error(`${RUN_UIDS_ENV}: first uid ${first} is above last ${last}`);
  if (first < LOWEST || last > HIGHEST) {
    throw new Error(`${RUN_UIDS_ENV} must lie within ${LOWEST}-${HIGHEST}, got ${first}-${last}`);
  }
  if (first <= NOBODY && NOBODY <= last) {
    throw new Error(`${RUN_UIDS_ENV} must not include nobody (${NOBODY}), got ${first}-${last}`);
  }
  return { first, last };
}

/** The range from the environment, or the default when it is not set. Throws when it is invalid. */
export function uidRangeFromEnv(env: NodeJS.ProcessEnv = process.env): UidRange {
  const text = env[RUN_UIDS_ENV];
  return text === undefined || text === '' ? DEFAULT_RUN_UIDS : parseUidRange(text);
}

/** Real uids of every process on the host now, read from /proc. */
function runningUids(): Set<number> {
  const uids = new Set<number>();
  for (const name of readdirSync('/proc')) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    try {
      const status = readFileSync(`/proc/${name}/status`, 'utf8');
      const line = status.slice(status.indexOf('\nUid:') + 5);
      uids.add(Number(line.trim().split(/\s+/, 1)[0]));
    } catch {
      // The process ended while we looked.
    }
  }
  return uids;
}

/** Binds the uid's abstract socket; false when another process (or run) holds it. */
function claim(uid: number): Promise<Server | null> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') resolve(null);
      else reject(err);
    });
    // A leading NUL names a socket in the abstract namespace: no file, gone with its owner.
    server.listen(`\0toolgate-run-uid-${uid}`, () => {
      // The claim must never keep the gateway's event loop alive.
      server.unref();
      resolve(server);
    });
  });
}

export class RunUidPool {
  readonly #range: UidRange;
  readonly #size: number;
  /** Where the next search starts: spreads concurrent runs (and processes) over the range. */
  #cursor: number;

  constructor(range: UidRange) {
    this.#range = range;
    this.#size = range.last - range.first + 1;
    this.#cursor = process.pid % this.#size;
  }

  get range(): UidRange {
    return this.#range;
  }

  /** Claims a free uid. Rejects when every uid of the range is held or in use. */
  async acquire(): Promise<RunUid> {
    let inUse: Set<number> | null = null;
    for (let i = 0; i < this.#size; i++) {
      const uid = this.#range.first + ((this.#cursor + i) % this.#size);
      const server = await claim(uid);
      if (!server) continue;
      // Read once, after the first successful claim: a run of toolgate never needs more.
      inUse ??= runningUids();
      if (inUse.has(uid)) {
        await close(server);
        continue;
      }
      this.#cursor = (this.#cursor + i + 1) % this.#size;
      let released = false;
      return {
        uid,
        release: async () => {
          if (released) return;
          released = true;
          await close(server);
        },
      };
    }
    throw new Error(
      `no free sandbox uid in ${this.#range.first}-${this.#range.last} (${RUN_UIDS_ENV})`,
    );
  }
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}
