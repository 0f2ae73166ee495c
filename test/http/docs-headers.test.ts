/**
 * The API description's pages (/docs, Swagger UI) share the console's origin, so they carry the
 * console's headers: its CSP (no inline script, frame-ancestors 'none') and X-Frame-Options DENY,
 * on the page and on its assets, exactly as a console page does; the pages are still served.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { CONTENT_SECURITY_POLICY } from '../../src/edge/console/index.js';
import { buildServer } from '../../src/edge/rest/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';

const sqlite = backends().find((b) => b.name === 'sqlite');

describe('/docs carries the console’s browser headers', () => {
  let tg: Gateway;
  let app: FastifyInstance;
  let base = '';
  let drop: () => Promise<void>;

  before(async () => {
    assert.ok(sqlite);
    const fresh = await sqlite.fresh();
    drop = fresh.drop;
    tg = await openGateway({ db: fresh.url, masterKey: MasterKey.generate() });
    app = await buildServer(tg, { adminToken: 'admin-token-for-docs-headers-0123456789abcdef' });
    base = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(async () => {
    await app?.close();
    await tg?.close();
    await drop?.();
  });

  const headersOf = async (path: string) => {
    const res = await fetch(base + path, { redirect: 'manual' });
    await res.arrayBuffer();
    return { status: res.status, headers: res.headers };
  };

  test('a console page (the neighbour) and every /docs page and asset carry the same CSP and frame rules', async () => {
    const login = await headersOf('/console/login');
    assert.equal(login.status, 200);
    assert.equal(login.headers.get('content-security-policy'), CONTENT_SECURITY_POLICY);
    for (const path of [
      '/docs',
      '/docs/',
      '/docs/static/index.html',
      '/docs/static/swagger-ui-bundle.js',
      '/docs/static/index.css',
      '/docs/static/swagger-initializer.js',
      '/docs/json',
    ]) {
      const { status, headers } = await headersOf(path);
      assert.ok(status === 200 || (status >= 300 && status < 400), `${path}: ${status}`);
      assert.equal(headers.get('content-security-policy'), CONTENT_SECURITY_POLICY, path);
      assert.equal(headers.get('x-frame-options'), 'DENY', path);
      assert.equal(headers.get('x-content-type-options'), 'nosniff', path);
    }
  });

  test('the Swagger UI page is still served, its scripts external (no inline script the CSP would block)', async () => {
    const res = await fetch(`${base}/docs/static/index.html`);
    assert.equal(res.status, 200);
    const html = await res.text();
    assert.match(html, /<div id="swagger-ui">/);
    assert.doesNotMatch(html, /<script>(?!\s*<\/script>)/);
    for (const m of html.matchAll(/<script([^>]*)>/g)) assert.match(m[1] ?? '', /src=/);
  });
});
