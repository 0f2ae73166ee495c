/**
 * `toolgate serve` checks the outbound URLs its environment configures under the outbound rules
 * before it listens: a reviewer webhook or an OpenID issuer on loopback stops the start unless the
 * admin set TOOLGATE_OUTBOUND_ALLOW_LOOPBACK=1, and private, metadata and IPv6-embedded addresses
 * stop it either way, naming the setting and the egress rule; with the setting, loopback starts.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ensureBuilt, listeningUrl, spawnServe } from '../support/cli.js';
import { type Receiver, webhookReceiver } from '../support/webhook-receiver.js';

let dir: string;
let hook: Receiver;
let n = 0;
/** A fresh folder for one serve (its database and data). */
const folder = (): string => {
  const path = join(dir, `s${++n}`);
  mkdirSync(path);
  return path;
};
before(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-serve-outbound-'));
  hook = await webhookReceiver();
});
after(async () => {
  await hook.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A serve with `env` that listens (else the test fails); stopped once it does. */
async function startsListening(env: NodeJS.ProcessEnv): Promise<void> {
  const server = spawnServe(folder(), [], env);
  try {
    await listeningUrl(server);
  } finally {
    server.kill('SIGTERM');
    await once(server, 'exit');
  }
}

/** What a serve that must not start printed; one that listens is stopped at once and fails. */
async function refusedStart(env: NodeJS.ProcessEnv): Promise<string> {
  const server = spawnServe(folder(), [], env);
  let out = '';
  const read = (c: Buffer) => {
    out += c.toString();
    if (/listening on/.test(out)) server.kill('SIGTERM');
  };
  server.stdout?.on('data', read);
  server.stderr?.on('data', read);
  const [code] = await once(server, 'exit');
  assert.doesNotMatch(out, /listening on/);
  assert.notEqual(code, 0, out);
  return out;
}

test('a loopback reviewer webhook stops serve unless the admin allows loopback', async () => {
  for (const url of [hook.url, hook.url.replace('127.0.0.1', 'localhost')]) {
    const out = await refusedStart({ TOOLGATE_NOTIFY_WEBHOOK_URL: url });
    assert.match(out, /INPUT_INVALID/);
    assert.match(out, /notify\/webhookUrls\/0 names a loopback host/);
  }
  // Benign neighbour: the same receiver with the admin's gateway-wide setting.
  await startsListening({
    TOOLGATE_NOTIFY_WEBHOOK_URL: hook.url,
    TOOLGATE_OUTBOUND_ALLOW_LOOPBACK: '1',
  });
});

test('private, metadata and IPv6-embedded webhooks stop serve, loopback setting or not', async () => {
  for (const [url, why] of [
    ['http://169.254.169.254/latest/meta-data', /cloud metadata address/],
    ['https://[::ffff:a9fe:a9fe]/h', /cloud metadata address \(embedded/],
    ['https://[::ffff:127.0.0.1]/h', /loopback address \(embedded/],
    ['https://10.0.0.5/h', /private address/],
  ] as const) {
    for (const allow of ['0', '1']) {
      const out = await refusedStart({
        TOOLGATE_NOTIFY_WEBHOOK_URL: url,
        TOOLGATE_OUTBOUND_ALLOW_LOOPBACK: allow,
      });
      assert.match(out, /notify\/webhookUrls\/0/);
      assert.match(out, why);
    }
  }
});

test('an OpenID issuer on loopback stops serve unless the admin allows loopback', async () => {
  const oidc = {
    TOOLGATE_OIDC_ISSUER: 'http://127.0.0.1:9/realms/main',
    TOOLGATE_OIDC_CLIENT_ID: 'toolgate',
  };
  const out = await refusedStart(oidc);
  assert.match(out, /issuer names a loopback host/);
  assert.match(
    await refusedStart({ ...oidc, TOOLGATE_OIDC_ISSUER: 'http://169.254.169.254/realms/main' }),
    /issuer names 169\.254\.169\.254 is a cloud metadata address/,
  );
  // Benign neighbour: with the setting, serve starts (discovery is tried later, and logged).
  await startsListening({ ...oidc, TOOLGATE_OUTBOUND_ALLOW_LOOPBACK: '1' });
});
