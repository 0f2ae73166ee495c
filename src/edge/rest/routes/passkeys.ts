/**
 * @module Admin routes for operators' passkeys and the decisions they signed
 * (docs/architecture.md §6, "Passkeys bound to the decision"): an operator's passkeys (never more
 * than their public facts), the removal of one (one's own under /me, or anyone's by an admin;
 * audited), the evidence of every passkey-signed decision and its check. Enrolment needs a browser (WebAuthn):
 * it is the console's Passkeys page.
 */
import type { FastifyInstance } from 'fastify';
import type { AdminApi } from '../../../api/index.js';
import { operatorOf } from '../request-actor.js';
import { described, documented } from '../wire-schemas.js';

const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', pattern: '^[A-Za-z0-9_.:@+-]{1,100}$' } },
} as const;

const credentialParams = {
  type: 'object',
  required: ['id', 'credential'],
  properties: {
    id: idParams.properties.id,
    credential: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,1400}$' },
  },
} as const;

const decisionQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    subject: { type: 'string', maxLength: 300 },
    rp_id: { type: 'string', maxLength: 253 },
    origin: { type: 'string', maxLength: 300 },
  },
} as const;

type DecisionQuery = { subject?: string; rp_id?: string; origin?: string };

export function passkeyRoutes(app: FastifyInstance, admin: AdminApi): void {
  app.get(
    '/v1/operators/:id/passkeys',
    {
      schema: {
        ...documented('listPasskeys', ['operators']),
        summary: "An operator's passkeys: name, credential id, when enrolled and last used",
        params: idParams,
        response: described(200, 'The passkeys', 401, 403),
      },
    },
    async (req) => ({ passkeys: await admin.passkeys.list((req.params as { id: string }).id) }),
  );

  // Anyone's passkey: an admin's act (a refusal is audited as every admin route's is).
  app.delete(
    '/v1/operators/:id/passkeys/:credential',
    {
      config: { action: 'administer' },
      schema: {
        ...documented('removePasskey', ['operators']),
        summary: "Remove one of an operator's passkeys (an admin)",
        params: credentialParams,
        response: described(200, 'The passkey is removed', 401, 403, 404),
      },
    },
    async (req) => {
      const { id, credential } = req.params as { id: string; credential: string };
      return admin.passkeys.remove(operatorOf(req), id, credential, 'rest');
    },
  );

  // One's own passkey: every operator, whatever the role.
  app.delete(
    '/v1/operators/me/passkeys/:credential',
    {
      config: { action: 'operators.self' },
      schema: {
        ...documented('removeMyPasskey', ['operators']),
        summary: 'Remove one of my passkeys',
        params: {
          type: 'object',
          required: ['credential'],
          properties: { credential: credentialParams.properties.credential },
        },
        response: described(200, 'The passkey is removed', 401, 404),
      },
    },
    async (req) => {
      const op = operatorOf(req);
      const { credential } = req.params as { credential: string };
      return admin.passkeys.remove(op, op.id, credential, 'rest');
    },
  );

  app.get(
    '/v1/decisions/verify',
    {
      config: { action: 'state.read' },
      schema: {
        ...documented('verifyDecisions', ['audit']),
        summary:
          "Check that each passkey-signed decision's credential signed exactly that decision (what `toolgate decisions verify` does)",
        querystring: decisionQuery,
        response: described(200, 'One proof per stored assertion', 401, 403),
      },
    },
    async (req) => {
      const q = req.query as DecisionQuery;
      return admin.decisions.verify({
        ...(q.subject !== undefined ? { subject: q.subject } : {}),
        ...(q.rp_id !== undefined ? { rpId: q.rp_id } : {}),
        ...(q.origin !== undefined ? { origin: q.origin } : {}),
      });
    },
  );

  app.get(
    '/v1/decisions/evidence',
    {
      config: { action: 'state.read' },
      schema: {
        ...documented('exportDecisionEvidence', ['audit']),
        summary:
          'The evidence of every passkey-signed decision, for an offline check (`toolgate decisions verify --file`)',
        querystring: decisionQuery,
        response: described(200, 'The evidence', 401, 403),
      },
    },
    async (req) => {
      const q = req.query as DecisionQuery;
      return {
        evidence: await admin.decisions.evidence(
          q.subject !== undefined ? { subject: q.subject } : {},
        ),
      };
    },
  );
}
