/**
 * @module The client SDK over the gateway's REST agent routes (docs/architecture.md §6): a session
 * opened once, its tools listed with `If-None-Match` against the held ETag, calls posted with an
 * `idempotency_key` every attempt repeats, and a pending approval followed through
 * `GET /v1/sessions/:id/approvals/:approval`. Only `fetch`: nothing of the server is loaded.
 */

import type { ErrorCode, RenderedCall } from '../core/index.js';
import type { CallDenied, CallNotApproved } from './call-result.js';
import { CallOutcomeUnknownError, GatewayRequestError } from './client-errors.js';
import type { ToolDescriptor } from './definitions-cache.js';
import {
  type Attempt,
  networkCause,
  neverSent,
  type RetryPolicy,
  retryAfterMs,
  sleep,
  withRetries,
} from './retry-policy.js';
import type {
  KeyOutcome,
  ListAnswer,
  Transport,
  WireAnswer,
  WireCall,
  WirePending,
} from './transport.js';

export interface RestTransportOptions {
  /** The gateway's base URL, e.g. `http://127.0.0.1:8080`. */
  readonly url: string | URL;
  /** The agent's API key (or JWT). */
  readonly token: string;
  /** An open session to use; without it one is opened on first use. */
  readonly sessionId?: string;
  /** For the session the SDK opens. */
  readonly session?: { readonly onBehalfOf?: string; readonly runId?: string };
  readonly retry?: RetryPolicy;
  /** Per attempt; default 30 s. */
  readonly requestTimeoutMs?: number;
  /**
   * How long a call told that its first attempt under the same key has not finished waits for
   * that attempt's outcome before throwing `CallOutcomeUnknownError`; default 2 minutes.
   */
  readonly outcomeWaitMs?: number;
}

/** The gateway's rules for a key whose first call has no outcome yet (or never will). */
const IN_PROGRESS = 'idempotency.in_progress';
const OUTCOME_UNKNOWN = 'idempotency.outcome_unknown';
/** How many times a call is sent again once its first attempt's outcome is known. */
const MAX_RESENDS = 3;

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Record<string, unknown> | null;
}

function record(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : {};
}

/** A refusal body `{ code, message, details }` as a denial. */
function denialOf(body: Record<string, unknown> | null, status: number): CallDenied {
  const details = record(body?.details);
  return {
    kind: 'deny',
    code: (typeof body?.code === 'string' ? body.code : 'INTERNAL') as ErrorCode,
    message: typeof body?.message === 'string' ? body.message : `HTTP ${status}`,
    rule: typeof details.rule === 'string' ? details.rule : null,
    callId: typeof details.call_id === 'string' ? details.call_id : null,
    details,
  };
}

/** A decision of the gate carries its call id: it is an answer, never retried. */
function isDecision(body: Record<string, unknown> | null): boolean {
  return typeof record(body?.details).call_id === 'string';
}

export class RestTransport implements Transport {
  readonly #base: string;
  readonly #token: string;
  readonly #options: RestTransportOptions;
  #sessionId: string | null;
  #opening: Promise<string> | null = null;

  constructor(options: RestTransportOptions) {
    this.#base = String(options.url).replace(/\/+$/, '');
    this.#token = options.token;
    this.#options = options;
    this.#sessionId = options.sessionId ?? null;
  }

  /** The session calls go to (opened on first use when none was given). */
  async sessionId(signal?: AbortSignal): Promise<string> {
    if (this.#sessionId !== null) return this.#sessionId;
    this.#opening ??= this.#open(signal).finally(() => {
      this.#opening = null;
    });
    return this.#opening;
  }

  async #open(signal: AbortSignal | undefined): Promise<string> {
    const s = this.#options.session;
    const body = {
      ...(s?.onBehalfOf !== undefined ? { on_behalf_of: s.onBehalfOf } : {}),
      ...(s?.runId !== undefined ? { run_id: s.runId } : {}),
    };
    const answer = await this.#request('POST', '/v1/sessions', body, {}, null, signal);
    if (answer.status !== 201 || typeof answer.body?.id !== 'string') throw refusal(answer);
    this.#sessionId = answer.body.id;
    return answer.body.id;
  }

  async listTools(revision: string | null, signal?: AbortSignal): Promise<ListAnswer> {
    const id = await this.sessionId(signal);
    const answer = await this.#request(
      'GET',
      `/v1/sessions/${encodeURIComponent(id)}/tools?format=mcp`,
      undefined,
      revision !== null ? { 'if-none-match': revision } : {},
      null,
      signal,
    );
    if (answer.status === 304) return { kind: 'unchanged' };
    if (answer.status !== 200 || !Array.isArray(answer.body?.tools)) throw refusal(answer);
    return {
      kind: 'tools',
      tools: answer.body.tools as ToolDescriptor[],
      revision: answer.headers.get('etag'),
    };
  }

  /**
   * Sends the call (the bounded retries carry one key). When the gateway says the first attempt
   * under the key has not finished — our own earlier attempt whose answer was lost, most often —
   * the SDK never reports that as a denial nor tells anyone to use a new key (that would run the
   * call twice): it waits for that attempt's outcome, then sends the call again under the same
   * key, which the gateway answers with the stored result or failure (or runs, if the first
   * attempt was refused before running and gave the key back). No outcome within `outcomeWaitMs`,
   * or one the gateway could not record, is `CallOutcomeUnknownError`.
   */
  async call(call: WireCall): Promise<WireAnswer> {
    let answer = await this.#send(call);
    for (let resends = 0; ; resends++) {
      if (answer.kind !== 'deny' || answer.code !== 'IDEMPOTENCY_CONFLICT') return answer;
      if (answer.rule !== IN_PROGRESS && answer.rule !== OUTCOME_UNKNOWN) return answer;
      if (answer.rule === OUTCOME_UNKNOWN)
        throw new CallOutcomeUnknownError(call.name, call.idempotencyKey, 'unknown', null);
      const outcome = await this.#awaitOutcome(call);
      if (outcome !== null && (outcome.state === 'running' || outcome.state === 'unknown'))
        throw new CallOutcomeUnknownError(
          call.name,
          call.idempotencyKey,
          outcome.state,
          outcome.callId,
        );
      if (resends >= MAX_RESENDS)
        throw new CallOutcomeUnknownError(call.name, call.idempotencyKey, 'running', null);
      answer = await this.#send(call);
    }
  }

  /** Polls the key's outcome until it is no longer running, or the wait is over. */
  async #awaitOutcome(call: WireCall): Promise<KeyOutcome | null> {
    const deadline = Date.now() + (this.#options.outcomeWaitMs ?? 120_000);
    let pause = 50;
    for (;;) {
      const outcome = await this.outcome(call.name, call.idempotencyKey, call.signal);
      if (outcome === null || outcome.state !== 'running') return outcome;
      const left = deadline - Date.now();
      if (left <= 0) return outcome;
      await sleep(Math.min(pause, left), call.signal);
      pause = Math.min(pause * 2, 1000);
    }
  }

  async outcome(tool: string, key: string, signal?: AbortSignal): Promise<KeyOutcome | null> {
    const id = await this.sessionId(signal);
    const answer = await this.#request(
      'GET',
      `/v1/sessions/${encodeURIComponent(id)}/idempotency/${encodeURIComponent(key)}?tool=${encodeURIComponent(tool)}`,
      undefined,
      {},
      null,
      signal,
    );
    const b = answer.body;
    if (answer.status === 404 && b?.code === 'IDEMPOTENCY_KEY_NOT_FOUND') return null;
    if (answer.status !== 200 || b === null) throw refusal(answer);
    const callId = String(b.call_id);
    switch (b.state) {
      case 'succeeded':
        return { state: 'succeeded', callId, output: b.output, trust: b.trust ?? null };
      case 'failed': {
        const e = record(b.error);
        return {
          state: 'failed',
          callId,
          code: String(e.code),
          rule: String(e.rule),
          message: String(e.message),
        };
      }
      case 'running':
      case 'unknown':
        return { state: b.state, callId };
      default:
        throw new GatewayRequestError(200, 'INTERNAL', `unexpected outcome state ${b.state}`, {});
    }
  }

  async #send(call: WireCall): Promise<WireAnswer> {
    const id = await this.sessionId(call.signal);
    const answer = await this.#request(
      'POST',
      `/v1/sessions/${encodeURIComponent(id)}/calls`,
      { tool: call.name, arguments: call.args, idempotency_key: call.idempotencyKey },
      {},
      call.idempotencyKey,
      call.signal,
    );
    const b = answer.body;
    if (answer.status === 200 && b?.kind === 'allow') {
      return {
        kind: 'allow',
        callId: String(b.call_id),
        tool: String(b.tool),
        version: String(b.version),
        output: b.output,
        warnings: Array.isArray(b.warnings) ? b.warnings : [],
        idempotencyKey: call.idempotencyKey,
      };
    }
    if (answer.status === 202 && b?.kind === 'pending_approval') {
      return {
        kind: 'pending_approval',
        approvalId: String(b.approval_id),
        callId: String(b.call_id),
        rendered: (b.rendered ?? null) as RenderedCall | null,
        message: typeof b.message === 'string' ? b.message : '',
        requestState: null,
      };
    }
    return denialOf(b, answer.status);
  }

  async follow(call: WireCall, pending: WirePending): Promise<WireAnswer | CallNotApproved> {
    const id = await this.sessionId(call.signal);
    const answer = await this.#request(
      'GET',
      `/v1/sessions/${encodeURIComponent(id)}/approvals/${encodeURIComponent(pending.approvalId)}`,
      undefined,
      {},
      null,
      call.signal,
    );
    if (answer.status !== 200) throw refusal(answer);
    const status = answer.body?.status;
    switch (status) {
      case 'pending':
        return pending;
      case 'approved':
      case 'consumed':
        // Consumed: our own earlier attempt may have used it; the same key replays its result.
        return this.call(call);
      case 'rejected':
      case 'expired':
      case 'withdrawn':
        return {
          kind: 'not_approved',
          approvalId: pending.approvalId,
          status,
          reason: typeof answer.body?.reason === 'string' ? answer.body.reason : null,
        };
      default:
        throw new GatewayRequestError(200, 'INTERNAL', `unexpected approval status ${status}`, {});
    }
  }

  onListChanged(): void {
    // REST has no push: the ETag on every listing says when the set changed.
  }

  async close(): Promise<void> {
    // The session is left to expire: closing it would withdraw approvals other calls wait on.
  }

  /** One request with the bounded retries; answers whatever the gateway decided. */
  async #request(
    method: string,
    path: string,
    body: unknown,
    headers: Record<string, string>,
    idempotencyKey: string | null,
    signal: AbortSignal | undefined,
  ): Promise<Answer> {
    const timeout = this.#options.requestTimeoutMs ?? 30_000;
    return withRetries(
      this.#options.retry,
      idempotencyKey,
      async (): Promise<Attempt<Answer>> => {
        let res: Response;
        try {
          res = await fetch(`${this.#base}${path}`, {
            method,
            headers: {
              authorization: `Bearer ${this.#token}`,
              accept: 'application/json',
              ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
              ...headers,
            },
            ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
            signal: signal
              ? AbortSignal.any([signal, AbortSignal.timeout(timeout)])
              : AbortSignal.timeout(timeout),
          });
        } catch (err) {
          if (signal?.aborted) throw err;
          const cause = networkCause(err);
          return { kind: 'retry', cause, retryAfterMs: null, mayHaveRun: !neverSent(cause) };
        }
        let parsed: Record<string, unknown> | null = null;
        try {
          const text = await res.text();
          parsed = text === '' ? null : record(JSON.parse(text));
        } catch (err) {
          if (signal?.aborted) throw err;
          // The answer was cut off or is not JSON: the call may have run; the key keeps it once.
          const cause = networkCause(err);
          return { kind: 'retry', cause, retryAfterMs: null, mayHaveRun: true };
        }
        const answer: Answer = { status: res.status, headers: res.headers, body: parsed };
        const transient = res.status === 502 || res.status === 503 || res.status === 504;
        const throttled = res.status === 429 && res.headers.has('retry-after');
        if ((!transient && !throttled) || isDecision(parsed))
          return { kind: 'done', value: answer };
        return {
          kind: 'retry',
          cause: {
            kind: 'status',
            status: res.status,
            code: typeof parsed?.code === 'string' ? parsed.code : null,
          },
          retryAfterMs: retryAfterMs(res.headers.get('retry-after'), Date.now()),
          mayHaveRun: res.status !== 429,
          // A throttled caller out of retries is told so, as the gateway said it.
          ...(throttled ? { final: answer } : {}),
        };
      },
      signal,
    );
  }
}

function refusal(answer: Answer): GatewayRequestError {
  const d = denialOf(answer.body, answer.status);
  return new GatewayRequestError(answer.status, d.code, d.message, d.details);
}
