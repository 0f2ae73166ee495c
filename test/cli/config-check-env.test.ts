/**
 * `toolgate config check FILE` reports what `serve` refuses of the environment too, not only of the
 * file (attack round 22, Y5, Y6): serve's own options (the body limit, the caps, the shutdown
 * deadline, the user share) read by their own parsers, and the log level, the retention, the
 * loopback switch and the sandbox's uid range by the start's readers. Each is a problem at the
 * setting's key naming the variable, and `serve` refuses the same value with INPUT_INVALID (exit 2),
 * never as a bug (exit 1); a switch refuses a value it does not know instead of guessing. Beside
 * them, valid values pass both. The file also holds the shutdown deadline, the sandbox driver and
 * tracing (OpenTelemetry's variables), checked by the schema.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type CliRun, cleanEnv, ensureBuilt, listeningUrl, MAIN } from '../support/cli.js';

let dir = '';
before(() => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-config-env-'));
});
after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }));

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

function settings(name: string, body = ''): string {
  const path = join(dir, `${name}.yaml`);
  writeFileSync(path, `${body}\ndata_dir: ${join(dir, `data-${name}`)}\nserver: { port: 0 }\n`, {
    mode: 0o600,
  });
  return path;
}

/** `serve` with `env`: its exit code when it refuses, or 0 once it listened and stopped on SIGTERM. */
async function serveWith(name: string, env: NodeJS.ProcessEnv): Promise<CliRun> {
  const child = spawn(process.execPath, [MAIN, '--config', settings(name), 'serve'], {
    cwd: dir,
    env: { ...cleanEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  void listeningUrl(child).then(
    () => child.kill('SIGTERM'),
    () => child.kill('SIGKILL'),
  );
  const code = await new Promise<number>((resolve) => child.on('exit', (c) => resolve(c ?? 1)));
  return { code, stdout, stderr };
}

const BAD: readonly (readonly [string, string, string])[] = [
  ['TOOLGATE_BODY_LIMIT', '5', '/server/body_limit'],
  ['TOOLGATE_MAX_IN_FLIGHT', '0', '/limits/max_in_flight'],
  ['TOOLGATE_SHUTDOWN_DEADLINE', '99999', '/server/shutdown_deadline_seconds'],
  ['TOOLGATE_USER_SESSION_SHARE', '7', '/limits/user_session_share'],
  ['TOOLGATE_CLASSIFIED_RETENTION_DAYS', '0', '/audit/classified_retention_days'],
  ['TOOLGATE_LOG_LEVEL', 'verbose', '/server/log_level'],
  ['TOOLGATE_OUTBOUND_ALLOW_LOOPBACK', 'yes', '/outbound'],
  ['TOOLGATE_SANDBOX_UIDS', 'abc', '/sandbox/uids'],
];

test('a bad value in the environment: config check names it at its key, serve refuses it with exit 2', async () => {
  const file = settings('env-bad');
  for (const [name, value, pointer] of BAD) {
    const checked = await run(['--json', 'config', 'check', file], { [name]: value });
    assert.equal(checked.code, 2, `${name}=${value}: ${checked.stdout}${checked.stderr}`);
    const { error } = JSON.parse(checked.stdout) as {
      error: { code: string; details: { problems: { pointer: string; message: string }[] } };
    };
    assert.equal(error.code, 'INPUT_INVALID');
    const found = error.details.problems.find((p) => p.pointer === pointer);
    assert.ok(found, `${name}: ${JSON.stringify(error.details.problems)}`);
    assert.match(found.message, new RegExp(name));

    const served = await serveWith(`serve-${name}`, { [name]: value });
    assert.equal(served.code, 2, `${name}=${value}: ${served.stdout}${served.stderr}`);
    assert.doesNotMatch(served.stderr, /a bug|unexpected error/);
    assert.match(served.stderr, new RegExp(`${name}|${value}`));
  }
});

test('benign: valid values in the environment pass the check, and serve starts with them', async () => {
  const good = {
    TOOLGATE_BODY_LIMIT: '2048',
    TOOLGATE_MAX_IN_FLIGHT: '8',
    TOOLGATE_SHUTDOWN_DEADLINE: '3',
    TOOLGATE_USER_SESSION_SHARE: '0.25',
    TOOLGATE_CLASSIFIED_RETENTION_DAYS: '7',
    TOOLGATE_LOG_LEVEL: 'info',
    TOOLGATE_OUTBOUND_ALLOW_LOOPBACK: '0',
    TOOLGATE_SANDBOX_UIDS: '200000-200999',
  };
  const checked = await run(['config', 'check', settings('env-good')], good);
  assert.equal(checked.code, 0, checked.stderr);
  const served = await serveWith('serve-good', good);
  assert.equal(served.code, 0, served.stderr);
  assert.match(served.stdout, /deadline 3 s/);
});

test('the file holds the shutdown deadline, the sandbox driver and tracing; the schema checks each', async () => {
  const whole = settings(
    'file-keys',
    [
      'sandbox: { driver: namespace }',
      'tracing:',
      '  exporter: otlp',
      '  endpoint: http://127.0.0.1:4318',
      '  protocol: http/json',
      '  sampler: traceidratio',
      '  sampler_ratio: 0.5',
      '  batch: { max_queue_size: 64, max_export_batch_size: 16 }',
    ].join('\n'),
  );
  const listed = await run(['--json', 'config', 'check', whole]);
  assert.equal(listed.code, 0, listed.stderr);
  const envs = (JSON.parse(listed.stdout) as { settings: { env: string }[] }).settings.map(
    (s) => s.env,
  );
  for (const name of [
    'TOOLGATE_SANDBOX',
    'OTEL_TRACES_EXPORTER',
    'OTEL_EXPORTER_OTLP_ENDPOINT',
    'OTEL_EXPORTER_OTLP_PROTOCOL',
    'OTEL_TRACES_SAMPLER_ARG',
    'OTEL_BSP_MAX_QUEUE_SIZE',
  ]) {
    assert.ok(envs.includes(name), `${name} not taken from the file: ${envs}`);
  }
  const shutdown = join(dir, 'shutdown.yaml');
  writeFileSync(
    shutdown,
    `data_dir: ${join(dir, 'data-shutdown')}\nserver: { port: 0, shutdown_deadline_seconds: 4 }\n`,
    { mode: 0o600 },
  );
  assert.equal((await run(['config', 'check', shutdown])).code, 0);

  for (const [body, pointer] of [
    ['server: { shutdown_deadline_seconds: 7200 }', '/server/shutdown_deadline_seconds'],
    ['tracing: { exporter: zipkin }', '/tracing/exporter'],
    ['tracing: { protocol: grpc }', '/tracing/protocol'],
    ['tracing: { sampler_ratio: 2 }', '/tracing/sampler_ratio'],
    ['sandbox: { driver: docker }', '/sandbox/driver'],
  ] as const) {
    const bad = join(dir, 'bad-key.yaml');
    writeFileSync(bad, `${body}\n`, { mode: 0o600 });
    const r = await run(['--json', 'config', 'check', bad]);
    assert.equal(r.code, 2, `${body}: ${r.stdout}`);
    assert.match(r.stdout, new RegExp(`"pointer":\\s*"${pointer}"`), `${body}: ${r.stdout}`);
  }
});
