/**
 * @module `toolgate serve` checks its single sign-on and notification settings before it opens
 * anything: a misconfigured issuer, role map or webhook stops the start with a message naming it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, test } from 'node:test';
import { serve } from '../../src/edge/cli/serve.js';

const dir = mkdtempSync(join(tmpdir(), 'tg-serve-cfg-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const saved = { ...process.env };
afterEach(() => {
  for (const k of Object.keys(process.env)) if (k.startsWith('TOOLGATE_')) delete process.env[k];
  Object.assign(process.env, saved);
});

const start = () =>
  serve({
    dataDir: dir,
    db: `sqlite:${join(dir, 'never-opened.db')}`,
    host: '127.0.0.1',
    port: 0,
    demo: false,
    adminTokenFile: join(dir, 'admin-token'),
    bodyLimit: 1_048_576,
    version: 'test',
  });

test('a plain-http remote issuer stops the start, naming the setting', async () => {
  process.env.TOOLGATE_OIDC_ISSUER = 'http://id.example.com';
  process.env.TOOLGATE_OIDC_CLIENT_ID = 'toolgate';
  await assert.rejects(start(), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'INPUT_INVALID');
    assert.match(err.message, /issuer must be https/);
    return true;
  });
});

test('a role map to a role that does not exist stops the start', async () => {
  process.env.TOOLGATE_OIDC_ISSUER = 'https://id.example.com';
  process.env.TOOLGATE_OIDC_CLIENT_ID = 'toolgate';
  process.env.TOOLGATE_OIDC_ROLE_MAP = '{"ops":"root"}';
  await assert.rejects(
    start(),
    /"ops" to "root", which is not one of admin, approver, auditor, owner/,
  );
});

test('a plain-http remote notification webhook stops the start', async () => {
  // Where a webhook may point is the outbound rules' (INPUT_INVALID with the egress rule).
  process.env.TOOLGATE_NOTIFY_WEBHOOK_URL = 'http://hooks.example.com/x';
  await assert.rejects(start(), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'INPUT_INVALID');
    assert.match(err.message, /notify\/webhookUrls\/0 must be https/);
    return true;
  });
  // A URL with credentials is not a webhook URL at all.
  process.env.TOOLGATE_NOTIFY_WEBHOOK_URL = 'https://u:p@hooks.example.com/x';
  await assert.rejects(start(), { code: 'NOTIFY_CONFIG_INVALID' });
});
