/**
 * MCP gateway benchmark, in one run.
 *
 * Part 1: tools/call round trips to server-everything's `echo` tool (run over stdio), one call in
 * flight, after a warm-up:
 *   (a) direct: the v1 SDK client over stdio to the server;
 *   (b) plain proxy: the v1 SDK client over Streamable HTTP through mcp-proxy from npm
 *       (`mcp-proxy --host 127.0.0.1 --port P --server stream -- node EV stdio`), no security;
 *   (c) toolgate, 2025-11-25: the v1 SDK client (an MCP session) over Streamable HTTP to
 *       toolgate's /mcp — bearer authentication, the whole gate (schema, grants, policy, limits,
 *       flow, approvals), durable audit (SQLite, group commit), the upstream in the namespace
 *       sandbox (bubblewrap), pinned;
 *   (d) toolgate, 2026-07-28: the v2 SDK client pinned to 2026-07-28 (stateless, the run handle
 *       carried in `_meta`) to the same gateway, the same tool.
 *
 * Part 2: replicas. The built CLI's `serve` on a fresh PostgreSQL database (the test harness's
 * throwaway server), behind HAProxy (round-robin, test/replicas/cluster.ts): one replica, then
 * two, then three, each under the same load — the v2 client pinned to 2026-07-28, CONCURRENCY calls
 * in flight, each worker in its own run, an inline tool (so the gateway, not an upstream, is
 * measured). Each replica stages its audit records and the elected one integrates them
 * (docs/architecture.md §5, "The audit log across replicas"). For each configuration, the CPU
 * each process used over the measured window (bench/process-cpu.ts: every replica, PostgreSQL's
 * server processes, HAProxy, and this process, the load generator), what the database's sessions
 * waited on (sampled), and the host's load average. PROFILE=<dir> has each replica write a CPU
 * profile (`--cpu-prof`) under <dir>/<replicas>/ when it stops.
 *
 * Prints p50, p99 and calls/s of each. The last line printed is one JSON object with the ratios:
 * modern/legacy p50 (goal <= 1.0), toolgate/mcp-proxy p50 (goal <= 0.9, for each era), and
 * two/one and three/one replicas' calls/s (goal: two >= 1.25 x one). ONLY=replicas runs part 2
 * alone (part 1's figures are then null); AGENTS=n has part 2's workers call as n agents in turn
 * (default 1, as before).
 *
 *   npm run bench:mcp   (CALLS=2000 WARMUP=200 REPLICA_CALLS=3000 CONCURRENCY=8 SECONDS=15 by
 *                        default: each configuration stops at its count or after SECONDS, so the
 *                        run stays near 3 minutes on a loaded host; needs `npm run build` (done
 *                        when stale), haproxy and PostgreSQL's binaries)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as HttpV2,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import pg from 'pg';
import { startPostgres } from '../scripts/postgres-harness.mjs';
import type { Actor } from '../src/core/index.js';
import { loadMasterKey } from '../src/domain/credentials/index.js';
import { approvalSigner, auditSigner } from '../src/edge/cli/runtime-files.js';
import { RUN_META_KEY } from '../src/edge/mcp/run-meta.js';
import { buildServer } from '../src/edge/rest/index.js';
import { openGateway, openToolgate } from '../src/host/toolgate.js';
import { DEFAULT_ORIGIN } from '../src/records/audit/index.js';
import { LOCK_CLASSES } from '../src/records/store/index.js';
import { CHAIN_LOCK_KEY } from '../src/records/store/postgres/audit-append.js';
import {
  type Balancer,
  type Replica,
  startBalancer,
  startReplicas,
  stopReplica,
} from '../test/replicas/cluster.js';
import { ensureBuilt } from '../test/support/cli.js';
import { approvePendingReviews } from '../test/support/reviews.js';
import { type CpuShare, cpuMeter, parentOf, withChildren } from './process-cpu.js';

// The SDK's HTTP client adds one abort listener per request to its session's signal; over
// thousands of calls Node warns of a leak that is the client's, not any gateway's.
setMaxListeners(0);

const CALLS = Number(process.env.CALLS ?? 2_000);
const WARMUP = Number(process.env.WARMUP ?? 200);
const REPLICA_CALLS = Number(process.env.REPLICA_CALLS ?? 3_000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8);
/** Agents the replica part's workers call as, in turn. */
const AGENTS = Math.max(1, Number(process.env.AGENTS ?? 1));
/** Each configuration's measured calls stop after this long, so a loaded host still finishes. */
const SECONDS = Number(process.env.SECONDS ?? 15);
/** A warm-up stops after this long too (or at its count). */
const WARMUP_SECONDS = 3;
const MODERN = '2026-07-28';
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const NODE_MODULES = join(ROOT, 'node_modules');
const EVERYTHING = join(NODE_MODULES, '@modelcontextprotocol/server-everything/dist/index.js');
const MCP_PROXY = join(NODE_MODULES, '.bin', 'mcp-proxy');
const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef0123';
const admin: Actor = { id: 'bench', via: 'library' };

interface Figures {
  readonly p50_ms: number;
  readonly p99_ms: number;
  readonly calls_per_s: number;
  /** Calls measured: CALLS, or fewer when the configuration's SECONDS ran out first. */
  readonly calls: number;
}

/** One tools/call; `i` makes each call's arguments distinct. */
type Call = (i: number) => Promise<void>;

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

/**
 * `calls` calls (or as many as SECONDS allow) after `warmup` (at most WARMUP_SECONDS), one in
 * flight per worker: the
 * latency of each, and the calls completed per second of wall time.
 */
async function measure(
  workers: readonly Call[],
  calls: number,
  warmup: number = WARMUP,
  window: { start(): void; stop(): void } | null = null,
): Promise<Figures> {
  const times: number[] = [];
  let next = 0;
  let deadline = performance.now() + WARMUP_SECONDS * 1000;
  const run = async (call: Call, total: number, record: boolean) => {
    while (next < total && performance.now() < deadline) {
      const i = next++;
      const t0 = performance.now();
      await call(i);
      if (record) times.push(performance.now() - t0);
    }
  };
  await Promise.all(workers.map((w) => run(w, warmup, false)));
  next = 0;
  const start = performance.now();
  deadline = start + SECONDS * 1000;
  window?.start();
  await Promise.all(workers.map((w) => run(w, calls, true)));
  window?.stop();
  const total = performance.now() - start;
  times.sort((a, b) => a - b);
  return {
    p50_ms: round(quantile(times, 0.5)),
    p99_ms: round(quantile(times, 0.99)),
    calls_per_s: round((times.length / total) * 1000),
    calls: times.length,
  };
}

type ToolResult = { isError?: unknown; _meta?: Record<string, unknown> };

function checked(r: ToolResult): ToolResult {
  if (r.isError) throw new Error(`call failed: ${JSON.stringify(r)}`);
  return r;
}

/** Sequential calls of server-everything's echo with a v1 client. */
function echoV1(client: Client): Call {
  return async (i) => {
    checked(
      (await client.callTool({ name: 'echo', arguments: { message: `m${i}` } })) as ToolResult,
    );
  };
}

/** Calls of `name` with a v2 client pinned to 2026-07-28, carrying the run handle it was given. */
function callV2(client: ClientV2, name: string, run?: string): Call {
  let handle = run;
  return async (i) => {
    const r = checked(
      (await client.callTool({
        name,
        arguments: { message: `m${i}` },
        ...(handle ? { _meta: { [RUN_META_KEY]: handle } } : {}),
      })) as ToolResult,
    );
    const given = r._meta?.[RUN_META_KEY];
    if (handle === undefined && typeof given === 'string') handle = given;
  };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

async function httpClient(url: string, token?: string): Promise<Client> {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: token ? { headers: { authorization: `Bearer ${token}` } } : {},
    }),
  );
  return client;
}

async function modernClient(url: string, token: string): Promise<ClientV2> {
  const client = new ClientV2(
    { name: 'bench', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: MODERN } } },
  );
  await client.connect(
    new HttpV2(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  return client;
}

async function direct(): Promise<Figures> {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [EVERYTHING, 'stdio'],
      stderr: 'ignore',
    }),
  );
  try {
    return await measure([echoV1(client)], CALLS);
  } finally {
    await client.close();
  }
}

async function plainProxy(): Promise<Figures> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    MCP_PROXY,
    [
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--server',
      'stream',
      '--',
      process.execPath,
      EVERYTHING,
      'stdio',
    ],
    { stdio: 'ignore' },
  );
  try {
    let client: Client | null = null;
    const until = Date.now() + 30_000;
    while (!client) {
      try {
        client = await httpClient(`http://127.0.0.1:${port}/mcp`);
      } catch (err) {
        if (Date.now() > until) throw err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    try {
      return await measure([echoV1(client)], CALLS);
    } finally {
      await client.close();
    }
  } finally {
    child.kill('SIGTERM');
  }
}

/** (c) and (d): one gateway, the same upstream tool, a v1 (session) and a v2 (stateless) client. */
async function toolgate(): Promise<{ legacy: Figures; modern: Figures }> {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-mcp-'));
  const tg = await openGateway({ db: `sqlite:${join(dir, 'tg.db')}` });
  try {
    await tg.config.apply(
      [
        {
          kind: 'Agent',
          spec: { id: 'bench-agent', display_name: 'Bench', description: 'Bench.', owner: 'bench' },
        },
        { kind: 'Grant', spec: { agent: 'bench-agent', capabilities: ['everything:use'] } },
        {
          kind: 'Provider',
          spec: {
            name: 'everything',
            owner: 'bench',
            command: ['/usr/bin/node', EVERYTHING, 'stdio'],
            isolation: 'namespace',
            binds: [{ source: NODE_MODULES }],
          },
        },
      ],
      admin,
    );
    await tg.providers.classify(
      'everything',
      'echo',
      {
        action_class: 'read',
        data_access: 'public',
        egress: { mode: 'none' },
        access_tier: 'public',
        required_capabilities: ['everything:use'],
      },
      admin,
    );
    // A classified upstream tool is offered once its security review is recorded.
    await approvePendingReviews(tg.admin);
    const key = (await tg.keys.issue('bench-agent', admin)).apiKey;
    const app = await buildServer(tg, { adminToken: ADMIN_TOKEN });
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const v1 = await httpClient(`${base}/mcp`, key);
      let legacy: Figures;
      try {
        legacy = await measure([echoV1(v1)], CALLS);
      } finally {
        await v1.close();
      }
      const v2 = await modernClient(`${base}/mcp`, key);
      try {
        return { legacy, modern: await measure([callV2(v2, 'echo')], CALLS) };
      } finally {
        await v2.close();
      }
    } finally {
      await app.close();
    }
  } finally {
    await tg.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function freshDatabase(adminUrl: string): Promise<string> {
  const name = `bench_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const c = new pg.Client(adminUrl);
  await c.connect();
  await c.query(`create database ${name}`);
  await c.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

interface Replicated {
  readonly figures: Figures;
  /** Each process group's CPU over the measured window. */
  readonly cpu: Record<string, CpuShare>;
  /**
   * What the database's sessions were doing over the window, sampled every 20 ms: per cent of
   * samples by state and wait (`active Lock:advisory` is a session waiting for an advisory lock).
   */
  readonly pg_waits: Record<string, number>;
  /** The host's 1-minute load average at the end of the window. */
  readonly load_1m: number;
}

/** Advisory lock classes by number (key-lock.ts); class 1 holds the audit chain's 64-bit key. */
const LOCK_NAMES = new Map<number, string>([
  ...Object.entries(LOCK_CLASSES).map(([name, id]) => [id, name] as [number, string]),
  [Number(CHAIN_LOCK_KEY >> 32n), 'audit chain'],
]);

/** Samples pg_stat_activity of `db`'s other sessions every 20 ms between start and stop. */
function pgWaits(client: pg.Client, db: string) {
  const name = new URL(db).pathname.slice(1);
  const counts = new Map<string, number>();
  let samples = 0;
  let on = false;
  let loop: Promise<void> = Promise.resolve();
  return {
    start() {
      on = true;
      loop = (async () => {
        while (on) {
          const r = await client.query(
            `select state, wait_event_type, wait_event,
                case when wait_event_type = 'Lock' and wait_event <> 'advisory'
                  then left(regexp_replace(query, '\\s+', ' ', 'g'), 40) end as query
              from pg_stat_activity
              where datname = $1 and pid <> pg_backend_pid() and backend_type = 'client backend'`,
            [name],
          );
          // Which advisory lock the waiting sessions want, by class (the chain's is class 1).
          const locks = await client.query(
            `select l.classid::bigint as class, count(*)::int as n from pg_locks l
              join pg_database d on d.oid = l.database
              where l.locktype = 'advisory' and not l.granted and d.datname = $1 group by 1`,
            [name],
          );
          for (const row of locks.rows as { class: string; n: number }[]) {
            const key = `waiting for lock ${LOCK_NAMES.get(Number(row.class)) ?? row.class}`;
            counts.set(key, (counts.get(key) ?? 0) + row.n);
          }
          samples += 1;
          for (const row of r.rows as {
            state: string;
            wait_event_type: string | null;
            wait_event: string | null;
            query: string | null;
          }[]) {
            const key = `${row.state}${row.wait_event_type ? ` ${row.wait_event_type}:${row.wait_event}` : ''}${row.query ? ` (${row.query})` : ''}`;
            counts.set(key, (counts.get(key) ?? 0) + 1);
          }
          await new Promise((r) => setTimeout(r, 20));
        }
      })();
    },
    stop() {
      on = false;
    },
    async done(): Promise<Record<string, number>> {
      await loop;
      const out: Record<string, number> = {};
      for (const [k, n] of [...counts].sort((x, y) => y[1] - x[1]))
        out[k] = Math.round((n / Math.max(1, samples)) * 100) / 100;
      return out;
    },
  };
}

/** The replica bench's catalog: `agents`, each granted the inline tool it calls. */
function benchCatalog(agents: readonly string[]) {
  return [
    ...agents.map((id) => ({ kind: 'Agent', spec: { id, owner: 'bench' } })),
    {
      kind: 'Tool',
      spec: {
        id: 'bench_echo',
        version: '1.0.0',
        name: 'bench_echo',
        description: 'Answers with nothing; run inline by toolgate for the benchmark.',
        tags: ['bench'],
        owner: 'bench',
        input_schema: {
          type: 'object',
          additionalProperties: false,
          properties: { message: { type: 'string', maxLength: 100 } },
        },
        output_schema: { type: 'object' },
        action_class: 'read',
        data_access: 'public',
        egress: { mode: 'none' },
        access_tier: 'public',
        required_capabilities: ['bench:use'],
        runtime: { kind: 'inline', handler: 'noop' },
        provenance: 'internal',
      },
    },
    ...agents.map((agent) => ({ kind: 'Grant', spec: { agent, capabilities: ['bench:use'] } })),
  ];
}

/** `count` replicas of `serve` on a fresh PostgreSQL database behind HAProxy, under one load. */
async function replicated(adminUrl: string, count: number): Promise<Replicated> {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-replicas-'));
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir, { recursive: true });
  const db = await freshDatabase(adminUrl);
  const tg = await openToolgate({
    db,
    approvalSigner: () => approvalSigner(dataDir),
    auditSigner: () => auditSigner(dataDir, DEFAULT_ORIGIN),
    masterKey: () => loadMasterKey({ dataDir }),
    // The load generator neither leads nor integrates: the replicas do that among themselves.
    audit: { checkpoints: false, sequencer: false },
    detectors: false,
    health: false,
  });
  let replicas: Replica[] = [];
  let lb: Balancer | null = null;
  const clients: ClientV2[] = [];
  try {
    // AGENTS=n: the workers call as n agents in turn (each agent's ceiling counters are one
    // lock across replicas; one agent, the default, is their worst case).
    const agents = Array.from({ length: AGENTS }, (_, i) =>
      i === 0 ? 'bench-agent' : `bench-agent-${i}`,
    );
    await tg.admin.config.apply(benchCatalog(agents), admin);
    await approvePendingReviews(tg.admin);
    const keys: {
      key: string;
      who: NonNullable<Awaited<ReturnType<typeof tg.agent.authenticate>>>;
    }[] = [];
    for (const id of agents) {
      const key = (await tg.admin.keys.issue(id, admin)).apiKey;
      const who = await tg.agent.authenticate(key);
      if (!who) throw new Error('the bench key does not authenticate');
      keys.push({ key, who });
    }
    // PROFILE=<dir>: each replica writes a CPU profile there when it stops.
    const profile = process.env.PROFILE
      ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.PROFILE}/${count}` }
      : {};
    // The workers are few agents: their per-caller share is raised past CONCURRENCY, nothing else.
    const env = {
      TOOLGATE_MAX_IN_FLIGHT_PER_CALLER: String(Math.max(16, CONCURRENCY)),
      ...profile,
    };
    const options = { db, dataDir, cwd: dir, adminToken: ADMIN_TOKEN, env };
    replicas = await startReplicas(count, options);
    lb = await startBalancer(replicas, dir);
    const workers: Call[] = [];
    for (let w = 0; w < CONCURRENCY; w++) {
      const { key, who } = keys[w % keys.length] as (typeof keys)[number];
      const client = await modernClient(`${lb.base}/mcp`, key);
      clients.push(client);
      const run = await tg.agent.runs.mint(who, { via: 'bench' });
      workers.push(callV2(client, 'bench_echo', run.handle));
    }
    const probe = new pg.Client(db);
    await probe.connect();
    const backend = Number((await probe.query('select pg_backend_pid() as pid')).rows[0]?.pid);
    // Read while the backend lives: its parent is the postmaster.
    const postmaster = parentOf(backend) ?? backend;
    const waits = pgWaits(probe, db);
    const groups: Record<string, () => readonly number[] | 'self'> = {};
    for (const r of replicas) groups[`replica_${r.name}`] = () => [r.child.pid ?? 0];
    groups.postgres = () => withChildren(postmaster);
    groups.haproxy = () => [lb?.child.pid ?? 0];
    groups.load_generator = () => 'self';
    const meter = cpuMeter(groups);
    let cpu: Record<string, CpuShare> = {};
    const figures = await measure(workers, REPLICA_CALLS, WARMUP * 2, {
      start: () => {
        meter.start();
        waits.start();
      },
      stop: () => {
        cpu = meter.stop();
        waits.stop();
      },
    });
    const pg_waits = await waits.done();
    await probe.end();
    return { figures, cpu, pg_waits, load_1m: Math.round((loadavg()[0] ?? 0) * 100) / 100 };
  } finally {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await lb?.stop();
    await Promise.all(replicas.map((r) => stopReplica(r)));
    await tg.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const line = (label: string, f: Figures) =>
  console.log(
    `${label.padEnd(58)} p50 ${f.p50_ms} ms  p99 ${f.p99_ms} ms  ${f.calls_per_s} calls/s  (${f.calls} calls)`,
  );

const cpuLine = (r: Replicated) => {
  console.log(
    `    CPU (cores): ${Object.entries(r.cpu)
      .filter(([name]) => name !== 'host_cores')
      .map(([name, c]) => `${name} ${c.cores}`)
      .join(', ')}; load average ${r.load_1m}`,
  );
  console.log(
    `    database sessions (mean per sample): ${Object.entries(r.pg_waits)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')}`,
  );
};

ensureBuilt();
const partOne = process.env.ONLY !== 'replicas';
let a: Figures | null = null;
let b: Figures | null = null;
let c: Figures | null = null;
let d: Figures | null = null;
if (partOne) {
  a = await direct();
  line('(a) v1 client over stdio, direct:', a);
  b = await plainProxy();
  line('(b) v1 client over HTTP through mcp-proxy:', b);
  ({ legacy: c, modern: d } = await toolgate());
  line('(c) 2025-11-25 v1 client over HTTP through toolgate:', c);
  line('(d) 2026-07-28 v2 client over HTTP through toolgate:', d);
}
const loadBefore = loadavg().map((l) => Math.round(l * 100) / 100);
const postgres = await startPostgres();
const fleet: Replicated[] = [];
try {
  for (const [count, label] of [
    [1, '(e) one replica'],
    [2, '(f) two replicas'],
    [3, '(g) three replicas'],
  ] as const) {
    const r = await replicated(postgres.url, count);
    fleet.push(r);
    line(`${label} behind HAProxy, ${CONCURRENCY} in flight:`, r.figures);
    cpuLine(r);
  }
} finally {
  postgres.stop();
}
const [one, two, three] = fleet as [Replicated, Replicated, Replicated];
const ratio = (x: number, y: number) => Math.round((x / y) * 100) / 100;
const maybe = <T>(x: Figures | null, y: Figures | null, f: (x: Figures, y: Figures) => T) =>
  x && y ? f(x, y) : null;
const result = {
  bench: 'mcp',
  calls: CALLS,
  replica_calls: REPLICA_CALLS,
  concurrency: CONCURRENCY,
  agents: AGENTS,
  direct_stdio: a,
  mcp_proxy_http: b,
  toolgate_http: c,
  toolgate_modern_http: d,
  replicas_one: one,
  replicas_two: two,
  replicas_three: three,
  load_average_before: loadBefore,
  load_average_after: loadavg().map((l) => Math.round(l * 100) / 100),
  ratio_p50_b_to_a: maybe(b, a, (x, y) => ratio(x.p50_ms, y.p50_ms)),
  ratio_p50_c_to_a: maybe(c, a, (x, y) => ratio(x.p50_ms, y.p50_ms)),
  ratio_p99_c_to_a: maybe(c, a, (x, y) => ratio(x.p99_ms, y.p99_ms)),
  ratio_p50_c_to_b: maybe(c, b, (x, y) => ratio(x.p50_ms, y.p50_ms)),
  ratio_p99_c_to_b: maybe(c, b, (x, y) => ratio(x.p99_ms, y.p99_ms)),
  ratio_calls_per_s_c_to_b: maybe(c, b, (x, y) => ratio(x.calls_per_s, y.calls_per_s)),
  ratio_p50_modern_to_legacy: maybe(d, c, (x, y) => ratio(x.p50_ms, y.p50_ms)),
  ratio_p99_modern_to_legacy: maybe(d, c, (x, y) => ratio(x.p99_ms, y.p99_ms)),
  ratio_p50_modern_to_proxy: maybe(d, b, (x, y) => ratio(x.p50_ms, y.p50_ms)),
  ratio_calls_per_s_two_to_one_replica: ratio(two.figures.calls_per_s, one.figures.calls_per_s),
  ratio_calls_per_s_three_to_one_replica: ratio(three.figures.calls_per_s, one.figures.calls_per_s),
  goal_modern_over_legacy_p50_le_1: maybe(d, c, (x, y) => x.p50_ms <= y.p50_ms),
  goal_toolgate_over_proxy_p50_le_0_9:
    c && d && b ? c.p50_ms <= 0.9 * b.p50_ms && d.p50_ms <= 0.9 * b.p50_ms : null,
  goal_two_over_one_replica_calls_per_s_ge_1_25:
    two.figures.calls_per_s >= 1.25 * one.figures.calls_per_s,
};
console.log(JSON.stringify(result));
