/**
 * @module Upstream MCP processes kept alive per (provider, gate session): started lazily on the
 * first call, closed with the session or after an idle timeout, capped in number. A crashed one is
 * started again on the next call (with backoff after repeated failures); a hung call is abandoned
 * at its deadline and its process killed, so it never holds another session's calls.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Progress, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { CallProgress, McpToolResult } from '../../core/index.js';
import type { SandboxProcess } from '../sandbox/index.js';
import { EgressRefused } from './checked-fetch.js';
import { listedTwice } from './listed-names.js';
import { pinOf } from './tool-pin.js';
import {
  entryPinKey,
  entryPinOf,
  isEntryPinKey,
  listEntries,
  pinnedWhat,
} from './upstream-entries.js';

/** What an upstream MCP call came to: the upstream's result, or why there is none. */
export type UpstreamCallResult =
  | { readonly ok: true; readonly result: McpToolResult }
  | {
      readonly ok: false;
      readonly code:
        | 'SANDBOX_TIMEOUT'
        | 'SANDBOX_UNAVAILABLE'
        | 'EXECUTION_FAILED'
        | 'EGRESS_DENIED'
        | 'BUDGET_EXCEEDED'
        | 'CALL_CANCELLED';
      readonly rule: string;
      readonly message: string;
    };

/**
 * One way to an upstream: a sandboxed process's stdio, or a Streamable HTTP endpoint reached under
 * the egress rules. `ended` settles when the link is gone (a process exited).
 */
export interface UpstreamLink {
  readonly transport: Transport;
  readonly ended: Promise<unknown>;
  close(): Promise<void>;
}

/** Opens one link (starts one upstream process in its sandbox); rejects when it cannot. */
export type UpstreamLauncher = () => Promise<UpstreamLink>;

/**
 * The link over a sandboxed process's stdio pipes. The MCP client SDK (and its zod schemas) loads
 * with the first link, not with the gateway: most gateways and tests start none.
 */
export async function processLink(process: SandboxProcess): Promise<UpstreamLink> {
  process.stderr.resume();
  const { StreamClientTransport } = await import('./stream-transport.js');
  return {
    transport: new StreamClientTransport(process.stdout, process.stdin),
    ended: process.exited,
    close: async () => {
      await process.close();
    },
  };
}

export interface UpstreamPoolOptions {
  /** Live upstream processes at most, over every provider and session (default 64). */
  readonly maxLive?: number;
  /** How long the MCP initialize and first listing may take (default 20 000 ms). */
  readonly startTimeoutMs?: number;
  readonly onError?: (err: unknown) => void;
}

/**
 * A started, initialized upstream with the pins of the tools it listed when it started (by name),
 * and those of its resources, templates and prompts (by `entryPinKey`), listed once on the first
 * request that needs them: a tool call never waits for that listing.
 */
export interface UpstreamSession {
  readonly client: Client;
  readonly link: UpstreamLink;
  readonly pins: ReadonlyMap<string, string>;
  readonly tools: readonly Tool[];
  entryPins(): Promise<ReadonlyMap<string, string>>;
}

/** One request to an upstream on behalf of a gated call: tools/call, resources/read, prompts/get. */
export type UpstreamRequest = (client: Client, options: RequestOptions) => Promise<McpToolResult>;

interface Entry {
  readonly key: string;
  readonly provider: string;
  readonly sessionId: string;
  readonly idleMs: number;
  /** The spec the process was started under (UpstreamTarget.spec). */
  readonly spec: object;
  ready: Promise<UpstreamSession>;
  session: UpstreamSession | null;
  lastUsed: number;
  inflight: number;
  closed: boolean;
  /** Out of the pool (its spec was replaced): closed once its last call in flight ends. */
  retired: boolean;
}

const CLIENT_INFO = { name: 'toolgate', version: '0.1.0' };
const BACKOFF_BASE_MS = 200;
const BACKOFF_MAX_MS = 10_000;

/**
 * Connects an MCP client to a started process and reads its whole tool listing (its entries are
 * listed when first needed: `entryPins`). The client
 * declares no capabilities: no roots (an agent's roots never reach an upstream, which could widen
 * what it may touch), no sampling, no elicitation.
 */
export async function openUpstream(
  launch: UpstreamLauncher,
  timeoutMs: number,
): Promise<UpstreamSession> {
  const link = await launch();
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const client: Client = new Client(CLIENT_INFO, { capabilities: {} });
  try {
    await client.connect(link.transport, { timeout: timeoutMs });
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 100; page += 1) {
      const listed = await client.listTools(cursor !== undefined ? { cursor } : {}, {
        timeout: timeoutMs,
      });
      tools.push(...listed.tools);
      cursor = listed.nextCursor;
      if (cursor === undefined) break;
    }
    const pins = new Map(tools.map((t) => [t.name, pinOf(t)]));
    let entryPins: Promise<ReadonlyMap<string, string>> | null = null;
    const listOnce = () => {
      // A listing that fails pins nothing: every entry request of this process is then refused.
      // A key listed more than once pins nothing, as at import (admitListedEntries): no read of it
      // matches, whichever definition the upstream would serve (attack round 11 F6).
      entryPins ??= listEntries(client, timeoutMs).then(
        (entries) => {
          const twice = listedTwice(entries);
          const once = entries.filter((e) => !twice.has(`${e.kind}:${e.key}`));
          return new Map(once.map((e) => [entryPinKey(e.kind, e.key), entryPinOf(e)]));
        },
        () => new Map<string, string>(),
      );
      return entryPins;
    };
    return { client, link, pins, tools, entryPins: listOnce };
  } catch (err) {
    await client.close().catch(() => {});
    await link.close();
    throw err;
  }
}

/** Which provider process a request goes to: one per (provider, gate session). */
export interface UpstreamTarget {
  readonly provider: string;
  readonly sessionId: string;
  readonly launch: UpstreamLauncher;
  readonly idleMs: number;
  /**
   * The provider spec the call runs under, as the provider service hands it out (one object per
   * stored spec until it changes: provider-specs.ts). A session's process started under another
   * object is not called: it leaves the pool, is closed once its calls in flight end, and a new one
   * starts under this spec (its limits, idle timeout, program).
   */
  readonly spec: object;
}

/** The caller's progress listener and cancellation, relayed to and from the upstream. */
export interface UpstreamRelay {
  readonly onProgress?: (progress: CallProgress) => void;
  readonly signal?: AbortSignal;
  /** A traced call's W3C context, sent in the request's `_meta` (and, over HTTP, its header). */
  readonly traceparent?: string;
}

export class UpstreamPool {
  readonly #entries = new Map<string, Entry>();
  /** Processes out of the pool whose calls in flight have not ended yet (#retire). */
  readonly #retired = new Set<Entry>();
  readonly #failures = new Map<string, { count: number; until: number }>();
  readonly #maxLive: number;
  readonly #startTimeoutMs: number;
  readonly #onError: (err: unknown) => void;
  #sweeper: NodeJS.Timeout | null = null;

  constructor(options: UpstreamPoolOptions = {}) {
    this.#maxLive = options.maxLive ?? 64;
    this.#startTimeoutMs = options.startTimeoutMs ?? 20_000;
    this.#onError = options.onError ?? (() => {});
  }

  /** Live (started or starting) upstream processes. */
  get size(): number {
    return this.#entries.size + this.#retired.size;
  }

  /**
   * Calls `tool` on the provider's process for this session. `expectedPin` is the pin the tool was
   * classified under: a process whose listing differs (the upstream changed since the refresh) is
   * not called. Never throws; never waits past `timeoutMs`.
   */
  call(
    target: UpstreamTarget,
    tool: string,
    args: Record<string, unknown>,
    expectedPin: string | undefined,
    timeoutMs: number,
    relay: UpstreamRelay = {},
  ): Promise<UpstreamCallResult & { pinMismatch?: boolean }> {
    return this.request(target, tool, expectedPin, timeoutMs, relay, (client, options) =>
      client
        .callTool(
          relay.traceparent === undefined
            ? { name: tool, arguments: args }
            : { name: tool, arguments: args, _meta: { traceparent: relay.traceparent } },
          undefined,
          options,
        )
        .then(toResult),
    );
  }

  /**
   * Sends one request to the provider's process for this session once the pin listed under
   * `pinKey` (a tool's name, or an entry's `entryPinKey`) is `expectedPin`: the same process,
   * deadline, cancellation and failure handling as a tool call. Never throws.
   */
  async request(
    target: UpstreamTarget,
    pinKey: string,
    expectedPin: string | undefined,
    timeoutMs: number,
    relay: UpstreamRelay,
    send: UpstreamRequest,
  ): Promise<UpstreamCallResult & { pinMismatch?: boolean }> {
    const entry = this.#entryFor(target);
    if ('ok' in entry) return entry;
    entry.inflight += 1;
    entry.lastUsed = Date.now();
    try {
      let session: UpstreamSession;
      try {
        session = await withDeadline(entry.ready, timeoutMs + this.#startTimeoutMs);
      } catch (err) {
        this.#onError(err);
        this.#noteFailure(target.provider);
        await this.#drop(entry);
        return fail(
          'EXECUTION_FAILED',
          'provider.unavailable',
          'the upstream provider could not be started',
        );
      }
      this.#failures.delete(target.provider);
      const pins = isEntryPinKey(pinKey) ? await session.entryPins() : session.pins;
      if (expectedPin === undefined || pins.get(pinKey) !== expectedPin) {
        return {
          ...fail(
            'EXECUTION_FAILED',
            'provider.pin_mismatch',
            `the upstream ${pinnedWhat(pinKey)} no longer matches its pinned definition`,
          ),
          pinMismatch: true,
        };
      }
      if (relay.signal?.aborted) return cancelled();
      const onProgress = relay.onProgress;
      // The upstream is told that the call was cancelled, never the agent's reason: that text is
      // the agent's, and would reach the upstream past every check its arguments went through.
      const upstreamAbort = new AbortController();
      const onAbort = () => upstreamAbort.abort(CANCEL_REASON);
      relay.signal?.addEventListener('abort', onAbort, { once: true });
      try {
        // With onprogress the SDK sends its own progress token upstream (the agent's token is the
        // agent's; the front maps back). The timeout is not reset by progress: wall time is a cap.
        // An aborted signal makes the SDK send notifications/cancelled for this request upstream.
        const result = await send(session.client, {
          timeout: timeoutMs,
          ...(onProgress
            ? {
                onprogress: (p: Progress) =>
                  onProgress({
                    progress: p.progress,
                    ...(p.total !== undefined ? { total: p.total } : {}),
                    ...(p.message !== undefined ? { message: p.message } : {}),
                  }),
              }
            : {}),
          ...(relay.signal ? { signal: upstreamAbort.signal } : {}),
        });
        return { ok: true, result };
      } catch (err) {
        // Cancelled by the caller: the upstream was told and its process is still good.
        if (upstreamAbort.signal.aborted && !entry.closed) return cancelled();
        if (entry.closed || isConnectionClosed(err)) {
          // The process ended (or is ending): the next call starts a new one.
          await this.#drop(entry);
          return fail(
            'EXECUTION_FAILED',
            'provider.exited',
            'the upstream provider ended during the call',
          );
        }
        if (isTimeout(err)) {
          // The process is this session's own: killing it frees nothing another session uses.
          await this.#drop(entry);
          return fail(
            'SANDBOX_TIMEOUT',
            'sandbox.timeout',
            `the upstream tool ran past ${timeoutMs} ms`,
          );
        }
        // The request was refused on its way out (a secret in it, a host it may not reach).
        const refused = egressRefusalIn(err);
        if (refused) return fail('EGRESS_DENIED', refused.rule, refused.message);
        // A JSON-RPC error from the upstream (unknown tool, invalid params): a failed call.
        return fail('EXECUTION_FAILED', 'provider.error', 'the upstream provider refused the call');
      } finally {
        relay.signal?.removeEventListener('abort', onAbort);
      }
    } finally {
      entry.inflight -= 1;
      entry.lastUsed = Date.now();
      if (entry.retired && entry.inflight === 0) void this.#drop(entry);
    }
  }

  /**
   * The session's process for this call: the one running under the call's spec, else a new one
   * (after backoff and capacity allow it), a process of an older spec retired.
   */
  #entryFor(target: UpstreamTarget): Entry | Extract<UpstreamCallResult, { ok: false }> {
    const key = `${target.provider}\u0000${target.sessionId}`;
    const entry = this.#entries.get(key);
    if (entry && entry.spec === target.spec) return entry;
    if (entry) this.#retire(entry);
    const failure = this.#failures.get(target.provider);
    if (failure && failure.until > Date.now()) {
      return fail(
        'EXECUTION_FAILED',
        'provider.backoff',
        'the upstream provider failed to start; retry later',
      );
    }
    if (!this.#makeRoom()) {
      return fail(
        'EXECUTION_FAILED',
        'provider.capacity',
        'too many upstream processes are running; retry later',
      );
    }
    return this.#start(key, target);
  }

  /** Takes a process out of the pool; it is closed now if idle, else when its last call ends. */
  #retire(entry: Entry): void {
    entry.retired = true;
    if (this.#entries.get(entry.key) === entry) this.#entries.delete(entry.key);
    if (entry.inflight === 0) void this.#drop(entry);
    else this.#retired.add(entry);
  }

  /** Closes every process of this gate session (its MCP session ended). */
  async closeSession(sessionId: string): Promise<void> {
    const mine = this.#all().filter((e) => e.sessionId === sessionId);
    await Promise.all(mine.map((e) => this.#drop(e)));
  }

  /** Closes every process of one provider (its spec changed or it was refreshed). */
  async closeProvider(provider: string): Promise<void> {
    const mine = this.#all().filter((e) => e.provider === provider);
    await Promise.all(mine.map((e) => this.#drop(e)));
  }

  async close(): Promise<void> {
    if (this.#sweeper) clearInterval(this.#sweeper);
    this.#sweeper = null;
    await Promise.all(this.#all().map((e) => this.#drop(e)));
  }

  /** Every process: in the pool, and retired ones still serving a call. */
  #all(): Entry[] {
    return [...this.#entries.values(), ...this.#retired];
  }

  #start(key: string, target: UpstreamTarget): Entry {
    const entry: Entry = {
      key,
      provider: target.provider,
      sessionId: target.sessionId,
      idleMs: target.idleMs,
      spec: target.spec,
      ready: Promise.resolve(null as unknown as UpstreamSession),
      session: null,
      lastUsed: Date.now(),
      inflight: 0,
      closed: false,
      retired: false,
    };
    entry.ready = openUpstream(target.launch, this.#startTimeoutMs).then((session) => {
      entry.session = session;
      // A crash ends the entry: the next call starts a new process.
      void session.link.ended.then(() => {
        entry.closed = true;
        if (this.#entries.get(key) === entry) this.#entries.delete(key);
        this.#retired.delete(entry);
      });
      if (entry.closed) void session.link.close();
      return session;
    });
    // The failure is handled by whoever awaits it; this keeps it from going unhandled.
    entry.ready.catch(() => {});
    this.#entries.set(key, entry);
    this.#ensureSweeper();
    return entry;
  }

  /** Whether one more process may start, closing the least recently used idle one if need be. */
  #makeRoom(): boolean {
    if (this.size < this.#maxLive) return true;
    const idle = [...this.#entries.values()]
      .filter((e) => e.inflight === 0)
      .sort((a, b) => a.lastUsed - b.lastUsed)[0];
    if (!idle) return false;
    void this.#drop(idle);
    return true;
  }

  #noteFailure(provider: string): void {
    const count = (this.#failures.get(provider)?.count ?? 0) + 1;
    // The first failure retries at once on the next call; repeated ones wait longer each time.
    const wait = count <= 1 ? 0 : Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** (count - 2));
    this.#failures.set(provider, { count, until: Date.now() + wait });
  }

  async #drop(entry: Entry): Promise<void> {
    entry.closed = true;
    if (this.#entries.get(entry.key) === entry) this.#entries.delete(entry.key);
    this.#retired.delete(entry);
    const session = entry.session ?? (await entry.ready.catch(() => null));
    if (!session) return;
    await session.client.close().catch(() => {});
    await session.link.close();
  }

  #ensureSweeper(): void {
    if (this.#sweeper) return;
    this.#sweeper = setInterval(() => {
      const now = Date.now();
      for (const e of [...this.#entries.values()]) {
        if (e.inflight === 0 && now - e.lastUsed > e.idleMs) void this.#drop(e);
      }
      if (this.#entries.size === 0 && this.#sweeper) {
        clearInterval(this.#sweeper);
        this.#sweeper = null;
      }
    }, 1000);
    this.#sweeper.unref();
  }
}

function fail(
  code: 'SANDBOX_TIMEOUT' | 'SANDBOX_UNAVAILABLE' | 'EXECUTION_FAILED' | 'EGRESS_DENIED',
  rule: string,
  message: string,
): Extract<UpstreamCallResult, { ok: false }> {
  return { ok: false, code, rule, message };
}

/** What an upstream is told when a call is cancelled (the same for every call). */
const CANCEL_REASON = 'the caller cancelled the call';

function cancelled(): Extract<UpstreamCallResult, { ok: false }> {
  return {
    ok: false,
    code: 'CALL_CANCELLED',
    rule: 'call.cancelled',
    message: CANCEL_REASON,
  };
}

/** The EgressRefused behind an error the MCP client raised, if any (it may wrap it as a cause). */
function egressRefusalIn(err: unknown): EgressRefused | null {
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    if (e instanceof EgressRefused) return e;
    e = (e as { cause?: unknown }).cause;
  }
  return null;
}

function isConnectionClosed(err: unknown): boolean {
  // The SDK's ConnectionClosed error code: the transport closed under a pending request.
  return (err as { code?: unknown }).code === -32000;
}

function isTimeout(err: unknown): boolean {
  // The SDK's RequestTimeout error code.
  return (err as { code?: unknown }).code === -32001;
}

function toResult(raw: Record<string, unknown>): McpToolResult {
  const content = Array.isArray(raw.content) ? (raw.content as Record<string, unknown>[]) : [];
  const structured = raw.structuredContent;
  return {
    content,
    ...(typeof structured === 'object' && structured !== null && !Array.isArray(structured)
      ? { structuredContent: structured as Record<string, unknown> }
      : {}),
    ...(raw.isError === true ? { isError: true } : {}),
  };
}

async function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`not ready within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    if (timer) clearTimeout(timer);
  }
}
