/**
 * The container image, built by buildah from this repository
 * (deploy/stage.mjs, deploy/Containerfile) and run under podman: the gateway runs as a non-root
 * user with its data folder on a volume, answers /readyz on the published port, serves a gated
 * call over REST and over MCP with an agent key issued with the admin token from the volume (and
 * a command tool in the namespace sandbox where the runtime allows it), and stops with exit code
 * 0 well within `podman stop -t 10`; `toolgate doctor` in the image reports the drivers and fails
 * for a configured one that cannot run there. One build serves every case.
 * Without buildah or podman the file is skipped, unless TOOLGATE_REQUIRE_IMAGE=1 (set by
 * `npm run test:all`), when it fails.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Agent, fetch as undiciFetch } from 'undici';
import { ensureBuilt, ROOT } from '../support/cli.js';

const required = process.env.TOOLGATE_REQUIRE_IMAGE === '1';
const missingTools = ['buildah', 'podman'].filter((t) => {
  try {
    execFileSync(t, ['--version'], { stdio: 'ignore' });
    return false;
  } catch {
    return true;
  }
});
const skip =
  missingTools.length > 0 && !required
    ? `no ${missingTools.join(' or ')} here: apt-get install buildah podman (npm run test:all does)`
    : false;

const suffix = `${process.pid}-${Date.now().toString(36)}`;
const IMAGE = `localhost/toolgate-test:${suffix}`;
const VOLUME = `toolgate-test-data-${suffix}`;
const CONTAINER = `toolgate-test-${suffix}`;
/** Global podman options and `run` options that work on this host (chosen in before()). */
let globalOpts: string[] = [];
let runOpts: string[] = [];
let context = '';

interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function exec(command: string, args: readonly string[], timeout = 120_000): Promise<Ran> {
  return new Promise((done) =>
    execFile(command, args, { timeout, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) =>
      done({
        code: err ? Number((err as { code?: number }).code ?? 1) || 1 : 0,
        stdout: String(stdout),
        stderr: String(stderr),
      }),
    ),
  );
}

const podman = (args: readonly string[], timeout?: number) =>
  exec('podman', [...globalOpts, ...args], timeout);

/** The image's command in a throwaway container (`--rm`), with the chosen run options. */
const inImage = (args: readonly string[], env: readonly string[] = [], extra: string[] = []) =>
  podman(['run', '--rm', ...runOpts, ...extra, ...env.flatMap((e) => ['-e', e]), IMAGE, ...args]);

/** deploy/stage.mjs put bubblewrap and prlimit in the image (this host has them). */
const sandboxTools = ['/usr/bin/bwrap', '/usr/bin/prlimit'].every((t) => existsSync(t));
/**
 * What the namespace sandbox needs from the container runtime: /proc unmasked (the kernel refuses
 * a new /proc mount over a masked one) and a seccomp profile that lets bubblewrap name its UTS
 * namespace (the default one refuses sethostname without CAP_SYS_ADMIN in the container).
 */
const USERNS = ['--security-opt', 'unmask=/proc/*', '--security-opt', 'seccomp=unconfined'];

/**
 * podman's defaults fail on some hosts, and this kind of machine is one: root without
 * CAP_SYS_RESOURCE cannot let the runtime raise the container's open-files and process limits
 * (it refuses even the host's own process limit), and crun refuses cgroup v1 beside a cgroup v2
 * tree that has a controller. The first of these that runs the image's `--version` is used.
 */
async function chooseRuntime(): Promise<void> {
  const limits = readFileSync('/proc/self/limits', 'utf8');
  const files = /Max open files\s+(\d+)\s+(\d+)/.exec(limits);
  const ulimits = [
    '--ulimit',
    `nofile=${files?.[1] ?? 1024}:${files?.[2] ?? 1024}`,
    '--ulimit',
    'nproc=4096:4096',
  ];
  const tried: string[] = [];
  for (const g of [[], ['--runtime', 'runc']]) {
    for (const r of [[], ulimits]) {
      globalOpts = g;
      runOpts = r;
      const ran = await inImage(['--version']);
      if (ran.code === 0 && ran.stdout.trim() !== '') return;
      tried.push(`podman ${[...g, 'run', ...r].join(' ')}: ${ran.stderr.trim()}`);
    }
  }
  throw new Error(`the image does not run under podman here:\n${tried.join('\n')}`);
}

before(async () => {
  if (skip) return;
  assert.deepEqual(missingTools, [], 'TOOLGATE_REQUIRE_IMAGE=1 but buildah or podman is missing');
  ensureBuilt();
  context = mkdtempSync(join(tmpdir(), 'toolgate-image-'));
  execFileSync(process.execPath, [join(ROOT, 'deploy', 'stage.mjs'), context], { stdio: 'pipe' });
  const built = await exec('buildah', [
    'build',
    '--quiet',
    '-f',
    join(context, 'Containerfile'),
    '-t',
    IMAGE,
    context,
  ]);
  assert.equal(built.code, 0, built.stderr);
  await chooseRuntime();
});

after(async () => {
  if (skip) return;
  await podman(['rm', '--force', '--time', '0', CONTAINER]);
  await podman(['volume', 'rm', '--force', VOLUME]);
  await exec('buildah', ['rmi', '--force', IMAGE]);
  if (context) rmSync(context, { recursive: true, force: true });
});

/** Every HTTP connection of this file, closed before the container is stopped. */
const http = new Agent();

/** Waits for /readyz on the published port; resolves to the base URL. */
async function ready(port: string): Promise<string> {
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const res = await undiciFetch(`${base}/readyz`, { dispatcher: http });
      if (res.status === 200) return base;
      last = `${res.status} ${await res.text()}`;
    } catch (err) {
      last = String(err);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const logs = await podman(['logs', CONTAINER]);
  throw new Error(`/readyz never answered 200 (${last}):\n${logs.stdout}${logs.stderr}`);
}

describe('the container image under podman', { skip }, () => {
  test('serve runs as a non-root user on a data volume, answers /readyz, a gated call over REST and MCP, and stops cleanly within podman stop -t 10', async () => {
    const started = await podman([
      'run',
      '--detach',
      '--name',
      CONTAINER,
      ...runOpts,
      ...(sandboxTools ? USERNS : []),
      '--publish',
      '127.0.0.1::8080',
      '--volume',
      `${VOLUME}:/data`,
      IMAGE,
      'serve',
      '--demo',
    ]);
    assert.equal(started.code, 0, started.stderr);
    const port = (await podman(['port', CONTAINER, '8080/tcp'])).stdout.trim().split(':').pop();
    assert.match(port ?? '', /^\d+$/);
    const base = await ready(port ?? '');

    const pid = (await podman(['inspect', CONTAINER, '--format', '{{.State.Pid}}'])).stdout.trim();
    const uid = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    assert.equal(uid, '65532', 'the gateway runs as the image user, not root');

    const mount = (
      await podman(['volume', 'inspect', VOLUME, '--format', '{{.Mountpoint}}'])
    ).stdout.trim();
    const tokenFile = join(mount, 'admin-token');
    assert.equal(statSync(tokenFile).uid, 65532);
    assert.equal(statSync(join(mount, 'toolgate.db')).mode & 0o077, 0);
    const adminToken = readFileSync(tokenFile, 'utf8').trim();
    // The container's log is stdout: the first start names the token's file, never the token
    // (attack round 21, X7).
    const log = await podman(['logs', CONTAINER]);
    assert.match(log.stdout, /admin token: created now in \/data\/admin-token/);
    assert.ok(
      !`${log.stdout}${log.stderr}`.includes(adminToken),
      'the admin token is not in the log',
    );

    const rest = async (method: string, path: string, token: string, body?: unknown) => {
      const res = await undiciFetch(`${base}${path}`, {
        method,
        dispatcher: http,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const issued = await rest('POST', '/v1/agents/support-bot/keys', adminToken);
    assert.equal(issued.status, 201, JSON.stringify(issued.body));
    const apiKey = String(issued.body.api_key);

    const session = await rest('POST', '/v1/sessions', apiKey, {});
    assert.equal(session.status, 201, JSON.stringify(session.body));
    const called = await rest('POST', `/v1/sessions/${session.body.id}/calls`, apiKey, {
      tool: 'search_tickets',
      arguments: { query: 'refund' },
    });
    assert.equal(called.status, 200, JSON.stringify(called.body));
    if (sandboxTools) {
      // A command tool in the namespace sandbox, inside the container, as the image's user.
      const ops = await rest('POST', '/v1/agents/ops-bot/keys', adminToken);
      const opsKey = String(ops.body.api_key);
      const opsSession = await rest('POST', '/v1/sessions', opsKey, {});
      const read = await rest('POST', `/v1/sessions/${opsSession.body.id}/calls`, opsKey, {
        tool: 'read_file',
        arguments: { path: 'runbooks/refunds.md' },
      });
      assert.equal(read.status, 200, JSON.stringify(read.body));
      assert.match(JSON.stringify(read.body.output), /Refunds runbook/);
    }

    const client = new Client({ name: 'image-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${apiKey}` } },
        fetch: (url, init) =>
          undiciFetch(url, {
            ...(init as object),
            dispatcher: http,
          }) as unknown as Promise<Response>,
      }),
    );
    const result = await client.callTool({ name: 'search_tickets', arguments: { query: 'x' } });
    assert.equal(result.isError ?? false, false, JSON.stringify(result));
    await client.close();
    // Nothing held open while it stops: a drain of open connections is the shutdown test's.
    await http.close();

    const t0 = Date.now();
    const stopped = await podman(['stop', '--time', '10', CONTAINER], 30_000);
    const seconds = (Date.now() - t0) / 1000;
    assert.equal(stopped.code, 0, stopped.stderr);
    assert.ok(seconds < 8, `stopped in ${seconds.toFixed(1)} s, not by the runtime's kill`);
    const exit = await podman(['inspect', CONTAINER, '--format', '{{.State.ExitCode}}']);
    assert.equal(exit.stdout.trim(), '0', (await podman(['logs', CONTAINER])).stderr);
  });

  test('toolgate doctor in the image reports every driver and exits 1 when the configured one cannot run there', async (t) => {
    // The image holds no gVisor, whatever the host has.
    const report = await inImage(['--json', 'doctor', '--sandbox', 'gvisor']);
    assert.equal(report.code, 5, report.stdout + report.stderr);
    const { drivers, configured } = JSON.parse(report.stdout) as {
      drivers: { driver: string; available: boolean }[];
      configured: unknown;
    };
    assert.deepEqual(
      drivers.map((d) => d.driver),
      ['process', 'namespace', 'gvisor'],
    );
    assert.deepEqual(configured, { driver: 'gvisor', available: false });
    // Under the runtime's defaults bubblewrap cannot make its namespaces: namespace is missing.
    const byEnv = await inImage(['doctor'], ['TOOLGATE_SANDBOX=namespace']);
    assert.equal(byEnv.code, 5, byEnv.stdout + byEnv.stderr);
    assert.match(byEnv.stdout, /namespace\s+MISSING/);
    assert.match(byEnv.stderr, /configured sandbox driver namespace does not work here/);
    if (!sandboxTools) {
      t.diagnostic('no bubblewrap or prlimit on this host: the image has no namespace sandbox');
      return;
    }
    const allowed = await inImage(['doctor', '--sandbox', 'namespace'], [], USERNS);
    assert.equal(allowed.code, 0, allowed.stdout + allowed.stderr);
    assert.match(allowed.stdout, /namespace\s+works/);
  });
});
