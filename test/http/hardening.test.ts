/** Hostile request shapes over real HTTP: each is refused with a structured 4xx, never a 500. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { buildServer } from '../../src/edge/rest/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';

const TOKEN = 'hardening-test-admin-token-0123456789';
let tg: Gateway;
let base: string;
let close: () => Promise<void>;

before(async () => {
  const sqlite = backends().find((b) => b.name === 'sqlite');
  assert.ok(sqlite);
  const fresh = await sqlite.fresh();
  tg = await openGateway({ db: fresh.url });
  const app = await buildServer(tg, { adminToken: TOKEN, bodyLimit: 4 * 1024 * 1024 });
  base = await app.listen({ host: '127.0.0.1', port: 0 });
  close = async () => {
    await app.close();
    await tg.close();
    await fresh.drop();
  };
});
after(() => close());

async function post(path: string, body: string, type = 'application/json') {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': type },
    body,
  });
  return { status: res.status, body: (await res.json()) as { code: string; details: unknown } };
}

const deepJson = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;

test('a definition nested 100,000 levels deep is 422 DEFINITION_INVALID, and the gateway stays up', async () => {
  const res = await post('/v1/tools', deepJson(100_000));
  assert.equal(res.status, 422);
  assert.equal(res.body.code, 'DEFINITION_INVALID');
  assert.equal((await fetch(`${base}/healthz`)).status, 200);
});

test('a deep apply document is 422 CONFIG_INVALID', async () => {
  const res = await post('/v1/apply', `[${deepJson(50_000)}]`);
  assert.equal(res.status, 422);
  assert.equal(res.body.code, 'CONFIG_INVALID');
});

test('deep YAML is 400 INPUT_MALFORMED', async () => {
  const yaml = `a:\n${Array.from({ length: 2000 }, (_, i) => `${' '.repeat(i + 1)}a:`).join('\n')}\n`;
  const res = await post('/v1/apply', yaml, 'application/yaml');
  assert.equal(res.status, 400);
  assert.equal(res.body.code, 'INPUT_MALFORMED');
});

test('a JSON body that is a bare string, number or null is refused, not registered', async () => {
  for (const body of ['"id: x"', '42', 'null']) {
    const res = await post('/v1/tools', body);
    assert.ok(res.status === 400 || res.status === 422, `${body} → ${res.status}`);
  }
  assert.deepEqual((await tg.catalog.list()).length, 0);
});
