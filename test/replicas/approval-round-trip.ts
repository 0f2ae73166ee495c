/**
 * @module An approval round trip as a 2026-07-28 client (the v2 SDK client) lives it, whichever
 * shape the gateway answers a call that needs approval with: a tool result with `isError` and the
 * decision code `APPROVAL_REQUIRED` (the client retries the same call once approved), or an
 * `InputRequiredResult` (`resultType: "input_required"`) whose opaque `requestState` the client
 * echoes on the retry, with an answer to each input request. Between the two, an approver decides
 * the pending approval over REST with a TOTP code, as an operator does.
 */
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/client';

export type CallResult = {
  readonly _meta?: Record<string, unknown>;
  readonly isError?: boolean;
  readonly resultType?: string;
  readonly requestState?: string;
  readonly inputRequests?: Record<string, unknown>;
  readonly [k: string]: unknown;
};

export interface ToolCall {
  readonly name: string;
  readonly arguments: Record<string, unknown>;
  readonly _meta?: Record<string, unknown>;
}

export type Pending =
  | { readonly shape: 'error_result'; readonly approvalId: string | null }
  | {
      readonly shape: 'input_required';
      readonly approvalId: string | null;
      readonly requestState: string;
      readonly inputRequests: Record<string, unknown>;
    };

const DECISION = 'toolgate/decision';
const APPROVAL_ID = /\bapr_[A-Za-z0-9_-]+/;

export function decisionOf(result: unknown): Record<string, unknown> {
  return ((result as CallResult)._meta?.[DECISION] ?? {}) as Record<string, unknown>;
}

/** Calls a tool and hands back an `input_required` answer instead of fulfilling it itself. */
export async function callManual(client: Client, call: ToolCall): Promise<CallResult> {
  return (await client.callTool(
    call as Parameters<Client['callTool']>[0],
    {
      allowInputRequired: true,
    } as Parameters<Client['callTool']>[1],
  )) as unknown as CallResult;
}

/** The pending approval a call's answer names, in either shape; null when it is not one. */
export function pendingOf(result: CallResult): Pending | null {
  if (result.resultType === 'input_required') {
    assert.equal(typeof result.requestState, 'string', 'an InputRequiredResult carries state');
    const text = JSON.stringify(result.inputRequests ?? {});
    return {
      shape: 'input_required',
      approvalId: APPROVAL_ID.exec(text)?.[0] ?? null,
      requestState: result.requestState as string,
      inputRequests: result.inputRequests ?? {},
    };
  }
  const decision = decisionOf(result);
  if (result.isError === true && decision.code === 'APPROVAL_REQUIRED') {
    const id = decision.approval_id;
    return { shape: 'error_result', approvalId: typeof id === 'string' ? id : null };
  }
  return null;
}

/**
 * The retry once an operator decided: the same call, and for an InputRequiredResult its state
 * echoed byte for byte with an accepting answer to each input request, on a fresh request id.
 */
export function retryOf(call: ToolCall, pending: Pending): ToolCall {
  if (pending.shape === 'error_result') return call;
  const inputResponses = Object.fromEntries(
    Object.keys(pending.inputRequests).map((key) => [key, { action: 'accept', content: {} }]),
  );
  return {
    ...call,
    requestState: pending.requestState,
    inputResponses,
  } as ToolCall;
}

export interface RoundTrip {
  readonly first: CallResult;
  readonly pending: Pending;
  readonly approvalId: string;
  readonly retried: CallResult;
  /** The same retry sent again: it must not run the tool a second time. */
  readonly replayed: CallResult;
}

/**
 * Call → pending → `approve(approvalId)` → retry → the same retry again. `findApproval` names the
 * pending approval when the answer does not (an InputRequiredResult may keep it in its sealed
 * state only).
 */
export async function approvalRoundTrip(
  client: Client,
  call: ToolCall,
  approve: (approvalId: string) => Promise<void>,
  findApproval: () => Promise<string>,
): Promise<RoundTrip> {
  const first = await callManual(client, call);
  const pending = pendingOf(first);
  assert.ok(pending, `the call waits for approval: ${JSON.stringify(first)}`);
  const approvalId = pending.approvalId ?? (await findApproval());
  await approve(approvalId);
  const retry = retryOf(call, pending);
  const retried = await callManual(client, retry);
  const replayed = await callManual(client, retry).catch(
    (err: Error) => ({ isError: true, replayError: err.message }) as CallResult,
  );
  return { first, pending, approvalId, retried, replayed };
}
