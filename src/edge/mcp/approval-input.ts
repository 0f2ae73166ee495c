/**
 * @module Approvals as multi round-trip requests (MCP 2026-07-28, docs/architecture.md §6). A
 * call waiting for approval is answered with an `InputRequiredResult` whose sealed
 * `requestState` binds principal, run, tool and version, canonical-argument hash, approval and
 * expiry; the client retries the same call with it on a new request id. Here: building that
 * result, and turning an echoed state into the approval the gate must use — or refusing it when
 * it is not this gateway's, has expired, or belongs to another principal or run.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  type InputRequiredResult,
  inputRequired,
} from '@modelcontextprotocol/server';
import type { AgentApi } from '../../api/index.js';
import { type AgentPrincipal, ToolgateError } from '../../core/index.js';
import type { BoundApproval, GateDecision } from '../../gate/index.js';
import { whereDecided } from './approval-hold.js';

/** The `_meta` key of an input-required result: which approval the call waits for. */
export const APPROVAL_META_KEY = 'io.toolgate/approval';

type Pending = Extract<GateDecision, { kind: 'pending_approval' }>;

/** Whether the request's envelope declares form elicitation (the person can be told). */
export function canElicit(envelope: unknown): boolean {
  const caps = (envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY];
  const elicitation = (caps as Record<string, unknown> | undefined)?.elicitation;
  if (typeof elicitation !== 'object' || elicitation === null) return false;
  // `{}` means form mode (the spec's default); otherwise form must be named.
  const modes = Object.keys(elicitation);
  return modes.length === 0 || modes.includes('form');
}

/**
 * The answer to a call that waits: a fresh sealed state, the approval in `_meta`, and — on the
 * first round only, when the client can show one — an elicitation telling the person which
 * approval to have decided and where. Nothing the person answers approves anything (approvals
 * are decided only by an operator on the admin side); later rounds carry the state alone, so a
 * polling client does not ask the person again.
 */
export function approvalInputRequired(
  agent: Pick<AgentApi, 'requestStates'>,
  decision: Pending,
  principal: AgentPrincipal,
  run: string,
  options: { firstRound: boolean; elicit: boolean; round: number },
): InputRequiredResult {
  const requestState = agent.requestStates.seal({
    agentId: principal.agentId,
    userId: principal.user?.id ?? null,
    credential: principal.credential ?? null,
    run,
    toolId: decision.rendered.tool,
    toolVersion: decision.rendered.version,
    argsHash: decision.argsHash,
    approvalId: decision.approvalId,
    round: options.round,
  });
  const message =
    `${decision.message}. Approval ${decision.approvalId} for ${decision.rendered.tool} ` +
    `${decision.rendered.version} waits: ${whereDecided(decision.approvalId)}. ` +
    'Nothing answered here approves it.';
  const result = inputRequired({
    requestState,
    ...(options.firstRound && options.elicit
      ? {
          inputRequests: {
            approval: inputRequired.elicit({
              message,
              requestedSchema: { type: 'object', properties: {} },
            }),
          },
        }
      : {}),
  });
  return {
    ...result,
    _meta: {
      [APPROVAL_META_KEY]: {
        approval_id: decision.approvalId,
        call_id: decision.callId,
        status: 'pending',
        message,
      },
    },
  };
}

function mismatch(reason: string): ToolgateError<'REQUEST_STATE_MISMATCH'> {
  return new ToolgateError(
    'REQUEST_STATE_MISMATCH',
    'this requestState was sealed for another principal or run; nothing ran',
    { reason },
  );
}

/**
 * The approval an echoed state names, once it verified and belongs to this principal and run;
 * and the run it was sealed in (a retry without a handle continues that run, so a client that
 * reconnected completes its approval). Throws REQUEST_STATE_INVALID / _EXPIRED / _MISMATCH; never
 * returns for a state of anyone else.
 */
export function boundApprovalOf(
  agent: Pick<AgentApi, 'requestStates'>,
  state: string,
  principal: AgentPrincipal,
  handle: string | undefined,
): { readonly run: string; readonly round: number; readonly approval: BoundApproval } {
  const claims = agent.requestStates.open(state);
  if (
    claims.agentId !== principal.agentId ||
    claims.userId !== (principal.user?.id ?? null) ||
    claims.credential !== (principal.credential ?? null)
  )
    throw mismatch('principal');
  if (handle !== undefined && handle !== claims.run) throw mismatch('run');
  return {
    run: claims.run,
    round: claims.round ?? 0,
    approval: {
      approvalId: claims.approvalId,
      toolId: claims.toolId,
      toolVersion: claims.toolVersion,
      argsHash: claims.argsHash,
      via: 'request_state',
    },
  };
}
