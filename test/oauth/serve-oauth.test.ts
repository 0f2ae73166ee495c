/**
 * `toolgate serve` with TOOLGATE_OAUTH_CONFIG: a wrong configuration stops the start with its
 * problems; a valid one publishes the protected resource metadata, and nothing else well-known.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ensureBuilt, listeningUrl, spawnServe } from '../support/cli.js';

let dir: string;

before(() => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-serve-oauth-'));
  mkdirSync(join(dir, 'bad'));
  mkdirSync(join(dir, 'good'));
});
after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }));

const CONFIG = {
  resource: 'https://tg.example.com/mcp',
  issuers: [{ issuer: 'https://login.example.com', jwksUrl: 'https://login.example.com/jwks' }],
  clients: { 'host-app': 'support-bot' },
  scopes: { 'tickets.read': ['tickets:read'] },
};

test('a wrong OAuth configuration stops serve with the problem located', async () => {
  const file = join(dir, 'bad.json');
  writeFileSync(file, JSON.stringify({ ...CONFIG, resource: 'ftp://tg.example.com/mcp' }));
  const server = spawnServe(join(dir, 'bad'), [], { TOOLGATE_OAUTH_CONFIG: file });
  let out = '';
  server.stdout?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  server.stderr?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  const [code] = await once(server, 'exit');
  assert.notEqual(code, 0);
  assert.match(out, /OAuth configuration is invalid/);
  assert.match(out, /\/resource/);
  assert.doesNotMatch(out, /listening on/);
});

test('a valid one publishes the protected resource metadata', async () => {
  const file = join(dir, 'oauth.json');
  writeFileSync(file, JSON.stringify(CONFIG));
  const server = spawnServe(join(dir, 'good'), [], { TOOLGATE_OAUTH_CONFIG: file });
  try {
    const base = await listeningUrl(server);
    const res = await fetch(`${base}/.well-known/oauth-protected-resource/mcp`);
    assert.equal(res.status, 200);
    const doc = (await res.json()) as { resource: string; authorization_servers: string[] };
    assert.equal(doc.resource, CONFIG.resource);
    assert.deepEqual(doc.authorization_servers, ['https://login.example.com']);
    const none = await fetch(`${base}/mcp`, { method: 'POST', body: '{}' });
    assert.equal(
      none.headers.get('www-authenticate'),
      'Bearer resource_metadata="https://tg.example.com/.well-known/oauth-protected-resource/mcp"',
    );
    assert.equal((await fetch(`${base}/.well-known/oauth-authorization-server`)).status, 404);
  } finally {
    server.kill('SIGTERM');
    await once(server, 'exit');
  }
});
