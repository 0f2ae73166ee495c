/**
 * Robustness of the MCP front under load, against the real `toolgate serve --demo` process:
 * MCP_LOAD_SESSIONS concurrent SDK clients (200 by default, shared by four agents) call tools for
 * MCP_LOAD_SECONDS (20 by default) on loopback. Every call must get an answer fast: allowed, a
 * tool error result carrying a gate decision, or — past the gateway's admission limits — an
 * immediate 429/503 refusal with Retry-After; never a protocol error, and no answer
 * may take longer than MAX_WAIT_MS (before admission control, some waited 60 s and timed out).
 * The gateway's resident memory must stay bounded, and a client that disconnects in the middle of
 * calls must not hurt anyone else.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { cleanEnv, ensureBuilt, listeningUrl, MAIN } from '../support/cli.js';
import { HeapProbe, inspectorUrl, type SettledMemory } from '../support/heap-probe.js';
import type { LoadGo, LoadJob, LoadResult } from '../support/mcp-load-worker.js';

const SESSIONS = Number(process.env.MCP_LOAD_SESSIONS ?? 200);
const SECONDS = Number(process.env.MCP_LOAD_SECONDS ?? 20);
const AGENTS = ['support-bot', 'load-1', 'load-2', 'load-3'];
/** Load generator threads: one thread driving 200 SDK clients would mostly measure itself. */
const WORKERS = 4;
/**
 * The longest any one answer may take, from the client's send to its answer: the admission queue
 * waits at most 2 s, so a few seconds cover it and a loaded host. Measured on the shared 2-core
 * host: p50 0.3 s and maximum 0.7 s at low load; p50 0.7-1.8 s and maximum 2-4.5 s with a second
 * copy of this test running beside it. The earlier ~20 s tail was calls on new connections left
 * unaccepted in the listen queue (src/edge/mcp/keep-alive-hint.ts, test/support/mcp-load-worker.ts).
 */
const MAX_WAIT_MS = Number(process.env.MCP_LOAD_MAX_WAIT_MS ?? 5_000);

let dir: string;
let server: ChildProcess;
let base = '';
let apiKey = '';
let probe: HeapProbe;
const agentKeys: string[] = [];

const MB = 1024 * 1024;
/** Calls one client makes before the first measurement, so compiled code and caches are in it. */
const WARM_CALLS = 300;
const kept = (m: SettledMemory) => m.heapUsed + m.external;
const mb = (m: SettledMemory) => ({
  kept: Math.round((kept(m) / MB) * 10) / 10,
  rss: Math.round(m.rss / MB),
});

function rssKb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
}

before(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-mcp-load-'));
  const common = ['--db', `sqlite:${join(dir, 'tg.db')}`, '--data-dir', join(dir, 'data')];
  server = spawn(
    process.execPath,
    [
      // The leak check asks the gateway itself for its live heap (test/support/heap-probe.ts).
      '--inspect=127.0.0.1:0',
      MAIN,
      ...common,
      'serve',
      '--demo',
      '--port',
      '0',
      '--admin-token-file',
      join(dir, 'admin'),
      // Extra serve flags to compare limits by hand, e.g. MCP_LOAD_FLAGS='--max-in-flight 16'.
      ...(process.env.MCP_LOAD_FLAGS ?? '').split(' ').filter(Boolean),
    ],
    { cwd: dir, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const inspector = inspectorUrl(server);
  base = await listeningUrl(server);
  probe = await HeapProbe.connect(await inspector);
  // A built-in tool with no rate limit (the demo's have per-run limits), so allowed calls flow
  // for the whole run; support-bot holds docs:read.
  writeFileSync(
    join(dir, 'load-tool.yaml'),
    [
      'kind: Tool',
      'spec:',
      '  id: load_echo',
      '  version: 1.0.0',
      '  name: load_echo',
      '  description: Return an empty object; used to put load on the gateway.',
      '  owner: qa',
      '  input_schema: { type: object, additionalProperties: false, properties: {} }',
      '  output_schema: { type: object }',
      '  action_class: read',
      '  data_access: public',
      '  egress: { mode: none }',
      '  access_tier: public',
      '  required_capabilities: ["docs:read"]',
      '  runtime: { kind: inline, handler: noop }',
      '  provenance: internal',
      ...AGENTS.slice(1).flatMap((id) => [
        '---',
        'kind: Agent',
        `spec: { id: ${id}, display_name: ${id}, owner: qa }`,
        '---',
        'kind: Grant',
        `spec: { agent: ${id}, capabilities: ["docs:read"] }`,
      ]),
      '',
    ].join('\n'),
  );
  await new Promise<void>((resolve, reject) => {
    execFile(
      process.execPath,
      [MAIN, ...common, 'apply', '-f', join(dir, 'load-tool.yaml')],
      { cwd: dir, env: cleanEnv() },
      (err, _stdout, stderr) => (err ? reject(new Error(stderr)) : resolve()),
    );
  });
  for (const agent of AGENTS) {
    agentKeys.push(
      await new Promise<string>((resolve, reject) => {
        execFile(
          process.execPath,
          [MAIN, ...common, '--json', 'agents', 'create', agent],
          { cwd: dir, env: cleanEnv() },
          (err, stdout, stderr) =>
            err
              ? reject(new Error(stderr))
              : resolve((JSON.parse(stdout) as { api_key: string }).api_key),
        );
      }),
    );
  }
  apiKey = agentKeys[0] ?? '';
});

after(async () => {
  probe?.close();
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

async function client(key = apiKey): Promise<Client> {
  const c = new Client({ name: 'load', version: '1.0.0' });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  return c;
}

/**
 * Starts one load generator in a worker thread (with the same TypeScript loader as this file);
 * `ready` resolves once its clients are connected, `result` after `go`.
 */
function worker(job: LoadJob) {
  // A worker does not inherit the --import loader: it registers tsx itself, then loads the file.
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const entry = JSON.stringify(new URL('../support/mcp-load-worker.ts', import.meta.url).href);
  const w = new Worker(`import(${tsx}).then((m) => { m.register(); return import(${entry}); })`, {
    eval: true,
    workerData: job,
  });
  let fail: (err: Error) => void = () => {};
  const failed = new Promise<never>((_, reject) => {
    fail = reject;
  });
  w.once('error', (err) => fail(err));
  const next = () =>
    Promise.race([failed, new Promise<unknown>((resolve) => w.once('message', resolve))]).then(
      (m) => {
        if (typeof m === 'object' && m !== null && 'fatal' in m) throw new Error(String(m.fatal));
        return m;
      },
    );
  const ready = next();
  return {
    ready,
    go: (end: number): Promise<LoadResult> => {
      const result = next() as Promise<LoadResult>;
      w.postMessage({ end } satisfies LoadGo);
      return result.finally(() => void w.terminate());
    },
  };
}

test(`${SESSIONS} concurrent MCP sessions call tools for ${SECONDS} s; every answer comes within a bound, memory stays bounded`, {
  timeout: (SECONDS + 180) * 1000,
}, async () => {
  const pid = server.pid as number;
  const samples: number[] = [];
  const sampler = setInterval(() => samples.push(rssKb(pid)), 1000);
  // What the gateway keeps once warm (its code compiled, its caches filled by a few hundred calls
  // of one client, since gone), with every client connected, and after the load: each after a
  // full collection (resident memory alone measures when V8 last collected).
  const warmer = await client();
  for (let i = 0; i < WARM_CALLS; i++) {
    await warmer.callTool(
      i % 10 === 0
        ? { name: 'post_webhook', arguments: { url: 'https://evil.example/', payload: {} } }
        : { name: 'load_echo', arguments: {} },
    );
  }
  await warmer.close();
  const idle = await probe.settle();
  // Sessions are shared by four agents, round robin; each worker drives a quarter of them.
  const keys = Array.from({ length: SESSIONS }, (_, i) => agentKeys[i % agentKeys.length] ?? '');
  const per = Math.ceil(SESSIONS / WORKERS);
  // Everyone connects first, then all call for SECONDS together.
  const workers = Array.from({ length: WORKERS }, (_, w) =>
    worker({ base, keys: keys.slice(w * per, (w + 1) * per), first: w * per }),
  );
  await Promise.all(workers.map((w) => w.ready));
  const connected = await probe.settle();
  const end = Date.now() + SECONDS * 1000;
  const results = await Promise.all(workers.map((w) => w.go(end)));
  clearInterval(sampler);
  const loaded = await probe.settle();
  const counts = { allowed: 0, denied: 0, shed: 0, errors: 0 };
  const waits: number[] = [];
  const errors: string[] = [];
  for (const r of results) {
    for (const k of Object.keys(counts) as (keyof typeof counts)[]) counts[k] += r.counts[k];
    waits.push(...r.waits);
    errors.push(...r.errors);
  }
  waits.sort((a, b) => a - b);
  const pct = (p: number) => waits[Math.min(waits.length - 1, Math.floor(waits.length * p))] ?? 0;
  const wait_ms = { p50: pct(0.5), p99: pct(0.99), max: waits.at(-1) ?? 0 };
  const client_lag_ms = Math.max(...results.map((r) => r.clientLagMs));
  const connects_under_load = results.reduce((n, r) => n + r.connectsUnderLoad, 0);
  const slowest = results
    .flatMap((r) => r.slow)
    .sort((a, b) => b.ms - a.ms)
    .slice(0, 5);
  console.log(
    `# mcp load: ${JSON.stringify({ ...counts, sessions: SESSIONS, seconds: SECONDS, wait_ms, client_lag_ms, connects_under_load, slowest, rss_kb: { first: samples[0], last: samples.at(-1), peak: Math.max(...samples) }, settled_mb: { idle: mb(idle), connected: mb(connected), after: mb(loaded) } })}`,
  );
  assert.equal(counts.errors, 0, `protocol errors under load: ${errors.join('; ')}`);
  // The point of admission control: nobody waits long, whatever the answer was.
  assert.ok(
    wait_ms.max <= MAX_WAIT_MS,
    `an answer took ${wait_ms.max} ms (limit ${MAX_WAIT_MS} ms): ${JSON.stringify(wait_ms)}`,
  );
  assert.ok(counts.allowed > SESSIONS, `too few calls completed: ${JSON.stringify(counts)}`);
  assert.ok(counts.denied > 0);
  // Bounded: what the gateway keeps does not grow with the calls it served. The clients end their
  // sessions when the load stops, so afterwards the gateway should keep what it kept warm before
  // they came: its live heap and external memory within a small slack of that — a leak of a few
  // kB per call shows at ~10k calls, one of 20 kB per session at 200. A session
  // itself is light (an SDK server and transport each: ~30 kB measured). Resident memory after
  // the same collections carries allocator slack as well: within 100 MB.
  const calls = counts.allowed + counts.denied;
  const report = JSON.stringify({
    calls,
    idle: mb(idle),
    connected: mb(connected),
    after: mb(loaded),
  });
  assert.ok(
    kept(loaded) - kept(idle) < 3 * MB + calls * 128,
    `the gateway kept memory after the load: ${report}`,
  );
  assert.ok(
    (kept(connected) - kept(idle)) / SESSIONS < 60 * 1024,
    `an open session holds too much memory: ${report}`,
  );
  assert.ok(loaded.rss - idle.rss < 100 * MB, `resident memory grew under load: ${report}`);
  const health = await fetch(`${base}/healthz`);
  assert.equal(health.status, 200);
});

test('a client that disconnects in the middle of calls leaves the others served', async () => {
  const steady = await client();
  const leaver = new AbortController();
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${apiKey}` }, signal: leaver.signal },
  });
  const c = new Client({ name: 'leaver', version: '1.0.0' });
  await c.connect(transport);
  const inflight = Array.from({ length: 20 }, () =>
    c.callTool({ name: 'get_order', arguments: { order_id: 'ORD-004211' } }).catch(() => null),
  );
  leaver.abort();
  await Promise.all(inflight);
  await c.close().catch(() => {});
  const result = (await steady.callTool({
    name: 'get_order',
    arguments: { order_id: 'ORD-004211' },
  })) as CallToolResult;
  assert.notEqual(result.isError, true);
  await steady.close();
  assert.equal((await fetch(`${base}/healthz`)).status, 200);
});
