/**
 * /v1/secrets as an admin client sees it (C11, C18): a real server on loopback, real
 * fetch, every backend. Values go in and never come out — not in a response, not in an error
 * (even for a malformed body), not in the OpenAPI document; agents are refused.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { backends } from '../support/backends.js';
import { openWorld, type World } from '../support/world.js';

const ADMIN_TOKEN = 'test-admin-token-secrets-0123456789';
const VALUE = 'rest-secret-value-Q2xvdWQgS2V5';
const NEXT = 'rest-secret-rotated-ZmVkY2Jh';
const admin: Actor = { id: 'test-admin', via: 'library' };

interface Reply {
  readonly status: number;
  readonly text: string;
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field
  readonly body: any;
}

for (const backend of backends()) {
  describe(`/v1/secrets on ${backend.name}`, () => {
    let world: World;
    let base: string;
    let agentKey: string;
    const seen: string[] = [];

    async function call(
      method: string,
      path: string,
      options: { body?: unknown; raw?: string; token?: string | null } = {},
    ): Promise<Reply> {
      const headers: Record<string, string> = {};
      const token = options.token === undefined ? ADMIN_TOKEN : options.token;
      if (token !== null) headers.authorization = `Bearer ${token}`;
      let body: string | undefined;
      if (options.body !== undefined || options.raw !== undefined) {
        headers['content-type'] = 'application/json';
        body = options.raw ?? JSON.stringify(options.body);
      }
      const res = await fetch(base + path, { method, headers, ...(body ? { body } : {}) });
      const text = await res.text();
      seen.push(text);
      return { status: res.status, text, body: text ? JSON.parse(text) : null };
    }

    before(async () => {
      world = await openWorld({
        backend,
        actor: admin,
        agents: [{ id: 'bot', display_name: 'Bot', description: 'A test agent.', owner: 'team' }],
        options: { masterKey: MasterKey.generate() },
        rest: { adminToken: ADMIN_TOKEN },
      });
      base = world.base;
      agentKey = world.keys.bot ?? '';
    });
    after(async () => {
      await world.close();
    });

    test('PUT creates version 1 and answers 201 without the value', async () => {
      const r = await call('PUT', '/v1/secrets/billing/stripe', { body: { value: VALUE } });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.secret.tool_id, 'billing');
      assert.equal(r.body.secret.name, 'stripe');
      assert.equal(r.body.secret.environment, 'default');
      assert.equal(r.body.secret.version, 1);
      assert.match(r.body.secret.key_id, /^[0-9a-f]{16}$/);
      assert.equal(r.body.secret.created_by, 'admin-token');
      const staging = await call('PUT', '/v1/secrets/billing/stripe?environment=staging', {
        body: { value: VALUE },
      });
      assert.equal(staging.status, 201);
      assert.equal(staging.body.secret.environment, 'staging');
    });

    test('PUT on an existing secret is 409 SECRET_EXISTS and changes nothing', async () => {
      const r = await call('PUT', '/v1/secrets/billing/stripe', { body: { value: NEXT } });
      assert.equal(r.status, 409);
      assert.equal(r.body.code, 'SECRET_EXISTS');
      assert.equal(r.body.details.version, 1);
      const list = await call('GET', '/v1/secrets?tool=billing&environment=default');
      assert.equal(list.body.secrets[0].version, 1);
    });

    test('GET lists names, environments, versions, dates and key ids, never values', async () => {
      const r = await call('GET', '/v1/secrets');
      assert.equal(r.status, 200);
      assert.equal(r.body.secrets.length, 2);
      for (const s of r.body.secrets) assert.equal('value' in s, false);
      const filtered = await call('GET', '/v1/secrets?environment=staging');
      assert.deepEqual(
        filtered.body.secrets.map((s: { environment: string }) => s.environment),
        ['staging'],
      );
    });

    test('POST …/rotate writes version 2; rotating a missing secret is 404', async () => {
      const r = await call('POST', '/v1/secrets/billing/stripe/rotate', { body: { value: NEXT } });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.secret.version, 2);
      assert.equal(r.body.secret.rotated_by, 'admin-token');
      const missing = await call('POST', '/v1/secrets/billing/nope/rotate', {
        body: { value: NEXT },
      });
      assert.equal(missing.status, 404);
      assert.equal(missing.body.code, 'SECRET_NOT_FOUND');
    });

    test('DELETE removes one environment’s secret; a second DELETE is 404', async () => {
      const r = await call('DELETE', '/v1/secrets/billing/stripe?environment=staging');
      assert.equal(r.status, 200);
      assert.equal(r.body.deleted.environment, 'staging');
      assert.equal(
        (await call('DELETE', '/v1/secrets/billing/stripe?environment=staging')).status,
        404,
      );
      assert.equal((await call('GET', '/v1/secrets')).body.secrets.length, 1);
    });

    test('an agent key, no token or a wrong token is refused on every secrets route', async () => {
      const routes: [string, string, unknown?][] = [
        ['GET', '/v1/secrets'],
        ['PUT', '/v1/secrets/billing/agent-made', { value: VALUE }],
        ['POST', '/v1/secrets/billing/stripe/rotate', { value: VALUE }],
        ['DELETE', '/v1/secrets/billing/stripe'],
      ];
      for (const token of [agentKey, null, 'not-the-admin-token-0123456789abc']) {
        for (const [method, path, body] of routes) {
          const r = await call(method, path, { ...(body ? { body } : {}), token });
          assert.ok(r.status === 401 || r.status === 403, `${method} ${path}: ${r.status}`);
        }
      }
      // Nothing changed: still version 2, nothing created.
      const list = (await call('GET', '/v1/secrets')).body.secrets;
      assert.deepEqual(
        list.map((s: { name: string; version: number }) => `${s.name}@${s.version}`),
        ['stripe@2'],
      );
    });

    test('bad input is a structured 400 that never quotes the value, even for a malformed body', async () => {
      const malformed = await call('PUT', '/v1/secrets/billing/leaky', {
        // V8 quotes the text around a syntax error in its message; that must not come back.
        raw: `{"value": ${VALUE}}`,
      });
      assert.equal(malformed.status, 400);
      assert.equal(malformed.body.code, 'INPUT_MALFORMED');
      assert.equal(malformed.text.includes(VALUE.slice(0, 8)), false, malformed.text);
      const short = await call('PUT', '/v1/secrets/billing/leaky', { body: { value: 'short' } });
      assert.equal(short.status, 400);
      assert.equal(short.body.code, 'INPUT_INVALID');
      const extra = await call('PUT', '/v1/secrets/billing/leaky', {
        body: { value: VALUE, echo: VALUE },
      });
      assert.equal(extra.status, 400);
      const badName = await call('PUT', '/v1/secrets/Bad%20Tool/x', { body: { value: VALUE } });
      assert.equal(badName.status, 400);
      assert.equal((await call('GET', '/v1/secrets')).body.secrets.length, 1);
    });

    test('the OpenAPI document describes the routes, admin-only, with a write-only value', async () => {
      const doc = (await call('GET', '/openapi.json')).body;
      const paths = doc.paths;
      assert.ok(paths['/v1/secrets']?.get);
      assert.ok(paths['/v1/secrets/{tool}/{name}']?.put);
      assert.ok(paths['/v1/secrets/{tool}/{name}']?.delete);
      assert.ok(paths['/v1/secrets/{tool}/{name}/rotate']?.post);
      const put = paths['/v1/secrets/{tool}/{name}'].put;
      assert.notDeepEqual(put.security, []);
      const bodySchema = put.requestBody.content['application/json'].schema;
      assert.equal(bodySchema.properties.value.writeOnly, true);
      const listSchema = JSON.stringify(paths['/v1/secrets'].get.responses['200']);
      assert.equal(listSchema.includes('"value"'), false);
    });

    test('no response in this suite ever carried a value', () => {
      for (const text of seen) {
        for (const v of [VALUE, NEXT]) {
          assert.equal(text.includes(v), false, text);
          assert.equal(text.includes(v.slice(0, 12)), false, text);
        }
      }
    });
  });
}
