/**
 * @module Approving a call, for one call or with a bounded scope, and revoking a scope
 * (docs/operators-and-approvals.md, "Scoped approvals"). Whoever decides is the request's
 * authenticated operator; a body naming an approver is refused (docs/architecture.md §6).
 */
import type { FastifyInstance } from 'fastify';
import type { AdminApi } from '../../../api/index.js';
import { operatorOf } from '../request-actor.js';
import { described, documented, totpCode } from '../wire-schemas.js';
import { idParams, refuseStatedApprover, statedApprover } from './approval-body.js';

/** A reviewer's scope: up to `calls` calls, an optional amount, until a time. */
const scopeBody = {
  type: 'object',
  additionalProperties: false,
  required: ['calls', 'until'],
  description:
    'Approve a bounded scope instead of one call: later calls of the same principal, run, tool version and destination values run without waiting, up to `calls` (this one included), `amount_cents` spent and `until`. Needs the TOTP; refused (`APPROVAL_SCOPE_REFUSED`) for irreversible, permission-changing, out-of-band or escalated calls.',
  properties: {
    calls: { type: 'integer', minimum: 2, maximum: 100 },
    amount_cents: { type: 'integer', minimum: 0 },
    until: { type: 'string', format: 'date-time', maxLength: 40 },
  },
} as const;

interface ApproveBody {
  totp?: string;
  reason?: string;
  scope?: { calls: number; amount_cents?: number; until: string };
}

export function approvalDecisionRoutes(app: FastifyInstance, admin: AdminApi): void {
  app.post(
    '/v1/approvals/:id/approve',
    {
      config: { action: 'approvals.decide' },
      schema: {
        ...documented('approveApproval', ['approvals']),
        summary:
          'Approve: the agent retrying exactly this call may run it once, or — with `scope` — the calls the scope covers (TOTP when the tool needs a second factor, and for every scope)',
        params: idParams,
        body: {
          type: ['object', 'null'],
          additionalProperties: false,
          properties: {
            approver: statedApprover,
            totp: totpCode("The approver's current code, where the call needs a step-up"),
            reason: { type: 'string', maxLength: 2000 },
            scope: scopeBody,
          },
        },
        response: described(200, 'The approval as decided', 400, 401, 403, 404, 409, 429),
      },
    },
    async (req) => {
      refuseStatedApprover(req.body);
      const body = (req.body ?? {}) as ApproveBody;
      return admin.approvals.approve((req.params as { id: string }).id, operatorOf(req), {
        ...(body.totp !== undefined ? { totp: body.totp } : {}),
        ...(body.reason !== undefined ? { reason: body.reason } : {}),
        ...(body.scope !== undefined ? { scope: body.scope } : {}),
        via: 'rest',
      });
    },
  );

  app.post(
    '/v1/approvals/:id/revoke-scope',
    {
      config: { action: 'approvals.decide' },
      schema: {
        ...documented('revokeApprovalScope', ['approvals']),
        summary:
          'Revoke the scope an approval was given with: the next call it would have covered waits again (audited `approval.scope_revoked`)',
        params: idParams,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['reason'],
          properties: { reason: { type: 'string', minLength: 1, maxLength: 2000 } },
        },
        response: described(200, 'The approval with its revoked scope', 400, 401, 403, 404, 409),
      },
    },
    async (req) =>
      admin.approvals.revokeScope(
        (req.params as { id: string }).id,
        operatorOf(req),
        (req.body as { reason: string }).reason,
        'rest',
      ),
  );
}
