/**
 * The settings file (docs/configuration.md "The settings file"): one YAML or JSON file for every
 * `serve` setting, validated by its JSON Schema, with each setting's environment variable over it
 * and the flag over both; `toolgate config check` refuses what a start would refuse, and a start
 * with a bad file refuses with every problem and opens nothing.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  configFileOf,
  fillFromSettings,
  readSettingsFile,
  SETTINGS,
  settingsSchema,
} from '../../src/edge/cli/settings-file.js';
import { cleanEnv, ensureBuilt, listeningUrl, MAIN } from '../support/cli.js';

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-settings-'));
});
after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('reading a settings file', () => {
  test('every setting maps to its variable; lists, booleans and maps as their readers want', () => {
    const path = file(
      'full.yaml',
      [
        'data_dir: /srv/toolgate',
        'db: postgres://toolgate@db/toolgate',
        'server: { host: 0.0.0.0, port: 9000, body_limit: 4096, allowed_origins: [https://a.example, https://b.example] }',
        'admin_token: { enabled: false }',
        'limits: { max_in_flight: 32, user_session_share: 0.25 }',
        'oidc: { issuer: https://idp.example, client_id: tg, client_secret_file: /run/secrets/oidc, role_map: { ops: admin } }',
        'outbound: { allow_loopback: true }',
        'health: { enabled: true, interval_seconds: { public: 900 } }',
      ].join('\n'),
    );
    const { env, problems } = readSettingsFile(path);
    assert.deepEqual(problems, []);
    assert.deepEqual(env, {
      TOOLGATE_DATA_DIR: '/srv/toolgate',
      TOOLGATE_DB: 'postgres://toolgate@db/toolgate',
      TOOLGATE_HOST: '0.0.0.0',
      TOOLGATE_PORT: '9000',
      TOOLGATE_BODY_LIMIT: '4096',
      TOOLGATE_ALLOWED_ORIGINS: 'https://a.example,https://b.example',
      TOOLGATE_ADMIN_TOKEN: 'disabled',
      TOOLGATE_MAX_IN_FLIGHT: '32',
      TOOLGATE_USER_SESSION_SHARE: '0.25',
      TOOLGATE_OIDC_ISSUER: 'https://idp.example',
      TOOLGATE_OIDC_CLIENT_ID: 'tg',
      TOOLGATE_OIDC_CLIENT_SECRET_FILE: '/run/secrets/oidc',
      TOOLGATE_OIDC_ROLE_MAP: '{"ops":"admin"}',
      TOOLGATE_OUTBOUND_ALLOW_LOOPBACK: '1',
      TOOLGATE_HEALTH: 'on',
      TOOLGATE_HEALTH_INTERVAL_PUBLIC: '900',
    });
  });

  test('unknown keys, wrong types, out-of-range numbers and inline secrets are refused with pointers', () => {
    const cases: [string, string][] = [
      ['server: { prot: 8080 }', '/server/prot'],
      ['server: { port: 70000 }', '/server/port'],
      ['server: { port: "8080" }', '/server/port'],
      ['oidc: { client_secret: hunter2 }', '/oidc/client_secret'],
      ['admin_token: { value: tg_abc }', '/admin_token/value'],
      ['db: mysql://x', '/db'],
      ['oidc: { role_map: { ops: root } }', '/oidc/role_map/ops'],
      ['limits: { user_session_share: 0 }', '/limits/user_session_share'],
      ['- a list', ''],
    ];
    for (const [text, pointer] of cases) {
      const { env, problems } = readSettingsFile(file('bad.yaml', text));
      assert.ok(problems.length > 0, text);
      assert.ok(
        problems.some((p) => p.pointer === pointer),
        `${text}: ${JSON.stringify(problems)}`,
      );
      assert.deepEqual(env, {}, 'a bad file sets nothing');
    }
    // YAML's anchors and duplicate keys: refused, never expanded or silently overwritten.
    for (const text of ['a: &x 1\nb: *x', 'server: { port: 1 }\nserver: { port: 2 }']) {
      const { problems } = readSettingsFile(file('yaml.yaml', text));
      assert.equal(problems[0]?.rule, 'settings.read', text);
    }
    assert.equal(readSettingsFile(join(dir, 'missing.yaml')).problems[0]?.rule, 'settings.read');
  });

  test('credentials in a URL setting, unknown YAML tags and a file that is no settings file are refused without echoing the file', () => {
    const cases: [string, string][] = [
      ['db: "postgres://u:SECRETPW@127.0.0.1/x"', '/db'],
      ['db: "postgresql://u@127.0.0.1/x?password=SECRETPW"', '/db'],
      ['db: "postgresql://u@127.0.0.1/x?sslpassword=SECRETPW"', '/db'],
      ['jwt: { jwks_url: "https://user:SECRETPW@idp.example/jwks" }', '/jwt/jwks_url'],
      ['server: { public_url: "https://SECRETPW@gw.example" }', '/server/public_url'],
      [
        'notify: { webhook_urls: ["https://a:SECRETPW@hooks.example/x"] }',
        '/notify/webhook_urls/0',
      ],
    ];
    for (const [text, pointer] of cases) {
      const { env, problems } = readSettingsFile(file('cred.yaml', text));
      assert.deepEqual(
        problems.map((p) => [p.pointer, p.rule]),
        [[pointer, 'settings.credentials']],
        text,
      );
      assert.doesNotMatch(JSON.stringify(problems), /SECRETPW/);
      assert.deepEqual(env, {});
    }
    const tagged = readSettingsFile(file('tag.yaml', 'oidc: { client_id: !!custom SECRETPW }\n'));
    assert.equal(tagged.problems[0]?.rule, 'settings.read');
    assert.doesNotMatch(JSON.stringify(tagged.problems), /SECRETPW/);
    const shadow = readSettingsFile(
      file('shadow', 'root:$6$SECRETPW:20228:0:99999:7:::\nbin:*:20228:0:99999:7:::\n'),
    );
    assert.deepEqual(
      shadow.problems.map((p) => [p.pointer, p.rule]),
      [['', 'settings.not_settings']],
    );
    assert.doesNotMatch(JSON.stringify(shadow.problems), /SECRETPW|root|bin/);
  });

  test('a variable already set wins over the file; the file fills only what is unset', () => {
    const env: NodeJS.ProcessEnv = { TOOLGATE_PORT: '7000' };
    const r = fillFromSettings(env, { TOOLGATE_PORT: '9000', TOOLGATE_HOST: '0.0.0.0' });
    assert.equal(env.TOOLGATE_PORT, '7000');
    assert.equal(env.TOOLGATE_HOST, '0.0.0.0');
    assert.deepEqual(r, { applied: ['TOOLGATE_HOST'], overridden: ['TOOLGATE_PORT'] });
  });

  test('--config and --config= on the command line, else TOOLGATE_CONFIG', () => {
    assert.equal(configFileOf(['serve', '--config', 'a.yaml'], {}), 'a.yaml');
    assert.equal(configFileOf(['--config=b.yaml', 'serve'], { TOOLGATE_CONFIG: 'c' }), 'b.yaml');
    assert.equal(configFileOf(['serve'], { TOOLGATE_CONFIG: 'c.yaml' }), 'c.yaml');
    assert.equal(configFileOf(['serve', '--', '--config', 'x'], {}), null);
  });

  test('the schema is built from the table: one property per setting, nothing else allowed', () => {
    const schema = settingsSchema() as { additionalProperties: boolean; properties: object };
    assert.equal(schema.additionalProperties, false);
    const envs = SETTINGS.map((s) => s.env);
    assert.equal(new Set(envs).size, envs.length, 'each variable once');
    assert.equal(new Set(SETTINGS.map((s) => s.path)).size, SETTINGS.length, 'each path once');
  });
});

describe('the CLI with a settings file', () => {
  before(() => ensureBuilt());

  function run(args: readonly string[], env: NodeJS.ProcessEnv = {}) {
    return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [MAIN, ...args],
        { cwd: dir, env: { ...cleanEnv(), ...env } },
        (err, stdout, stderr) =>
          resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  }

  function serve(args: readonly string[], env: NodeJS.ProcessEnv = {}): ChildProcess {
    return spawn(process.execPath, [MAIN, ...args], {
      cwd: dir,
      env: { ...cleanEnv(), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  }

  async function stop(server: ChildProcess): Promise<void> {
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  }

  /** The bootstrap admin token a start created (in the data folder, else ./data of the working folder). */
  function adminToken(data: string): string {
    const path = [join(data, 'admin-token'), join(dir, 'data', 'admin-token')].find((p) =>
      existsSync(p),
    );
    return readFileSync(path ?? join(data, 'admin-token'), 'utf8').trim();
  }

  /** A body of about `bytes` to an admin route: 413 above the limit, else refused as a file. */
  const post = (base: string, token: string, bytes: number) =>
    fetch(`${base}/v1/apply?dry_run=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ pad: 'x'.repeat(bytes) }),
    }).then((r) => r.status);

  test('serve takes the file: its data folder and database; the variable beats the file, the flag beats both', async () => {
    const data = join(dir, 'from-file');
    const config = file(
      'serve.yaml',
      `data_dir: ${data}\ndb: sqlite:${join(data, 'tg.db')}\nserver: { port: 0, body_limit: 2048 }\nhealth: { enabled: false }\n`,
    );
    const a = serve(['--config', config, 'serve'], { TOOLGATE_BODY_LIMIT: '8192' });
    try {
      const base = await listeningUrl(a);
      assert.ok(existsSync(join(data, 'tg.db')), "the file's database");
      assert.ok(existsSync(join(data, 'audit-signing-key.pem')), "the file's data folder");
      const token = adminToken(data);
      // 4 KiB: above the file's 2 KiB, below the variable's 8 KiB: read (and refused as a
      // configuration, 422), not 413.
      assert.equal(await post(base, token, 4096), 422);
      assert.equal(await post(base, token, 16_384), 413);
    } finally {
      await stop(a);
    }
    const b = serve(['--config', config, 'serve', '--body-limit', '1024'], {
      TOOLGATE_BODY_LIMIT: '8192',
    });
    try {
      const base = await listeningUrl(b);
      assert.equal(await post(base, adminToken(data), 1500), 413, 'the flag wins');
    } finally {
      await stop(b);
    }
  });

  test('config check: a valid file lists its settings; a bad one is refused with every problem; a start with it opens nothing', async () => {
    const good = file('good.yaml', 'server: { port: 9000 }\nlimits: { max_in_flight: 8 }\n');
    const ok = await run(['--json', 'config', 'check', good], { TOOLGATE_PORT: '7000' });
    assert.equal(ok.code, 0, ok.stderr);
    const body = JSON.parse(ok.stdout) as { settings: { env: string; overridden: boolean }[] };
    assert.deepEqual(
      body.settings.map((s) => [s.env, s.overridden]),
      [
        ['TOOLGATE_PORT', true],
        ['TOOLGATE_MAX_IN_FLIGHT', false],
      ],
    );

    // Valid by the schema, refused by the reader a start uses: an OIDC issuer without a client.
    const half = file('half.yaml', 'oidc: { issuer: https://idp.example }\n');
    const refused = await run(['config', 'check', half]);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /INPUT_INVALID/);
    assert.match(refused.stderr, /\/oidc/);

    const bad = file('bad-start.yaml', 'server: { port: 99999, colour: blue }\n');
    const data = join(dir, 'never');
    const start = await run(['--config', bad, '--data-dir', data, 'serve']);
    assert.notEqual(start.code, 0);
    assert.match(start.stderr, /not a valid settings file/);
    assert.match(start.stderr, /\/server\/port/);
    assert.doesNotMatch(start.stderr, /\n\s+at /, 'no stack trace');
    assert.equal(existsSync(data), false, 'nothing was created');

    // An unknown tag is refused, and neither the check nor a start prints the file's line.
    const tag = file('tag-cli.yaml', 'oidc: { client_id: !!custom SECRETTAG }\n');
    for (const args of [
      ['config', 'check', tag],
      ['--config', tag, '--data-dir', data, 'serve'],
    ]) {
      const r = await run(args);
      assert.notEqual(r.code, 0);
      assert.doesNotMatch(r.stderr, /SECRETTAG/);
    }
    assert.equal(existsSync(data), false);

    const schema = await run(['config', 'schema']);
    assert.equal(JSON.parse(schema.stdout).$id, 'https://toolgate.dev/schemas/settings.json');
  });
});
