/**
 * Edge benchmark: what an allowed, audited call costs over the wire against the
 * same call in process, in one run.
 *
 * The call: the demo catalog's `add_label` (reversible write, inline, no rate limit) by an agent
 * whose rolling ceilings are off (as bench/gate.ts does: the bench measures the gate, not a day's
 * allowance), with durable audit on SQLite.
 *
 *   (g) the in-process gate, as bench/gate.ts measures it: N callers, each in its own session,
 *       closed loop, `gate.invoke`, on a gateway of its own (SQLite in a temp folder);
 *   the built CLI's `toolgate serve --demo` (SQLite, its own temp folder, 127.0.0.1, port from
 *   the kernel) under load from a generator in a process of its own (bench/edge-load.ts: undici,
 *   one keep-alive connection and one request in flight per client, closed loop):
 *   (h) `GET /healthz`, the HTTP floor;
 *   (r) REST `POST /v1/sessions/:id/calls`, each client in its own session;
 *   (m) MCP 2026-07-28 `tools/call`, raw JSON-RPC, stateless, each client in its own run;
 *   (l) MCP 2025-11-25 `tools/call`, raw JSON-RPC, each client in its own MCP session;
 * each at 1, 16 and 48 clients. Then the gate again at 48 (the disk and the host drift).
 *
 * Goals: at 48 clients REST and MCP 2026-07-28 reach ≥ 40 % of the gate's calls/s with
 * p99 ≤ 3 × p50, and 2025-11-25 is no slower than 2026-07-28 (within 5 %, the run's noise). The
 * gateway's and the generator's CPU (cores busy over each measurement) are printed beside, so
 * a figure can be judged on a host the generator shares. The last line is one JSON object.
 *
 *   npm run bench:edge   (SECONDS=5 WARMUP_SECONDS=1 CLIENTS=1,16,48
 *                         PATHS=healthz,rest,mcp_2026,mcp_2025 by default; PROFILE=<dir> writes
 *                         the gateway's CPU profile there (node --cpu-prof) when it stops;
 *                         needs `npm run build`, done when stale)
 */
import { type ChildProcess, fork } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import type { Actor } from '../src/core/index.js';
import { demoExecutor } from '../src/execution/runtimes/index.js';
import type { InProcessCall } from '../src/gate/index.js';
import { openGateway } from '../src/host/toolgate.js';
import { type Replica, startReplica, stopReplica } from '../test/replicas/cluster.js';
import { ensureBuilt } from '../test/support/cli.js';
import { approvePendingReviews } from '../test/support/reviews.js';
import type { LoadFigures, LoadRequest, Path } from './edge-load.js';
import { gc, percentile, r3 } from './gate-support.js';

const SECONDS = Number(process.env.SECONDS ?? 5);
const WARMUP_SECONDS = Number(process.env.WARMUP_SECONDS ?? 1);
const CLIENTS = (process.env.CLIENTS ?? '1,16,48').split(',').map(Number);
const PATHS = (process.env.PATHS ?? 'healthz,rest,mcp_2026,mcp_2025').split(',') as Path[];
const PROFILE = process.env.PROFILE;
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const ADMIN_TOKEN = 'bench-edge-admin-token-0123456789abcdef';
const AGENT = 'edge-bench';
const ARGS = { ticket_id: 'T-1042', label: 'bug' };
const admin: Actor = { id: 'bench', via: 'library' };

/** The bench's agent: ceilings off, allowed what add_label requires. */
const BENCH_DOCS = [
  { kind: 'Agent', spec: { id: AGENT, owner: 'bench', ceilings: { windows: [] } } },
  { kind: 'Grant', spec: { agent: AGENT, capabilities: ['tickets:write'] } },
];

interface Figures extends LoadFigures {
  /** The gateway's CPU over the measurement (cores busy; 1.0 = one core). */
  readonly gateway_cpu?: number;
}

/** The demo catalog's add_label, as `serve --demo` registers it. */
function demoAddLabel(): Record<string, unknown> {
  const text = readFileSync(join(ROOT, 'demo', 'catalog.yaml'), 'utf8');
  for (const doc of parseAllDocuments(text)) {
    const d = doc.toJS() as { kind?: string; spec?: Record<string, unknown> };
    if (d.kind === 'Tool' && d.spec?.id === 'add_label') return d.spec;
  }
  throw new Error('demo/catalog.yaml has no add_label');
}

/** The in-process gate at each client count: `clients` sessions, closed loop, SECONDS. */
async function inProcessGate(counts: readonly number[]): Promise<Record<string, Figures>> {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-edge-gate-'));
  const tg = await openGateway({
    db: `sqlite:${join(dir, 'tg.db')}`,
    executor: demoExecutor(),
    caps: { maxSessionsPerAgent: 1_000 },
  });
  try {
    await tg.config.apply([...BENCH_DOCS, { kind: 'Tool', spec: demoAddLabel() }], admin);
    await approvePendingReviews(tg.admin);
    const out: Record<string, Figures> = {};
    for (const n of counts) {
      const sessions: InProcessCall[] = [];
      for (let i = 0; i < n; i++)
        sessions.push({ agentId: AGENT, sessionId: (await tg.sessions.open(AGENT)).id });
      const call = async (ctx: InProcessCall) => {
        const d = await tg.gate.invoke(ctx, 'add_label', ARGS);
        if (d.kind !== 'allow') throw new Error(`gate: ${JSON.stringify(d)}`);
      };
      const loop = async (ctx: InProcessCall, until: number, times: number[] | null) => {
        while (performance.now() < until) {
          const t0 = performance.now();
          await call(ctx);
          times?.push(performance.now() - t0);
        }
      };
      const warm = performance.now() + WARMUP_SECONDS * 1000;
      await Promise.all(sessions.map((s) => loop(s, warm, null)));
      gc();
      const times: number[] = [];
      const cpu0 = process.cpuUsage();
      const start = performance.now();
      await Promise.all(sessions.map((s) => loop(s, start + SECONDS * 1000, times)));
      const elapsed = (performance.now() - start) / 1000;
      const cpu = process.cpuUsage(cpu0);
      times.sort((a, b) => a - b);
      out[String(n)] = {
        clients: n,
        calls: times.length,
        calls_per_s: Math.round(times.length / elapsed),
        p50_ms: r3(percentile(times, 50)),
        p99_ms: r3(percentile(times, 99)),
        errors: 0,
        generator_cpu: 0,
        gateway_cpu: r3((cpu.user + cpu.system) / 1e6 / elapsed),
      };
      await Promise.all(sessions.map((s) => tg.sessions.close(s.sessionId, AGENT).catch(() => {})));
    }
    return out;
  } finally {
    await tg.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** CPU seconds (user + system) a process has used, from /proc. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of stat(5), in clock ticks (100 per second on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function admin_(base: string, method: string, path: string, body: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** The load generator: a child process running bench/edge-load.ts, one request at a time. */
function startGenerator(): Promise<{ child: ChildProcess; run(r: LoadRequest): Promise<Figures> }> {
  const child = fork(join(ROOT, 'bench', 'edge-load.ts'), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('message', () =>
      resolve({
        child,
        run: (r) =>
          new Promise((ok, fail) => {
            child.once('message', (m: { ok: boolean; figures?: Figures; error?: string }) =>
              m.ok && m.figures ? ok(m.figures) : fail(new Error(m.error)),
            );
            child.send(r);
          }),
      }),
    );
  });
}

async function overTheWire(dir: string): Promise<Record<string, Record<string, Figures>>> {
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir, { recursive: true });
  let replica: Replica | null = null;
  const generator = await startGenerator();
  try {
    replica = await startReplica('edge', {
      db: `sqlite:${join(dir, 'tg.db')}`,
      dataDir,
      cwd: dir,
      adminToken: ADMIN_TOKEN,
      env: {
        // The bench's 48 clients are one agent: its shares are raised past them, nothing else.
        TOOLGATE_MAX_SESSIONS_PER_AGENT: '1000',
        TOOLGATE_MAX_MCP_SESSIONS: '1000',
        TOOLGATE_MAX_IN_FLIGHT_PER_CALLER: '64',
        ...(PROFILE ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${PROFILE}` } : {}),
      },
      extraArgs: ['--demo'],
    });
    const base = replica.base;
    await admin_(base, 'POST', '/v1/apply?set=bench', BENCH_DOCS);
    const key = String((await admin_(base, 'POST', `/v1/agents/${AGENT}/keys`, {})).api_key);
    const pid = replica.child.pid ?? 0;
    const out: Record<string, Record<string, Figures>> = {};
    for (const path of PATHS) {
      out[path] = {};
      for (const clients of CLIENTS) {
        const c0 = cpuSeconds(pid);
        const t0 = performance.now();
        const f = await generator.run({
          path,
          base,
          key,
          clients,
          seconds: SECONDS,
          warmupSeconds: WARMUP_SECONDS,
        });
        // The gateway's CPU over warm-up and measurement alike (both at the same load).
        const cpu = (cpuSeconds(pid) - c0) / ((performance.now() - t0) / 1000);
        (out[path] as Record<string, Figures>)[String(clients)] = { ...f, gateway_cpu: r3(cpu) };
        console.log(
          `  ${path.padEnd(9)} ${String(clients).padStart(2)} clients: ${String(f.calls_per_s).padStart(6)} calls/s  p50 ${f.p50_ms} ms  p99 ${f.p99_ms} ms  gateway CPU ${r3(cpu)}  generator CPU ${f.generator_cpu}${f.errors ? `  ERRORS ${f.errors}: ${f.first_error}` : ''}`,
        );
      }
    }
    return out;
  } finally {
    generator.child.kill();
    if (replica) await stopReplica(replica);
  }
}

const loadStart = loadavg();
const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-edge-'));
try {
  ensureBuilt();
  console.log(`load average at start: ${loadStart.map((x) => x.toFixed(2)).join(' ')}`);
  console.log(`in-process gate, add_label, ${SECONDS} s each:`);
  const gate = await inProcessGate(CLIENTS);
  for (const f of Object.values(gate))
    console.log(
      `  gate      ${String(f.clients).padStart(2)} callers: ${String(f.calls_per_s).padStart(6)} calls/s  p50 ${f.p50_ms} ms  p99 ${f.p99_ms} ms  CPU ${f.gateway_cpu}`,
    );
  console.log(`serve --demo (SQLite), load from another process, ${SECONDS} s each:`);
  const wire = await overTheWire(dir);
  const top = Math.max(...CLIENTS);
  const gateAfter = (await inProcessGate([top]))[String(top)] as Figures;
  console.log(
    `  gate again ${top} callers: ${gateAfter.calls_per_s} calls/s  p50 ${gateAfter.p50_ms} ms  p99 ${gateAfter.p99_ms} ms`,
  );
  const gateTop = (gate[String(top)] as Figures).calls_per_s;
  const gateRef = Math.max(gateTop, gateAfter.calls_per_s);
  const at = (path: Path) => wire[path]?.[String(top)];
  const ratio = (path: Path) => {
    const f = at(path);
    return f ? r3(f.calls_per_s / gateRef) : null;
  };
  const tail = (path: Path) => {
    const f = at(path);
    return f ? r3(f.p99_ms / f.p50_ms) : null;
  };
  const rest = at('rest');
  const modern = at('mcp_2026');
  const legacy = at('mcp_2025');
  const goals = {
    rest_ratio_ge_0_4: (ratio('rest') ?? 0) >= 0.4,
    mcp_2026_ratio_ge_0_4: (ratio('mcp_2026') ?? 0) >= 0.4,
    rest_p99_le_3x_p50: (tail('rest') ?? Number.POSITIVE_INFINITY) <= 3,
    mcp_2026_p99_le_3x_p50: (tail('mcp_2026') ?? Number.POSITIVE_INFINITY) <= 3,
    mcp_2025_no_slower: !!legacy && !!modern && legacy.calls_per_s >= 0.95 * modern.calls_per_s,
  };
  const result = {
    bench: 'edge',
    seconds: SECONDS,
    clients: CLIENTS,
    tool: 'demo add_label (reversible_write, inline, no rate limit, ceilings off)',
    store: 'sqlite',
    node: process.version,
    cpus: cpus().length,
    load_average_1m: { start: r3(loadStart[0] ?? 0), end: r3(loadavg()[0] ?? 0) },
    gate,
    gate_again: gateAfter,
    gate_reference_calls_per_s: gateRef,
    wire,
    ratio_to_gate: {
      healthz: ratio('healthz'),
      rest: ratio('rest'),
      mcp_2026: ratio('mcp_2026'),
      mcp_2025: ratio('mcp_2025'),
    },
    p99_over_p50: { rest: tail('rest'), mcp_2026: tail('mcp_2026'), mcp_2025: tail('mcp_2025') },
    ratio_mcp_2025_to_2026_calls_per_s:
      legacy && modern ? r3(legacy.calls_per_s / modern.calls_per_s) : null,
    ratio_mcp_2026_to_rest_calls_per_s:
      modern && rest ? r3(modern.calls_per_s / rest.calls_per_s) : null,
    goals,
    goals_met: Object.values(goals).every(Boolean),
  };
  console.log(
    `at ${top} clients, against the gate's ${gateRef} calls/s: REST ${ratio('rest')} (p99/p50 ${tail('rest')}), MCP 2026-07-28 ${ratio('mcp_2026')} (p99/p50 ${tail('mcp_2026')}), MCP 2025-11-25 ${ratio('mcp_2025')} (p99/p50 ${tail('mcp_2025')}); goals met: ${result.goals_met}`,
  );
  console.log(
    `load average at end: ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  console.log(JSON.stringify(result));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
