/**
 * `toolgate config check FILE` refuses what a start refuses, because it runs the start's own
 * readers and the gateway's check before it opens (src/edge/cli/start-settings.ts): a webhook or
 * JWKS URL on a loopback or private address, a single sign-on issuer on one, a detectors file that
 * is missing, an OAuth configuration that is invalid, an admin token file others can read. Each is
 * refused by the check at its key and by `serve`, beside one file using every one of them validly,
 * which both accept. And a file a setting names is reported by line or pointer, never by its
 * text: a secret in a detectors, JWKS, OAuth or admin token file never reaches the output, and the
 * mistake is INPUT_INVALID (exit 2), from the check and from a start.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type CliRun, cleanEnv, ensureBuilt, listeningUrl, MAIN } from '../support/cli.js';

let dir = '';
before(() => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-config-check-'));
});
after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }));

function file(name: string, text: string, mode = 0o600): string {
  const path = join(dir, name);
  writeFileSync(path, text, { mode });
  chmodSync(path, mode);
  return path;
}

function run(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      [MAIN, ...args],
      { cwd: dir, env: { ...cleanEnv(), ...env }, timeout: 60_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

/** The problems `config check --json` refused `path` with. */
async function checkProblems(path: string): Promise<{ pointer: string; message: string }[]> {
  const r = await run(['--json', 'config', 'check', path]);
  assert.equal(r.code, 2, `${path}: ${r.stdout}${r.stderr}`);
  const { error } = JSON.parse(r.stdout) as {
    error: { code: string; details: { problems: { pointer: string; message: string }[] } };
  };
  assert.equal(error.code, 'INPUT_INVALID');
  return error.details.problems;
}

/** A settings file of its own data folder, on a port the kernel picks. */
function settings(name: string, body: string): string {
  return file(
    `${name}.yaml`,
    `${body}\ndata_dir: ${join(dir, `data-${name}`)}\nserver: { port: 0 }\n`,
  );
}

const jwks = () =>
  JSON.stringify({
    keys: [generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' })],
  });

const oauthConfig = (jwksFile: string) =>
  JSON.stringify({
    resource: 'https://tg.example.com/mcp',
    issuers: [{ issuer: 'https://as.example.com', jwksFile }],
    clients: { 'host-app': 'support-bot' },
    scopes: { 'tickets.read': ['tickets:read'] },
  });

test('config check refuses what serve refuses, at its key: outbound URLs to loopback or private addresses, a missing detectors file, an invalid OAuth configuration, a group-readable admin token file', async () => {
  const token = `tga_${randomBytes(24).toString('hex')}`;
  const secret = file('oidc-secret', 'client-secret\n');
  const cases: [name: string, body: string, pointer: string][] = [
    [
      'notify-loopback',
      'notify: { webhook_urls: ["http://127.0.0.1:9/x"] }',
      '/notify/webhook_urls/0',
    ],
    [
      'notify-private',
      'notify: { webhook_urls: ["https://10.0.0.1/x"] }',
      '/notify/webhook_urls/0',
    ],
    [
      'jwks-loopback',
      'jwt: { issuer: https://idp.example, audience: tg, jwks_url: "http://127.0.0.1:9/jwks" }',
      '/jwt/jwks_url',
    ],
    [
      'oidc-private',
      `oidc: { issuer: "https://10.0.0.1", client_id: tg, client_secret_file: ${secret} }`,
      '/oidc/issuer',
    ],
    ['detectors-missing', `detectors: ${join(dir, 'nonexistent.yaml')}`, '/detectors'],
    [
      'oauth-invalid',
      `oauth_config: ${file('oauth-bad.yaml', 'resource: not-a-url\nissuers: []\n')}`,
      '/oauth_config',
    ],
    [
      'token-readable',
      `admin_token: { file: ${file('token-640', `${token}\n`, 0o640)} }`,
      '/admin_token',
    ],
  ];
  for (const [name, body, pointer] of cases) {
    const path = settings(name, body);
    const problems = await checkProblems(path);
    assert.ok(
      problems.some((p) => p.pointer === pointer),
      `${name}: ${JSON.stringify(problems)}`,
    );
    const start = await run(['--config', path, 'serve']);
    assert.equal(start.code, 2, `${name}: serve ${start.stdout}${start.stderr}`);
    assert.doesNotMatch(start.stdout, /listening on/);
  }

  // The benign neighbour: every one of them as a start takes it, loopback allowed by the admin.
  const valid = settings(
    'valid',
    [
      'outbound: { allow_loopback: true }',
      'notify: { webhook_urls: ["http://127.0.0.1:9/x"] }',
      'jwt: { issuer: https://idp.example, audience: tg, jwks_url: "http://127.0.0.1:9/jwks" }',
      `detectors: ${file('detectors.yaml', 'read_then_egress: { window_seconds: 300 }\n')}`,
      `oauth_config: ${file('oauth.json', oauthConfig(file('as-jwks.json', jwks())))}`,
      `admin_token: { file: ${file('token-600', `${token}\n`)} }`,
    ].join('\n'),
  );
  const ok = await run(['config', 'check', valid]);
  assert.equal(ok.code, 0, ok.stdout + ok.stderr);
  assert.match(ok.stdout, /valid$/m);
  const server = spawn(process.execPath, [MAIN, '--config', valid, 'serve'], {
    cwd: dir,
    env: cleanEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((resolve) => server.once('exit', resolve));
  try {
    await listeningUrl(server);
  } finally {
    server.kill('SIGTERM');
    await exited;
  }
});

test('a file a setting names is reported by line or pointer, never by its text: a secret in it never shows, and the mistake is INPUT_INVALID from the check and from a start', async () => {
  const canary = `CANARY${randomBytes(6).toString('hex')}`;
  const data = join(dir, 'canary-data');
  const jwt = { TOOLGATE_JWT_ISSUER: 'https://idp.example', TOOLGATE_JWT_AUDIENCE: 'tg' };
  const cases: [name: string, key: string, env: NodeJS.ProcessEnv, line: RegExp | undefined][] = [];
  const named = (
    name: string,
    text: string,
    key: string,
    env: (path: string) => object,
    line?: RegExp,
  ) => {
    const path = file(name, text);
    cases.push([name, `${key}: ${path}`, env(path) as NodeJS.ProcessEnv, line]);
  };
  named(
    'det-dup.yaml',
    `webhook: { url: "https://alerts.example.com/hook/${canary}" }\nwebhook: { url: x }\n`,
    'detectors',
    (p) => ({ TOOLGATE_DETECTORS: p }),
    /line 2/,
  );
  named(
    'det-schema.yaml',
    `webhook: { url: "https://alerts.example.com/hook/${canary}", colour: "${canary}" }\n`,
    'detectors',
    (p) => ({ TOOLGATE_DETECTORS: p }),
  );
  named(
    'jwks-comma.json',
    `{"keys":[{"kty":"oct","k":"SYMMETRIC${canary}"},]}`,
    'jwt: { issuer: https://idp.example, audience: tg, jwks_file',
    (p) => ({ ...jwt, TOOLGATE_JWKS_FILE: p }),
  );
  named(
    'jwks-shape.json',
    `{"k":"${canary}"}`,
    'jwt: { issuer: https://idp.example, audience: tg, jwks_file',
    (p) => ({ ...jwt, TOOLGATE_JWKS_FILE: p }),
  );
  named(
    'oauth-dup.yaml',
    `issuer: https://${canary}.example\nissuer: again\n`,
    'oauth_config',
    (p) => ({ TOOLGATE_OAUTH_CONFIG: p }),
    /line 2/,
  );
  named(
    'oauth-values.yaml',
    `resource: "${canary}"\nissuers: [{ issuer: "${canary}", jwksUrl: "https://as.example.com/${canary}" }]\nclients: {}\nscopes: {}\n`,
    'oauth_config',
    (p) => ({ TOOLGATE_OAUTH_CONFIG: p }),
  );
  named('token-short', `${canary}\n`, 'admin_token: { file', (p) => ({
    TOOLGATE_ADMIN_TOKEN_FILE: p,
  }));
  for (const [name, key, env, line] of cases) {
    const closing = key.includes('{') ? ' }' : '';
    const path = settings(`canary-${name}`, `${key}${closing}`);
    const check = await run(['config', 'check', path]);
    const start = await run(['--data-dir', data, 'serve', '--port', '0'], env);
    for (const [what, r] of [
      ['config check', check],
      ['serve', start],
    ] as const) {
      assert.equal(r.code, 2, `${name}, ${what}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, /^error INPUT_INVALID: /, `${name}, ${what}`);
      assert.equal((r.stdout + r.stderr).includes(canary), false, `${name}, ${what}:\n${r.stderr}`);
      if (line) assert.match(r.stderr, line, `${name}, ${what}`);
    }
  }
  assert.equal(existsSync(join(data, 'toolgate.db')), false, 'no start opened a database');
});
