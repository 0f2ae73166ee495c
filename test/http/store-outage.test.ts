/**
 * A real PostgreSQL outage: the server is stopped under a running gateway. Readiness and admin
 * routes answer 503 STORE_UNAVAILABLE (retry later), never a 500 with the driver's message, and
 * liveness stays up.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startPostgres } from '../../scripts/postgres-harness.mjs';
import { buildServer } from '../../src/edge/rest/index.js';
import { openGateway } from '../../src/host/toolgate.js';

const TOKEN = 'outage-test-admin-token-0123456789';

test('when PostgreSQL stops, /readyz and admin routes answer 503 STORE_UNAVAILABLE', {
  skip: process.env.TOOLGATE_TEST_PG_URL
    ? false
    : 'no PostgreSQL in this run (use --with-postgres)',
}, async () => {
  const pg = await startPostgres();
  const tg = await openGateway({ db: pg.url });
  const app = await buildServer(tg, { adminToken: TOKEN });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  const get = (path: string) =>
    fetch(`${base}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  try {
    assert.equal((await get('/readyz')).status, 200);
    assert.equal((await get('/v1/tools')).status, 200);
    pg.stop();
    for (const path of ['/readyz', '/v1/tools', '/v1/discovery?q=x']) {
      const res = await get(path);
      assert.equal(res.status, 503, path);
      const body = (await res.json()) as { code: string; message: string };
      assert.equal(body.code, 'STORE_UNAVAILABLE', path);
      assert.doesNotMatch(body.message, /ECONNREFUSED|127\.0\.0\.1|terminat/i);
    }
    assert.equal((await get('/healthz')).status, 200, 'the process itself is alive');
  } finally {
    await app.close();
    await tg.close().catch(() => {});
    pg.stop();
  }
});
