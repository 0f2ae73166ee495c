/** Hostile request shapes over real HTTP: each is refused with a structured 4xx, never a 500. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { backends } from '../support/backends.js';
import { openWorld, type World } from '../support/world.js';

const TOKEN = 'hardening-test-admin-token-0123456789';
let world: World;
let base: string;

before(async () => {
  const sqlite = backends().find((b) => b.name === 'sqlite');
  assert.ok(sqlite);
  world = await openWorld({
    backend: sqlite,
    rest: { adminToken: TOKEN, bodyLimit: 4 * 1024 * 1024 },
  });
  base = world.base;
});
after(() => world?.close());

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

test('a deep apply document is refused as the CLI refuses it (400 INPUT_MALFORMED), and the gateway stays up', async () => {
  // JSON and YAML bodies of /v1/apply go through the CLI's own parser (round 20, W10).
  const res = await post('/v1/apply', `[${deepJson(50_000)}]`);
  assert.equal(res.status, 400);
  assert.equal(res.body.code, 'INPUT_MALFORMED');
  assert.equal((await fetch(`${base}/healthz`)).status, 200);
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
  assert.deepEqual((await world.tg.catalog.list()).length, 0);
});
