/**
 * @module The client SDK over MCP 2026-07-28 (stateless, so a gateway restart costs no session):
 * `@modelcontextprotocol/client` is loaded only when this transport first connects, so an agent on
 * REST never loads it (it is an optional peer dependency, docs/architecture.md §2). The run handle
 * the gateway mints is carried on every call; `list_changed` drops the definitions cache; a
 * pending approval is an `input_required` result whose sealed `requestState` the follow-up echoes.
 *
 * MCP `tools/call` has no idempotency key on this gateway, so a call is retried only when no
 * attempt can have reached it (the connection was refused); otherwise it fails closed at once.
 */
import type { Client } from '@modelcontextprotocol/client';
import type { ErrorCode, RenderedCall } from '../core/index.js';
import type { CallNotApproved } from './call-result.js';
import {
  GatewayRequestError,
  McpClientMissingError,
  type UnavailableCause,
} from './client-errors.js';
import type { ToolDescriptor } from './definitions-cache.js';
import { type RetryPolicy, withRetries } from './retry-policy.js';
import type {
  KeyOutcome,
  ListAnswer,
  Transport,
  WireAnswer,
  WireCall,
  WirePending,
} from './transport.js';

export interface McpTransportOptions {
  /** The gateway's MCP endpoint, e.g. `http://127.0.0.1:8080/mcp`. */
  readonly url: string | URL;
  readonly token: string;
  readonly retry?: RetryPolicy;
  /** Per request; default 30 s. */
  readonly requestTimeoutMs?: number;
}

const MODERN = '2026-07-28';
const RUN = 'io.toolgate/run';
const APPROVAL = 'io.toolgate/approval';
/** Asks the gateway not to hold a call that waits for approval (docs/mcp.md). */
const APPROVAL_WAIT = 'io.toolgate/approval-wait';
const DECISION = 'toolgate/decision';
/** The gateway's request-state refusals (docs/architecture.md §6): the approval is gone. */
const STATE_EXPIRED = -32081;
const STATE_REPLAYED = -32083;

type McpModule = typeof import('@modelcontextprotocol/client');

interface RawResult {
  readonly resultType?: string;
  readonly requestState?: string;
  readonly isError?: boolean;
  readonly structuredContent?: unknown;
  readonly content?: readonly { type: string; text?: string }[];
  readonly _meta?: Readonly<Record<string, unknown>>;
}

function record(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : {};
}

/** The first string `code` down an error's cause chain (undici puts ECONNREFUSED deep inside). */
function causeCode(err: unknown): string | null {
  let e: unknown = err;
  for (let depth = 0; depth < 6 && e !== undefined && e !== null; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z]+$|^UND_ERR/.test(code)) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return null;
}

export class McpTransport implements Transport {
  readonly #options: McpTransportOptions;
  readonly #listeners: (() => void)[] = [];
  #mod: McpModule | null = null;
  #client: Client | null = null;
  #connecting: Promise<Client> | null = null;
  #run: string | null = null;

  constructor(options: McpTransportOptions) {
    this.#options = options;
  }

  async listTools(_revision: string | null, signal?: AbortSignal): Promise<ListAnswer> {
    const result = await this.#send(
      async (c) => c.listTools(undefined, { cacheMode: 'bypass', ...this.#requestOptions(signal) }),
      true,
      signal,
    );
    return { kind: 'tools', tools: result.tools as unknown as ToolDescriptor[], revision: null };
  }

  async call(call: WireCall): Promise<WireAnswer> {
    return this.#callTool(call, null);
  }

  /**
   * MCP `tools/call` carries no idempotency key on this gateway, so there is no key to ask about:
   * a call that may have reached it is never resent (above), and nothing here answers "use a new
   * key". Asking is refused as a request the transport cannot make.
   */
  async outcome(): Promise<KeyOutcome | null> {
    throw new GatewayRequestError(
      0,
      'NOT_SUPPORTED',
      'MCP calls carry no idempotency key: use the REST transport to ask for a key’s outcome',
      {},
    );
  }

  async follow(call: WireCall, pending: WirePending): Promise<WireAnswer | CallNotApproved> {
    try {
      const answer = await this.#callTool(call, pending.requestState);
      if (answer.kind === 'deny' && answer.rule === 'approval.rejected') {
        return {
          kind: 'not_approved',
          approvalId: pending.approvalId,
          status: 'rejected',
          reason: answer.message,
        };
      }
      return answer;
    } catch (err) {
      if (err instanceof GatewayRequestError && err.code === String(STATE_EXPIRED))
        return {
          kind: 'not_approved',
          approvalId: pending.approvalId,
          status: 'expired',
          reason: null,
        };
      if (err instanceof GatewayRequestError && err.code === String(STATE_REPLAYED))
        return {
          kind: 'not_approved',
          approvalId: pending.approvalId,
          status: 'withdrawn',
          reason: err.message,
        };
      throw err;
    }
  }

  onListChanged(listener: () => void): void {
    this.#listeners.push(listener);
  }

  async close(): Promise<void> {
    const c = this.#client;
    this.#client = null;
    await c?.close().catch(() => undefined);
  }

  async #callTool(call: WireCall, requestState: string | null): Promise<WireAnswer> {
    const params = {
      name: call.name,
      arguments: call.args,
      // This client follows a pending approval itself (`wait()`): answered at once, not held.
      _meta: { [APPROVAL_WAIT]: 0, ...(this.#run !== null ? { [RUN]: this.#run } : {}) },
      ...(requestState !== null ? { requestState } : {}),
    };
    // A tools/call that may have reached the gateway is not sent again (no idempotency key here).
    const raw = (await this.#send(
      (c) =>
        c.callTool(
          params as never,
          {
            allowInputRequired: true,
            ...this.#requestOptions(call.signal),
          } as never,
        ),
      false,
      call.signal,
    )) as unknown as RawResult;
    const meta = record(raw._meta);
    if (typeof meta[RUN] === 'string') this.#run = meta[RUN];
    if (raw.resultType === 'input_required') {
      const approval = record(meta[APPROVAL]);
      return {
        kind: 'pending_approval',
        approvalId: String(approval.approval_id ?? ''),
        callId: typeof approval.call_id === 'string' ? approval.call_id : '',
        rendered: (approval.rendered ?? null) as RenderedCall | null,
        message: typeof approval.message === 'string' ? approval.message : 'waiting for approval',
        requestState: raw.requestState ?? null,
      };
    }
    const decision = record(meta[DECISION]);
    if (raw.isError === true || decision.kind === 'deny') {
      if (decision.kind === 'pending_approval') {
        // A 2025-era answer shape; a 2026-07-28 gateway answers input_required instead.
        return {
          kind: 'pending_approval',
          approvalId: String(decision.approval_id ?? ''),
          callId: String(decision.call_id ?? ''),
          rendered: (decision.rendered ?? null) as RenderedCall | null,
          message: String(decision.message ?? ''),
          requestState: null,
        };
      }
      const text = raw.content?.find((c) => c.type === 'text')?.text ?? '';
      return {
        kind: 'deny',
        code: (typeof decision.code === 'string' ? decision.code : 'EXECUTION_FAILED') as ErrorCode,
        message: typeof decision.message === 'string' ? decision.message : text,
        rule: typeof decision.rule === 'string' ? decision.rule : null,
        callId: typeof decision.call_id === 'string' ? decision.call_id : null,
        details: record(decision.details),
      };
    }
    return {
      kind: 'allow',
      callId: String(decision.call_id ?? ''),
      tool: String(decision.tool ?? call.name),
      version: String(decision.version ?? ''),
      output: raw.structuredContent ?? raw.content ?? null,
      warnings: Array.isArray(decision.warnings) ? decision.warnings : [],
      idempotencyKey: null,
    };
  }

  #requestOptions(signal: AbortSignal | undefined) {
    return {
      timeout: this.#options.requestTimeoutMs ?? 30_000,
      ...(signal ? { signal } : {}),
    };
  }

  /**
   * One request over the connection (connecting first if needed), with the bounded retries:
   * `resend` says whether a request that may have reached the gateway may be sent again.
   */
  async #send<T>(
    request: (c: Client) => Promise<T>,
    resend: boolean,
    signal: AbortSignal | undefined,
  ): Promise<T> {
    return withRetries(
      this.#options.retry,
      null,
      async () => {
        let connected = false;
        try {
          const c = await this.#connected(signal);
          connected = true;
          return { kind: 'done' as const, value: await request(c) };
        } catch (err) {
          if (signal?.aborted || err instanceof McpClientMissingError) throw err;
          const mod = this.#mod;
          if (mod !== null && err instanceof mod.ProtocolError) {
            const data = record(err.data);
            throw new GatewayRequestError(
              0,
              String(err.code),
              err.message,
              typeof data.code === 'string' ? data : {},
            );
          }
          // The connection is dropped: the next attempt connects again (stateless, nothing lost).
          await this.close();
          const code = causeCode(err) ?? 'ENETWORK';
          const cause: UnavailableCause = {
            kind: 'network',
            code,
            message: err instanceof Error ? err.message : String(err),
          };
          const refused = code === 'ECONNREFUSED' || !connected;
          if (!resend && !refused) {
            return {
              kind: 'retry' as const,
              cause,
              retryAfterMs: null,
              mayHaveRun: true,
              stop: true,
            };
          }
          return { kind: 'retry' as const, cause, retryAfterMs: null, mayHaveRun: !refused };
        }
      },
      signal,
    );
  }

  async #connected(signal: AbortSignal | undefined): Promise<Client> {
    if (this.#client !== null) return this.#client;
    this.#connecting ??= this.#connect(signal).finally(() => {
      this.#connecting = null;
    });
    return this.#connecting;
  }

  async #connect(signal: AbortSignal | undefined): Promise<Client> {
    // Loaded here, not at the top: an agent on REST never needs the MCP SDK installed.
    try {
      this.#mod ??= await import('@modelcontextprotocol/client');
    } catch (err) {
      throw new McpClientMissingError(err);
    }
    const { Client: McpClient, StreamableHTTPClientTransport } = this.#mod;
    const client = new McpClient(
      { name: 'toolgate-client', version: '1' },
      {
        versionNegotiation: { mode: { pin: MODERN } },
        inputRequired: { autoFulfill: false },
        listChanged: {
          tools: {
            autoRefresh: false,
            debounceMs: 0,
            onChanged: () => {
              for (const listener of this.#listeners) listener();
            },
          },
        },
      },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(String(this.#options.url)), {
        requestInit: { headers: { authorization: `Bearer ${this.#options.token}` } },
      }),
      this.#requestOptions(signal),
    );
    this.#client = client;
    return client;
  }
}
