/**
 * @module Operator accounts over REST: admins create, list, change and disable accounts and
 * manage anyone's tokens; every operator reads who they are and manages their own personal
 * tokens. Issuing a token for oneself needs proof beyond a token: the account's password and
 * second factor in the body (a token alone never mints another). Every change is recorded as
 * the operator of the request.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AdminApi } from '../../../api/index.js';
import { ToolgateError } from '../../../core/index.js';
import {
  MAX_TOKEN_DAYS,
  MIN_TOKEN_DAYS,
  OPERATOR_ROLES,
  type Operator,
  type OperatorRole,
} from '../../../domain/operators/index.js';
import { nextCursor, type PageQuery, pageQuery } from '../pagination.js';
import { operatorOf } from '../request-actor.js';
import { described, documented, errors, noContent, totpCode } from '../wire-schemas.js';

const tags = ['operators'];
const ADMIN = { action: 'administer' as const };

const roleList = {
  type: 'array',
  items: { type: 'string', enum: [...OPERATOR_ROLES] },
  minItems: 1,
  maxItems: OPERATOR_ROLES.length,
  uniqueItems: true,
} as const;
const teamList = {
  type: 'array',
  items: { type: 'string', maxLength: 63 },
  maxItems: 64,
} as const;

const operatorView = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    roles: { type: 'array', items: { type: 'string' } },
    teams: { type: 'array', items: { type: 'string' } },
    kind: { type: 'string', enum: ['local', 'oidc'] },
    disabled: { type: 'boolean' },
    has_password: { type: 'boolean' },
    email: { type: ['string', 'null'] },
    created_at: { type: 'string' },
    created_by: { type: 'string' },
    updated_at: { type: 'string' },
    set_up_by: {
      type: ['string', 'null'],
      description: 'Who last handed the account credentials or a deciding role',
    },
    confirmed: {
      type: 'boolean',
      description: 'Whether the account counts in a decision that needs two people',
    },
    confirmed_by: { type: ['string', 'null'] },
    confirmed_at: { type: ['string', 'null'] },
  },
} as const;

const tokenView = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    operator_id: { type: 'string' },
    name: { type: 'string' },
    roles: { type: 'array', items: { type: 'string' } },
    created_at: { type: 'string' },
    created_by: { type: 'string' },
    expires_at: { type: 'string' },
    revoked_at: { type: ['string', 'null'] },
  },
} as const;

const issuedToken = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    token: { type: 'string', description: 'The token (tgo_…); in this response only' },
    operator_id: { type: 'string' },
    roles: { type: 'array', items: { type: 'string' } },
    expires_at: { type: 'string' },
  },
} as const;

const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', maxLength: 63 } },
} as const;
const tokenIdProperty = { type: 'string', maxLength: 40 } as const;
/** The path of one of my tokens names the token only (`/v1/operators/me/tokens/:tokenId`). */
const myTokenParams = {
  type: 'object',
  required: ['tokenId'],
  properties: { tokenId: tokenIdProperty },
} as const;
const tokenParams = {
  type: 'object',
  required: ['id', 'tokenId'],
  properties: { id: idParams.properties.id, tokenId: tokenIdProperty },
} as const;

const tokenSpecProperties = {
  name: { type: 'string', minLength: 1, maxLength: 100 },
  roles: roleList,
  expires_in_days: { type: 'integer', minimum: MIN_TOKEN_DAYS, maximum: MAX_TOKEN_DAYS },
} as const;

interface TokenBody {
  name: string;
  roles?: OperatorRole[];
  expires_in_days: number;
  password?: string;
  totp?: string;
}

function tokenSpec(body: TokenBody, operatorId?: string) {
  return {
    name: body.name,
    expiresInDays: body.expires_in_days,
    ...(body.roles !== undefined ? { roles: body.roles } : {}),
    ...(operatorId !== undefined ? { operatorId } : {}),
  };
}

function whoAmI(op: Operator) {
  return {
    id: op.id,
    name: op.name,
    roles: op.roles,
    teams: op.teams,
    authenticated_by: op.authenticatedBy,
  };
}

const idOf = (req: FastifyRequest) => (req.params as { id: string }).id;

export function operatorRoutes(app: FastifyInstance, admin: AdminApi): void {
  app.get(
    '/v1/operators/me',
    {
      config: { action: 'operators.self' },
      schema: {
        ...documented('getMyOperator', tags),
        summary: 'Who the credential of this request belongs to, with its roles and teams',
        response: described(200, 'The operator, with roles and teams', 401),
      },
    },
    async (req) => whoAmI(operatorOf(req)),
  );

  app.get(
    '/v1/operators/me/tokens',
    {
      config: { action: 'operators.self' },
      schema: {
        ...documented('listMyTokens', tags),
        summary: 'My personal tokens (never the tokens themselves)',
        response: {
          200: { type: 'object', properties: { tokens: { type: 'array', items: tokenView } } },
          ...errors(401),
        },
      },
    },
    async (req) => ({ tokens: await admin.operators.tokens(operatorOf(req).id) }),
  );

  app.post(
    '/v1/operators/me/tokens',
    {
      config: { action: 'operators.self' },
      schema: {
        ...documented('issueMyToken', tags),
        summary:
          'Issue a personal token for my account: needs my password and second factor in the body',
        description:
          'A personal token cannot mint another: the body carries the account password and a current TOTP code (single sign-on accounts get their tokens in the console). The token is in this response only.',
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['name', 'expires_in_days', 'password', 'totp'],
          properties: {
            ...tokenSpecProperties,
            password: { type: 'string', maxLength: 4096, writeOnly: true },
            totp: totpCode(),
          },
        },
        response: { 201: issuedToken, ...errors(400, 401, 403) },
      },
    },
    async (req, reply) => {
      const body = req.body as TokenBody & { password: string; totp: string };
      const caller = operatorOf(req);
      // The proof is a login of the caller's own account: the body cannot name anyone else.
      const proved = await admin.operators.loginLocal(caller.id, body.password, body.totp, 'rest');
      const issued = await admin.operators.issueToken(proved, tokenSpec(body), 'rest');
      return reply.status(201).send(issued);
    },
  );

  app.delete(
    '/v1/operators/me/tokens/:tokenId',
    {
      config: { action: 'operators.self' },
      schema: {
        ...documented('revokeMyToken', tags),
        summary: 'Revoke one of my tokens',
        params: myTokenParams,
        response: described(200, 'The token as revoked', 401, 404),
      },
    },
    async (req) => {
      const op = operatorOf(req);
      const { tokenId } = req.params as { tokenId: string };
      const mine = (await admin.operators.tokens(op.id)).some((t) => t.id === tokenId);
      if (!mine) throw new ToolgateError('NOT_FOUND', `no token ${tokenId}`, {});
      return admin.operators.revokeToken(op, tokenId, 'rest');
    },
  );

  app.get(
    '/v1/operators',
    {
      config: { action: 'state.read' },
      schema: {
        ...documented('listOperators', tags),
        summary: 'Operator accounts, by id',
        querystring: { type: 'object', additionalProperties: false, properties: { ...pageQuery } },
        response: {
          200: {
            type: 'object',
            properties: { operators: { type: 'array', items: operatorView }, ...nextCursor },
          },
          ...errors(400, 401, 403),
        },
      },
    },
    async (req) => {
      const { cursor, limit } = req.query as PageQuery;
      const page = await admin.operators.page({ cursor, limit });
      return { operators: page.items, next_cursor: page.next_cursor };
    },
  );

  app.post(
    '/v1/operators',
    {
      config: ADMIN,
      schema: {
        ...documented('createOperator', tags),
        summary: 'Create a local operator account (admins; the bootstrap token creates the first)',
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['id', 'roles'],
          properties: {
            id: { type: 'string', maxLength: 63 },
            name: { type: 'string', maxLength: 200 },
            roles: roleList,
            teams: teamList,
            password: { type: 'string', maxLength: 4096, writeOnly: true },
          },
        },
        response: { 201: operatorView, ...errors(400, 401, 403, 409) },
      },
    },
    async (req, reply) => {
      const body = req.body as {
        id: string;
        name?: string;
        roles: OperatorRole[];
        teams?: string[];
        password?: string;
      };
      const created = await admin.operators.create(operatorOf(req), body, 'rest');
      return reply.status(201).send(created);
    },
  );

  app.get(
    '/v1/operators/:id',
    {
      config: { action: 'state.read' },
      schema: {
        ...documented('getOperator', tags),
        summary: 'One operator account',
        params: idParams,
        response: { 200: operatorView, ...errors(401, 403, 404) },
      },
    },
    async (req) => admin.operators.get(idOf(req)),
  );

  app.patch(
    '/v1/operators/:id',
    {
      config: ADMIN,
      schema: {
        ...documented('updateOperator', tags),
        summary: 'Change roles, teams, name or the disabled flag of an account',
        params: idParams,
        body: {
          type: 'object',
          additionalProperties: false,
          minProperties: 1,
          properties: {
            name: { type: 'string', maxLength: 200 },
            roles: roleList,
            teams: teamList,
            disabled: { type: 'boolean' },
          },
        },
        response: { 200: operatorView, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) =>
      admin.operators.update(
        operatorOf(req),
        idOf(req),
        req.body as { name?: string; roles?: OperatorRole[]; teams?: string[]; disabled?: boolean },
        'rest',
      ),
  );

  app.post(
    '/v1/operators/:id/disable',
    {
      config: ADMIN,
      schema: {
        ...documented('disableOperator', tags),
        summary: 'Disable an account: its logins and tokens are refused from the next request on',
        params: idParams,
        response: { 200: operatorView, ...errors(401, 403, 404) },
      },
    },
    async (req) => admin.operators.update(operatorOf(req), idOf(req), { disabled: true }, 'rest'),
  );

  app.post(
    '/v1/operators/:id/confirm',
    {
      config: { action: 'operators.confirm' },
      schema: {
        ...documented('confirmOperator', tags),
        summary:
          'Confirm that an account is a person of its own, so it counts in a decision that needs two people',
        description:
          "The confirmer proves themself with their own TOTP; they must be an enabled, confirmed approver or admin, and neither the account nor who set it up (at a fresh install's genesis, its first admin may confirm the second person). The bootstrap admin token confirms nobody.",
        params: idParams,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['totp'],
          properties: { totp: totpCode() },
        },
        response: { 200: operatorView, ...errors(400, 401, 403, 404, 429) },
      },
    },
    async (req) =>
      admin.operators.confirm(
        operatorOf(req),
        idOf(req),
        (req.body as { totp: string }).totp,
        'rest',
      ),
  );

  app.put(
    '/v1/operators/:id/password',
    {
      config: ADMIN,
      schema: {
        ...documented('setOperatorPassword', tags),
        summary: 'Set the password of a local account',
        params: idParams,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['password'],
          properties: { password: { type: 'string', maxLength: 4096, writeOnly: true } },
        },
        response: noContent('The password is set', 400, 401, 403, 404),
      },
    },
    async (req, reply) => {
      const { password } = req.body as { password: string };
      await admin.operators.setPassword(operatorOf(req), idOf(req), password, 'rest');
      return reply.status(204).send();
    },
  );

  app.get(
    '/v1/operators/:id/tokens',
    {
      config: ADMIN,
      schema: {
        ...documented('listOperatorTokens', tags),
        summary: "An operator's personal tokens (never the tokens themselves)",
        params: idParams,
        response: {
          200: { type: 'object', properties: { tokens: { type: 'array', items: tokenView } } },
          ...errors(401, 403, 404),
        },
      },
    },
    async (req) => {
      await admin.operators.get(idOf(req));
      return { tokens: await admin.operators.tokens(idOf(req)) };
    },
  );

  app.post(
    '/v1/operators/:id/tokens',
    {
      config: ADMIN,
      schema: {
        ...documented('issueOperatorToken', tags),
        summary: 'Issue a personal token for another operator (admins); in this response only',
        params: idParams,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['name', 'expires_in_days'],
          properties: tokenSpecProperties,
        },
        response: { 201: issuedToken, ...errors(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      const issued = await admin.operators.issueToken(
        operatorOf(req),
        tokenSpec(req.body as TokenBody, idOf(req)),
        'rest',
      );
      return reply.status(201).send(issued);
    },
  );

  app.delete(
    '/v1/operators/:id/tokens/:tokenId',
    {
      config: ADMIN,
      schema: {
        ...documented('revokeOperatorToken', tags),
        summary: "Revoke an operator's token",
        params: tokenParams,
        response: described(200, 'The token as revoked', 401, 403, 404),
      },
    },
    async (req) => {
      const { id, tokenId } = req.params as { id: string; tokenId: string };
      const theirs = (await admin.operators.tokens(id)).some((t) => t.id === tokenId);
      if (!theirs)
        throw new ToolgateError('NOT_FOUND', `no token ${tokenId} of operator ${id}`, {});
      return admin.operators.revokeToken(operatorOf(req), tokenId, 'rest');
    },
  );
}
