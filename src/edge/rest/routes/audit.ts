/** @module Admin routes of the audit log: the latest signed checkpoint and RFC 9162 proofs. */
import type { FastifyInstance } from 'fastify';
import type { AdminApi } from '../../../api/index.js';
import { documented, errors } from '../wire-schemas.js';

const hex = { type: 'string', pattern: '^[0-9a-f]{64}$' } as const;

export function auditRoutes(app: FastifyInstance, admin: AdminApi): void {
  app.get(
    '/v1/audit/checkpoint',
    {
      config: { action: 'state.read' },
      schema: {
        ...documented('getAuditCheckpoint', ['audit']),
        summary: 'The latest signed checkpoint (C2SP tlog-checkpoint signed note) and its key',
        response: {
          200: {
            type: 'object',
            properties: {
              checkpoint: {
                type: ['object', 'null'],
                properties: {
                  treeSize: { type: 'integer' },
                  rootHash: { type: 'string' },
                  note: { type: 'string' },
                  at: { type: 'string' },
                },
              },
              origin: { type: 'string' },
              verifierKey: { type: ['string', 'null'] },
            },
          },
          ...errors(401),
        },
      },
    },
    async () => ({
      checkpoint: await admin.audit.latestCheckpoint(),
      origin: admin.audit.origin,
      verifierKey: admin.audit.verifierKey,
    }),
  );

  app.get(
    '/v1/audit/proof/inclusion',
    {
      config: { action: 'state.read' },
      schema: {
        ...documented('getInclusionProof', ['audit']),
        summary:
          'RFC 9162 inclusion proof of one record (by seq or leaf hash) in the tree of a size',
        description:
          'size defaults to the latest checkpoint. Leaf index = seq - 1; hashes are lowercase hex.',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            seq: { type: 'integer', minimum: 1 },
            hash: hex,
            size: { type: 'integer', minimum: 1 },
          },
        },
        response: {
          200: {
            type: 'object',
            properties: {
              seq: { type: 'integer' },
              leafIndex: { type: 'integer' },
              treeSize: { type: 'integer' },
              leafHash: { type: 'string' },
              rootHash: { type: 'string' },
              proof: { type: 'array', items: { type: 'string' } },
            },
          },
          ...errors(400, 401, 404, 500),
        },
      },
    },
    async (req) => {
      const q = req.query as { seq?: number; hash?: string; size?: number };
      return admin.audit.inclusionProof(
        q.hash !== undefined ? { hash: q.hash } : q.seq !== undefined ? { seq: q.seq } : {},
        q.size,
      );
    },
  );

  app.get(
    '/v1/audit/proof/consistency',
    {
      config: { action: 'state.read' },
      schema: {
        ...documented('getConsistencyProof', ['audit']),
        summary:
          'RFC 9162 consistency proof between two tree sizes (to defaults to the latest checkpoint)',
        querystring: {
          type: 'object',
          additionalProperties: false,
          required: ['from'],
          properties: {
            from: { type: 'integer', minimum: 1 },
            to: { type: 'integer', minimum: 1 },
          },
        },
        response: {
          200: {
            type: 'object',
            properties: {
              from: { type: 'integer' },
              to: { type: 'integer' },
              fromRoot: { type: 'string' },
              toRoot: { type: 'string' },
              proof: { type: 'array', items: { type: 'string' } },
            },
          },
          ...errors(400, 401, 500),
        },
      },
    },
    async (req) => {
      const q = req.query as { from: number; to?: number };
      return admin.audit.consistencyProof(q.from, q.to);
    },
  );
}
