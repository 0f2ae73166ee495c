/**
 * The credential broker on every backend (C11): a tool gets only its own secret, in the
 * way its definition declares; a tool that names another tool's secret gets nothing; a tool
 * without credentials gets nothing; minted call tokens verify, carry the call's scope and
 * expire; injection targets that would steer the runtime are refused; and the value never lands
 * in the database, the events, or the logs.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { decodeJwt, errors as joseErrors } from 'jose';
import type { Actor } from '../../src/core/index.js';
import { checkToolDefinition, type ToolDefinition } from '../../src/domain/catalog/index.js';
import {
  MasterKey,
  redactSecrets,
  SECRET_MASK,
  verifyCallToken,
} from '../../src/domain/credentials/index.js';
import { buildServer } from '../../src/edge/rest/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { openStore } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { type Definition, validSendTool, validTool } from '../support/tools.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const STRIPE = 'sk_live_BrokerStripe_51HkQm2eZvKYlo2C';
const SIGNING = 'hs256-signing-key-for-payments-0123456789abcdef';
const SEARCH = 'search-api-key-7d3f0e1c2b';

function definition(d: Definition): ToolDefinition {
  const checked = checkToolDefinition(d);
  assert.ok(checked.ok, JSON.stringify(checked.ok ? null : checked.problems));
  return checked.definition;
}

const billing = definition(
  validTool({
    id: 'billing',
    name: 'billing',
    credentials: { secret: 'stripe', inject: 'env', as: 'STRIPE_API_KEY' },
  }),
);
/** Tool B names tool A's secret: it must not get it. */
const thief = definition(
  validTool({
    id: 'thief',
    name: 'thief',
    credentials: { secret: 'stripe', inject: 'env', as: 'STRIPE_API_KEY' },
  }),
);
const search = definition(
  validSendTool({
    id: 'search',
    name: 'search',
    credentials: { secret: 'search-key', inject: 'header', as: 'X-Api-Key' },
  }),
);
const payments = definition(
  validSendTool({
    id: 'payments',
    name: 'payments',
    egress: { mode: 'constrained', hosts: ['pay.example.com', 'pay-eu.example.com'] },
    runtime: {
      kind: 'http',
      base_url: 'https://pay.example.com',
      method: 'POST',
      path: '/v1/refund',
    },
    credentials: { secret: 'signing', inject: 'minted_jwt', as: 'Authorization' },
  }),
);
const mintedEnv = definition(
  validTool({
    id: 'ledger',
    name: 'ledger',
    credentials: { secret: 'signing', inject: 'minted_jwt', as: 'LEDGER_TOKEN' },
  }),
);
const plain = definition(validTool({ id: 'plain', name: 'plain' }));

const call = (
  tool: ToolDefinition,
  extra: Partial<{ environment: string; userId: string | null }> = {},
) => ({
  tool,
  userId: 'user-ana',
  agentId: 'support-bot',
  sessionId: 'sess-1',
  callId: `call-${tool.id}-${Math.random().toString(36).slice(2)}`,
  ...extra,
});

for (const backend of backends()) {
  describe(`credential broker on ${backend.name}`, () => {
    let tg: Gateway;
    let url: string;
    let drop: () => Promise<void>;
    const key = MasterKey.generate();
    let now = new Date('2026-06-01T10:00:00Z');

    before(async () => {
      const fresh = await backend.fresh();
      url = fresh.url;
      drop = fresh.drop;
      tg = await openGateway({ db: url, masterKey: key, clock: () => now });
      await tg.secrets.set({ toolId: 'billing', name: 'stripe' }, STRIPE, admin);
      await tg.secrets.set({ toolId: 'search', name: 'search-key' }, SEARCH, admin);
      await tg.secrets.set({ toolId: 'payments', name: 'signing' }, SIGNING, admin);
      await tg.secrets.set({ toolId: 'ledger', name: 'signing' }, SIGNING, admin);
      await tg.secrets.set(
        { toolId: 'billing', name: 'stripe', environment: 'staging' },
        'sk_test_StagingOnly_abcdef',
        admin,
      );
    });
    after(async () => {
      await tg.close();
      await drop();
    });

    test('a tool with inject env gets exactly its own secret under its variable', async () => {
      const creds = await tg.credentials.forCall(call(billing));
      assert.deepEqual(creds.env, { STRIPE_API_KEY: STRIPE });
      assert.deepEqual(creds.headers, {});
      assert.deepEqual(creds.redact, [STRIPE]);
      assert.deepEqual(creds.audience, []);
    });

    test('a tool with inject header gets it as that header, with its egress hosts as audience', async () => {
      const creds = await tg.credentials.forCall(call(search));
      assert.deepEqual(creds.headers, { 'X-Api-Key': SEARCH });
      assert.deepEqual(creds.env, {});
      assert.deepEqual(creds.audience, ['notify.example.com']);
    });

    test("a tool that names another tool's secret gets nothing (secrets are scoped to their tool)", async () => {
      await assert.rejects(tg.credentials.forCall(call(thief)), (err: Error) => {
        const e = err as Error & { code: string; details: Record<string, unknown> };
        assert.equal(e.code, 'CREDENTIAL_UNAVAILABLE');
        assert.equal(e.details.reason, 'missing');
        assert.equal(e.details.toolId, 'thief');
        assert.equal(JSON.stringify({ m: e.message, d: e.details }).includes(STRIPE), false);
        return true;
      });
      // Its neighbour, the owner, still gets it.
      assert.equal((await tg.credentials.forCall(call(billing))).env.STRIPE_API_KEY, STRIPE);
    });

    test('a tool without credentials gets nothing', async () => {
      const creds = await tg.credentials.forCall(call(plain));
      assert.deepEqual(creds, { env: {}, headers: {}, redact: [], audience: [] });
    });

    test('the environment picks the secret: staging calls get the staging value', async () => {
      const creds = await tg.credentials.forCall(call(billing, { environment: 'staging' }));
      assert.equal(creds.env.STRIPE_API_KEY, 'sk_test_StagingOnly_abcdef');
      await assert.rejects(tg.credentials.forCall(call(search, { environment: 'staging' })), {
        code: 'CREDENTIAL_UNAVAILABLE',
      });
    });

    test('minted_jwt: an HTTP tool gets a Bearer token, never the long-lived key', async () => {
      const c = call(payments);
      const creds = await tg.credentials.forCall(c);
      assert.deepEqual(Object.keys(creds.headers), ['Authorization']);
      const header = creds.headers.Authorization ?? '';
      assert.match(header, /^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
      assert.equal(JSON.stringify(creds.headers).includes(SIGNING), false);
      assert.deepEqual(creds.env, {});
      const token = header.slice('Bearer '.length);
      assert.ok(creds.redact.includes(token));
      assert.ok(creds.redact.includes(SIGNING));

      const claims = await verifyCallToken(token, SIGNING, { audience: 'pay.example.com', now });
      assert.equal(claims.iss, 'toolgate');
      assert.deepEqual(claims.aud, ['pay.example.com', 'pay-eu.example.com']);
      assert.equal(claims.sub, 'user-ana');
      assert.equal(claims.tool, 'payments');
      assert.equal(claims.jti, c.callId);
      assert.equal(claims.sid, 'sess-1');
      assert.equal(claims.agent, 'support-bot');
      const ttl = Number(claims.exp) - Number(claims.iat);
      assert.ok(ttl > 0 && ttl <= 300, `ttl ${ttl}`);
      assert.equal(decodeJwt(token).iat, Math.floor(now.getTime() / 1000));
    });

    test('a call token is refused after it expires, by another audience and under another key', async () => {
      const creds = await tg.credentials.forCall(call(payments));
      const token = (creds.headers.Authorization ?? '').slice('Bearer '.length);
      const later = new Date(now.getTime() + 301_000);
      await assert.rejects(
        verifyCallToken(token, SIGNING, { audience: 'pay.example.com', now: later }),
        joseErrors.JWTExpired,
      );
      await assert.rejects(
        verifyCallToken(token, SIGNING, { audience: 'evil.example.com', now }),
        joseErrors.JWTClaimValidationFailed,
      );
      await assert.rejects(
        verifyCallToken(token, `${SIGNING}-other`, { audience: 'pay.example.com', now }),
        joseErrors.JWSSignatureVerificationFailed,
      );
    });

    test('minted_jwt for a non-HTTP tool goes into its variable; audience is the tool id; subject the agent without a user', async () => {
      const creds = await tg.credentials.forCall(call(mintedEnv, { userId: null }));
      const token = creds.env.LEDGER_TOKEN ?? '';
      const claims = await verifyCallToken(token, SIGNING, { audience: 'ledger', now });
      assert.equal(claims.sub, 'agent:support-bot');
      assert.equal(claims.tool, 'ledger');
    });

    test('a signing secret shorter than 32 bytes is refused for minted tokens', async () => {
      await tg.secrets.rotate({ toolId: 'ledger', name: 'signing' }, 'too-short-key', admin);
      await assert.rejects(tg.credentials.forCall(call(mintedEnv)), (err: Error) => {
        assert.equal(
          (err as { details?: { reason?: string } }).details?.reason,
          'weak_signing_key',
        );
        assert.equal(err.message.includes('too-short-key'), false);
        return true;
      });
      await tg.secrets.rotate({ toolId: 'ledger', name: 'signing' }, SIGNING, admin);
    });

    test('injection targets that steer the runtime or its traffic are refused; an ordinary name is allowed', async () => {
      const attacks: [string, 'env' | 'header'][] = [
        ['LD_PRELOAD', 'env'],
        ['PATH', 'env'],
        ['NODE_OPTIONS', 'env'],
        ['HTTPS_PROXY', 'env'],
        ['https_proxy', 'env'],
        ['TOOLGATE_DB', 'env'],
        ['Host', 'header'],
        ['Proxy-Authorization', 'header'],
        ['Transfer-Encoding', 'header'],
        ['X-Forwarded-For', 'header'],
      ];
      for (const [as, inject] of attacks) {
        // Header injection needs an HTTP runtime (the catalog says so), hence the send tool.
        const make = inject === 'header' ? validSendTool : validTool;
        const tool = definition(
          make({ id: 'billing', name: 'billing', credentials: { secret: 'stripe', inject, as } }),
        );
        await assert.rejects(tg.credentials.forCall(call(tool)), (err: Error) => {
          assert.equal(
            (err as { details?: { reason?: string } }).details?.reason,
            'reserved_target',
            as,
          );
          return true;
        });
      }
      const benign = definition(
        validSendTool({
          id: 'billing',
          name: 'billing',
          credentials: { secret: 'stripe', inject: 'header', as: 'Authorization' },
        }),
      );
      assert.equal((await tg.credentials.forCall(call(benign))).headers.Authorization, STRIPE);
    });

    test('after rotate the broker hands out the new value only; after delete, nothing', async () => {
      const next = 'sk_live_RotatedStripe_9f8e7d6c5b4a';
      await tg.secrets.rotate({ toolId: 'billing', name: 'stripe' }, next, admin);
      const creds = await tg.credentials.forCall(call(billing));
      assert.equal(creds.env.STRIPE_API_KEY, next);
      assert.deepEqual(creds.redact, [next]);
      await tg.secrets.delete({ toolId: 'billing', name: 'stripe' }, admin);
      await assert.rejects(tg.credentials.forCall(call(billing)), {
        code: 'CREDENTIAL_UNAVAILABLE',
      });
      await tg.secrets.set({ toolId: 'billing', name: 'stripe' }, STRIPE, admin);
    });

    test('under the wrong master key the broker refuses, saying so, and hands out nothing', async () => {
      const other = await openGateway({ db: url, masterKey: MasterKey.generate() });
      try {
        await assert.rejects(other.credentials.forCall(call(billing)), (err: Error) => {
          assert.equal((err as { details?: { reason?: string } }).details?.reason, 'master_key');
          assert.match(err.message, /master key/);
          assert.equal(err.message.includes(STRIPE), false);
          return true;
        });
      } finally {
        await other.close();
      }
    });

    test('an echoed credential is scrubbed from a result with the redact list the broker gave', async () => {
      const creds = await tg.credentials.forCall(call(billing));
      const echoed = {
        status: `key is ${STRIPE}`,
        env: { STRIPE_API_KEY: STRIPE },
        b64: Buffer.from(`Bearer ${STRIPE}`).toString('base64'),
      };
      const { value, redacted } = redactSecrets(echoed, creds.redact);
      assert.equal(redacted, true);
      assert.equal(JSON.stringify(value).includes(STRIPE), false);
      assert.equal((value as { status: string }).status, `key is ${SECRET_MASK}`);
    });

    test('the values are in no event, no audit row and no log line after set, rotate and forCall', async () => {
      const lines: string[] = [];
      const logger = { level: 'trace', stream: { write: (line: string) => void lines.push(line) } };
      const app = await buildServer(tg, { adminToken: 'x'.repeat(32), logger });
      try {
        await app.inject({
          method: 'POST',
          url: `/v1/secrets/search/search-key/rotate`,
          headers: { authorization: `Bearer ${'x'.repeat(32)}` },
          payload: { value: `${SEARCH}-v2` },
        });
        await app.inject({
          method: 'PUT',
          url: '/v1/secrets/search/broken',
          headers: {
            authorization: `Bearer ${'x'.repeat(32)}`,
            'content-type': 'application/json',
          },
          payload: `{"value": "${SEARCH}-malformed`,
        });
      } finally {
        await app.close();
      }
      await tg.credentials.forCall(call(search));
      await tg.credentials.forCall(call(payments));
      assert.ok(lines.length > 0, 'the server logged something');
      const inspector = await openStore(url);
      try {
        const events = await inspector.db.selectFrom('events').selectAll().execute();
        const audit = await inspector.db.selectFrom('audit_log').selectAll().execute();
        const haystack = JSON.stringify({ events, audit, logs: lines });
        for (const v of [STRIPE, SEARCH, SIGNING]) {
          for (const form of [v, Buffer.from(v).toString('base64')]) {
            assert.equal(haystack.includes(form), false, `found ${form}`);
          }
        }
      } finally {
        await inspector.close();
      }
      if (backend.name === 'sqlite') {
        const dir = dirname(url.slice('sqlite:'.length));
        for (const f of readdirSync(dir)) {
          const bytes = readFileSync(join(dir, f));
          for (const v of [STRIPE, SEARCH, `${SEARCH}-v2`, SIGNING]) {
            assert.equal(bytes.includes(Buffer.from(v)), false, `${f} holds ${v}`);
          }
        }
      }
      now = new Date(now.getTime() + 1000);
    });
  });
}
