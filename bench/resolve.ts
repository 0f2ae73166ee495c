/**
 * Resolve benchmark (docs/architecture.md §3, "Large sets"): the time the gate's `resolve` step
 * takes per call in sessions of 100, 1,000 and 10,000 tools, measured in one run on one gateway
 * (SQLite), and the whole in-process call (every step, audited) beside it. The goal is constant
 * time: the ratio of the 10,000-tool session to the 100-tool one ≈ 1. Each call names a tool
 * drawn uniformly from its session's set (a walk of the set would cost half its length on
 * average), the three sizes measured interleaved so that load on the machine falls on all alike.
 * Also the first look-up in a new session of the largest set, which other sessions hold already
 * (shared: nothing parsed again). The last line printed is one JSON object.
 *
 *   npm run bench:resolve   (SIZES=100,1000,10000 CALLS=20000 GATE_CALLS=2000 BATCH=500 by default)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Actor } from '../src/core/index.js';
import { IdempotencyStore } from '../src/domain/idempotency/index.js';
import { CallCounters } from '../src/domain/limits/index.js';
import { demoExecutor, InlineRuntime, runtimeRegistry } from '../src/execution/runtimes/index.js';
import { callContextOf } from '../src/gate/call-context.js';
import { type GateDependencies, stepDependencies } from '../src/gate/gate.js';
import { GATE_STEPS } from '../src/gate/steps/pipeline.js';
import { CallState } from '../src/gate/steps/step.js';
import { openGateway } from '../src/host/toolgate.js';
import { openStore, readRevisions } from '../src/records/store/index.js';

const SIZES = (process.env.SIZES ?? '100,1000,10000').split(',').map(Number);
const CALLS = Number(process.env.CALLS ?? 20_000);
const GATE_CALLS = Number(process.env.GATE_CALLS ?? 2_000);
const BATCH = Number(process.env.BATCH ?? 500);
const admin: Actor = { id: 'bench', via: 'library' };
const largest = Math.max(...SIZES);
const gc = (globalThis as { gc?: () => void }).gc;

/** Tool i needs the capability of the smallest size that holds it: a session of n holds tools 0..n-1. */
const capabilityOf = (i: number) => `size:n${SIZES.find((n) => i < n) ?? largest}`;
const toolName = (i: number) => `read_record_${i}`;

function definition(i: number) {
  return {
    id: `bench.${toolName(i)}`,
    version: '1.0.0',
    name: toolName(i),
    description: 'Return one record of the bench store by its id.',
    tags: ['bench'],
    owner: 'bench-team',
    input_schema: {
      type: 'object',
      additionalProperties: false,
      required: ['id'],
      properties: { id: { type: 'string', maxLength: 64 } },
    },
    output_schema: { type: 'object' },
    action_class: 'read',
    data_access: 'public',
    egress: { mode: 'none' },
    access_tier: 'public',
    required_capabilities: [capabilityOf(i)],
    runtime: { kind: 'inline', handler: 'noop' },
    provenance: 'internal',
  };
}

function percentile(sorted: readonly number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] ?? Number.NaN;
}

/** Microseconds: mean, p50, p99. */
function stats(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  const r = (x: number) => Math.round(x * 1000) / 1000;
  const mean = s.reduce((a, b) => a + b, 0) / Math.max(1, s.length);
  return { mean_us: r(mean), p50_us: r(percentile(s, 50)), p99_us: r(percentile(s, 99)) };
}

/** A deterministic stream of tool indexes below n (no Math.random: runs compare alike). */
function picker(n: number, seed: number) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % n;
  };
}

const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-resolve-'));
try {
  const url = `sqlite:${join(dir, 'toolgate.db')}`;
  const executor = demoExecutor().register('noop', () => ({}));
  const tg = await openGateway({ db: url, executor });
  const defs = Array.from({ length: largest }, (_, i) => definition(i));
  const t0 = performance.now();
  for (let i = 0; i < defs.length; i += BATCH) {
    await tg.config.apply(
      defs.slice(i, i + BATCH).map((spec) => ({ kind: 'Tool', spec })),
      admin,
    );
  }
  const registerSeconds = (performance.now() - t0) / 1000;
  // Agent of size n holds the capabilities of every size up to n: tools 0..n-1.
  await tg.config.apply(
    SIZES.flatMap((n) => [
      { kind: 'Agent', spec: { id: `agent-${n}`, owner: 'bench', ceilings: { windows: [] } } },
      {
        kind: 'Grant',
        spec: {
          agent: `agent-${n}`,
          capabilities: SIZES.filter((m) => m <= n).map((m) => `size:n${m}`),
        },
      },
    ]),
    admin,
  );

  // The steps run as the gate runs them, over the gateway's own services (as the step tests do).
  const store = await openStore(url);
  const clock = () => new Date();
  const gateDeps: GateDependencies = {
    catalog: tg.catalog,
    agents: tg.agents,
    users: tg.users,
    sessions: tg.sessions,
    approvals: tg.approvals,
    runtimes: runtimeRegistry(new InlineRuntime(executor)),
    clock,
    audit: tg.audit.writer,
    counters: new CallCounters(store),
    idempotency: new IdempotencyStore(store.db, clock),
    revisions: () => readRevisions(store.db),
  };
  const deps = stepDependencies(gateDeps, () => {});
  const step = (name: string) => {
    const found = GATE_STEPS.find((s) => s.name === name);
    if (!found) throw new Error(`no step ${name}`);
    return found;
  };
  const sessionStep = step('session');
  const resolveStep = step('resolve');
  let calls = 0;

  const sessions = new Map<number, { agentId: string; sessionId: string }>();
  for (const n of SIZES) {
    const agentId = `agent-${n}`;
    const opened = await tg.sessions.open(agentId);
    if (opened.tools.length !== n) throw new Error(`agent-${n} holds ${opened.tools.length} tools`);
    sessions.set(n, { agentId, sessionId: opened.id });
  }

  /** One resolve in session `n` of tool `i`; its time in microseconds. */
  async function resolveOnce(n: number, i: number): Promise<number> {
    const ctx = sessions.get(n);
    if (!ctx) throw new Error('no session');
    calls += 1;
    const s = new CallState(
      deps,
      callContextOf(ctx),
      toolName(i),
      { id: 'r1' },
      {},
      `call_bench_${calls}`,
      performance.now(),
    );
    const before = await sessionStep.run(s);
    if (before !== undefined) throw new Error(`session step: ${JSON.stringify(before)}`);
    const start = performance.now();
    let r = resolveStep.run(s);
    if (r instanceof Promise) r = await r;
    const us = (performance.now() - start) * 1000;
    if (r !== undefined) throw new Error(`resolve refused ${toolName(i)}: ${JSON.stringify(r)}`);
    return us;
  }

  // Warm up: every tool of every session compiled once (the tool cache), the JIT settled.
  for (const n of SIZES) for (let i = 0; i < n; i++) await resolveOnce(n, i);
  gc?.();

  const resolveUs = new Map<number, number[]>(SIZES.map((n) => [n, []]));
  const picks = new Map(SIZES.map((n, k) => [n, picker(n, 0x9e3779b9 + k)]));
  for (let c = 0; c < CALLS; c++) {
    for (const n of SIZES) {
      const pick = picks.get(n);
      if (pick) resolveUs.get(n)?.push(await resolveOnce(n, pick()));
    }
  }

  // A control: always one of the last 8 tools of each set — the worst case for a walk of the set,
  // and the same small working set at every size (what is left of the uniform ratio above is the
  // memory a larger set spreads over, not the look-up).
  const lastUs = new Map<number, number[]>(SIZES.map((n) => [n, []]));
  for (let c = 0; c < CALLS; c++) {
    for (const n of SIZES) lastUs.get(n)?.push(await resolveOnce(n, n - 1 - (c % 8)));
  }

  // The whole in-process call, audited, interleaved the same way.
  gc?.();
  const gateUs = new Map<number, number[]>(SIZES.map((n) => [n, []]));
  const gateLastUs = new Map<number, number[]>(SIZES.map((n) => [n, []]));
  const gateCall = async (n: number, i: number, into: Map<number, number[]>) => {
    const ctx = sessions.get(n);
    if (!ctx) throw new Error('no session');
    const start = performance.now();
    const d = await tg.gate.invoke(ctx, toolName(i), { id: 'r1' });
    into.get(n)?.push((performance.now() - start) * 1000);
    if (d.kind !== 'allow') throw new Error(`expected allow, got ${JSON.stringify(d)}`);
  };
  for (let c = 0; c < GATE_CALLS; c++) {
    for (const n of SIZES) {
      await gateCall(n, picks.get(n)?.() ?? 0, gateUs);
      await gateCall(n, n - 1 - (c % 8), gateLastUs);
    }
  }

  // The first look-up in a new session of the largest set, which other sessions hold already.
  const again = await tg.sessions.open(`agent-${largest}`);
  sessions.set(-1, { agentId: `agent-${largest}`, sessionId: again.id });
  const firstLookupSharedSetUs = Math.round(await resolveOnce(-1, largest - 1));

  await store.close();
  await tg.close();

  const rows = SIZES.map((size) => ({
    tools: size,
    resolve: stats(resolveUs.get(size) ?? []),
    resolve_last_tools: stats(lastUs.get(size) ?? []),
    gate_call: stats(gateUs.get(size) ?? []),
    gate_call_last_tools: stats(gateLastUs.get(size) ?? []),
  }));
  const small = rows[0];
  const big = rows[rows.length - 1];
  const ratio = (a: number | undefined, b: number | undefined) =>
    a === undefined || b === undefined ? null : Math.round((a / b) * 100) / 100;
  const result = {
    bench: 'resolve',
    sizes: SIZES,
    calls_per_size: CALLS,
    gate_calls_per_size: GATE_CALLS,
    registration_tools_per_s: Math.round(largest / registerSeconds),
    results: rows,
    ratio_resolve_mean_largest_to_smallest: ratio(big?.resolve.mean_us, small?.resolve.mean_us),
    ratio_resolve_p50_largest_to_smallest: ratio(big?.resolve.p50_us, small?.resolve.p50_us),
    ratio_resolve_last_tools_p50_largest_to_smallest: ratio(
      big?.resolve_last_tools.p50_us,
      small?.resolve_last_tools.p50_us,
    ),
    ratio_gate_p50_largest_to_smallest: ratio(big?.gate_call.p50_us, small?.gate_call.p50_us),
    ratio_gate_last_tools_p50_largest_to_smallest: ratio(
      big?.gate_call_last_tools.p50_us,
      small?.gate_call_last_tools.p50_us,
    ),
    first_resolve_new_session_of_largest_set_us: firstLookupSharedSetUs,
    goal_ratio: 1,
  };
  for (const r of rows) {
    console.log(
      `${String(r.tools).padStart(6)} tools: resolve mean ${r.resolve.mean_us} µs p50 ${r.resolve.p50_us} µs p99 ${r.resolve.p99_us} µs; last tools p50 ${r.resolve_last_tools.p50_us} µs; whole call p50 ${r.gate_call.p50_us} µs (last tools ${r.gate_call_last_tools.p50_us} µs)`,
    );
  }
  console.log(
    `resolve ${largest}/${SIZES[0]}: mean ×${result.ratio_resolve_mean_largest_to_smallest}, p50 ×${result.ratio_resolve_p50_largest_to_smallest}, last tools p50 ×${result.ratio_resolve_last_tools_p50_largest_to_smallest}; whole call p50 ×${result.ratio_gate_p50_largest_to_smallest} (last tools ×${result.ratio_gate_last_tools_p50_largest_to_smallest})`,
  );
  console.log(JSON.stringify(result));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
