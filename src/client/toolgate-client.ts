/**
 * @module The client SDK an agent uses to reach toolgate (`import { ToolgateClient } from
 * 'toolgate/client'`): typed calls over REST or MCP, the tool set cached through a short outage,
 * bounded retries under one idempotency key, and approvals as a pending result to wait on. It
 * never runs a tool: every call goes to the gateway, and while the gateway is away a call fails
 * closed with `GatewayUnavailableError` (docs/architecture.md §6).
 */
import { randomUUID } from 'node:crypto';
import type { CallPending, CallResult, Settled, ToolTypes, WaitOptions } from './call-result.js';
import { ApprovalWaitTimeoutError, GatewayUnavailableError } from './client-errors.js';
import { type CacheOptions, DefinitionsCache, type ToolSet } from './definitions-cache.js';
import { McpTransport } from './mcp-transport.js';
import { RestTransport } from './rest-transport.js';
import type { RetryPolicy } from './retry-policy.js';
import type { KeyOutcome, Transport, WireAnswer, WireCall, WirePending } from './transport.js';

export interface ClientOptions {
  /** `rest`: the base URL (`http://host:port`); `mcp`: the MCP endpoint (`http://host:port/mcp`). */
  readonly url: string | URL;
  /** The agent's API key (or JWT). */
  readonly token: string;
  /** Default `rest`. */
  readonly transport?: 'rest' | 'mcp';
  /** REST: an open session to use (else one is opened on first use), or what to open it for. */
  readonly sessionId?: string;
  readonly session?: { readonly onBehalfOf?: string; readonly runId?: string };
  readonly retry?: RetryPolicy;
  readonly cache?: CacheOptions;
  /** Per attempt; default 30 s. */
  readonly requestTimeoutMs?: number;
  /**
   * REST: how long a call whose first attempt under the same key has not finished waits for its
   * outcome before throwing `CallOutcomeUnknownError`; default 2 minutes.
   */
  readonly outcomeWaitMs?: number;
}

export interface CallOptions {
  /** Every attempt of this call carries it; default a fresh UUID per call. Max 128 characters. */
  readonly idempotencyKey?: string;
  readonly signal?: AbortSignal;
}

/** The refusals that say the held tool set no longer matches the gateway's. */
const STALE_CODES: ReadonlySet<string> = new Set(['TOOL_NOT_REGISTERED', 'TOOL_RETIRED']);

function abortable(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export class ToolgateClient<Tools extends ToolTypes = ToolTypes> {
  readonly #transport: Transport;
  readonly #cache: DefinitionsCache;
  readonly #changed: (() => void)[] = [];

  constructor(options: ClientOptions) {
    const common = {
      url: options.url,
      token: options.token,
      ...(options.retry ? { retry: options.retry } : {}),
      ...(options.requestTimeoutMs !== undefined
        ? { requestTimeoutMs: options.requestTimeoutMs }
        : {}),
    };
    this.#transport =
      options.transport === 'mcp'
        ? new McpTransport(common)
        : new RestTransport({
            ...common,
            ...(options.sessionId !== undefined ? { sessionId: options.sessionId } : {}),
            ...(options.session ? { session: options.session } : {}),
            ...(options.outcomeWaitMs !== undefined
              ? { outcomeWaitMs: options.outcomeWaitMs }
              : {}),
          });
    this.#cache = new DefinitionsCache(options.cache);
    this.#transport.onListChanged(() => this.#stale());
  }

  /**
   * Tells `listener` each time the gateway says the tool set changed (MCP `list_changed`, a
   * refusal naming a tool gone): the cached set is dropped then, and `tools()` fetches anew.
   */
  onToolsChanged(listener: () => void): void {
    this.#changed.push(listener);
  }

  #stale(): void {
    this.#cache.drop();
    for (const listener of this.#changed) {
      try {
        listener();
      } catch {
        // An agent's listener never breaks the client.
      }
    }
  }

  /** How many times the gateway said the cached tool set was stale (it was dropped then). */
  get cacheDrops(): number {
    return this.#cache.dropped;
  }

  /**
   * The tools this agent may call. Asks the gateway (revalidating the held set); while the gateway
   * is away, answers the last-known set (`source: 'cache'`) within the cache's TTL, and past it —
   * or when nothing is held — throws `GatewayUnavailableError`.
   */
  async tools(signal?: AbortSignal): Promise<ToolSet> {
    try {
      const answer = await this.#transport.listTools(this.#cache.revision, signal);
      if (answer.kind === 'tools') return this.#cache.store(answer.tools, answer.revision);
      return this.#cache.confirm() ?? this.#cache.store([], null);
    } catch (err) {
      if (!(err instanceof GatewayUnavailableError)) throw err;
      const held = this.#cache.servable();
      if (held === null) throw err;
      return held;
    }
  }

  /**
   * Calls a tool through the gateway. Answers its decision: allowed, denied, or pending approval
   * (`wait()` on it). Throws `GatewayUnavailableError` when the gateway cannot be reached after
   * the bounded retries: nothing ran here, and the same `idempotencyKey` is safe to retry later.
   */
  async call<K extends keyof Tools & string>(
    name: K,
    args: Tools[K]['input'],
    options: CallOptions = {},
  ): Promise<CallResult<Tools[K]['output']>> {
    const call: WireCall = {
      name,
      args: args as Readonly<Record<string, unknown>>,
      idempotencyKey: options.idempotencyKey ?? randomUUID(),
      ...(options.signal ? { signal: options.signal } : {}),
    };
    return this.#settle<Tools[K]['output']>(call, await this.#transport.call(call));
  }

  /**
   * What became of the call made under `idempotencyKey` to `name` (REST): `succeeded`, `failed`,
   * `running` or `unknown` (started, no outcome recorded: it may have run); null when the gateway
   * knows no such call of this agent (never made, expired, or refused before it ran). Use it after
   * a `GatewayUnavailableError` or `CallOutcomeUnknownError` instead of sending the call under a
   * new key, which would run it again.
   */
  async outcome(
    name: keyof Tools & string,
    idempotencyKey: string,
    signal?: AbortSignal,
  ): Promise<KeyOutcome | null> {
    return this.#transport.outcome(name, idempotencyKey, signal);
  }

  async close(): Promise<void> {
    await this.#transport.close();
  }

  #settle<TOutput>(call: WireCall, answer: WireAnswer): CallResult<TOutput> {
    if (answer.kind === 'deny' && STALE_CODES.has(answer.code)) this.#stale();
    if (answer.kind !== 'pending_approval') return answer as Settled<TOutput>;
    const pending: CallPending<TOutput> = {
      kind: 'pending_approval',
      approvalId: answer.approvalId,
      callId: answer.callId,
      rendered: answer.rendered,
      message: answer.message,
      wait: (options) => this.#wait<TOutput>(call, answer, options),
    };
    return pending;
  }

  /** Follows the approval until it is decided, then answers the completed call. */
  async #wait<TOutput>(
    call: WireCall,
    first: WirePending,
    options: WaitOptions = {},
  ): Promise<Settled<TOutput>> {
    const pollMs = options.pollMs ?? 1000;
    const deadline = Date.now() + (options.timeoutMs ?? 600_000);
    const followed: WireCall = options.signal ? { ...call, signal: options.signal } : call;
    let pending = first;
    for (;;) {
      if (Date.now() >= deadline) throw new ApprovalWaitTimeoutError(pending.approvalId);
      await abortable(Math.min(pollMs, Math.max(0, deadline - Date.now())), options.signal);
      const next = await this.#transport.follow(followed, pending);
      if (next.kind !== 'pending_approval') {
        if (next.kind === 'deny' && STALE_CODES.has(next.code)) this.#stale();
        return next as Settled<TOutput>;
      }
      pending = next;
    }
  }
}
