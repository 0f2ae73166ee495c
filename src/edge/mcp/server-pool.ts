/**
 * @module The 2026-07-28 servers of the HTTP front, built once and reused (C15, docs/architecture.md
 * §6). The SDK's stateless entry serves each request on an instance not serving another, so the
 * pool hands out an idle one (building one only when all are busy) and takes it back once its
 * exchange has closed and no handler of that request still runs: nothing of one request can
 * reach the next. An instance remembers no caller: each request brings its own (modern-server.ts).
 */

/** What the pool needs of an SDK server: whether it is connected, and its close callback. */
export interface Pooled {
  readonly transport?: unknown;
  onclose?: (() => void) | undefined;
}

/** Idle instances kept at most; one built beyond that (a burst) is dropped when it is done. */
const MAX_IDLE = 64;

export class ServerPool<S extends Pooled> {
  readonly #build: (pool: ServerPool<S>) => S;
  readonly #idle: S[] = [];
  /** Instances handed out, with the handlers of theirs still running. */
  readonly #out = new Map<S, number>();

  constructor(build: (pool: ServerPool<S>) => S) {
    this.#build = build;
  }

  /** An instance serving nothing: an idle one, or a new one when none is idle. */
  take(): S {
    const server = this.#idle.pop() ?? this.#fresh();
    this.#out.set(server, 0);
    return server;
  }

  /** A handler of `server` starts; the returned function is called when it ends. */
  hold(server: S): () => void {
    const n = this.#out.get(server);
    if (n === undefined) return () => {};
    this.#out.set(server, n + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const left = (this.#out.get(server) ?? 1) - 1;
      this.#out.set(server, left);
      this.settle(server);
    };
  }

  /** Takes `server` back if its exchange has closed and none of its handlers runs. */
  settle(server: S): void {
    if (this.#out.get(server) !== 0 || server.transport !== undefined) return;
    this.#out.delete(server);
    if (this.#idle.length < MAX_IDLE) this.#idle.push(server);
  }

  #fresh(): S {
    const server = this.#build(this);
    // The SDK's entry chains its own close callback before this one and restores it after.
    server.onclose = () => this.settle(server);
    return server;
  }
}
