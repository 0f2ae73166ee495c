/**
 * Gate benchmark: the whole pipeline in process (docs/architecture.md §1) for an ALLOWED call to a
 * no-op inline `read` tool, with durable audit on SQLite (WAL, synchronous=FULL). Floors measured
 * in the same run, on the same disk: a bare Ajv validation of the same arguments, a bare Cedar
 * evaluation of the same request, and a bare append+fsync of a 1 KB record. The pipeline runs
 * without org policies and with one Cedar policy applied as configuration (kind Policy).
 *
 * Concurrency: CONCURRENCY callers, each in its own session of the same agent (one agent
 * deployment serving many conversations at once; sessions are per conversation), closed loop.
 *
 * Then, with better-sqlite3 wrapped for the purpose, it counts the SQL statements, transactions
 * and durable commits (each an fsync of the WAL under synchronous=FULL) one allowed call issues,
 * and the same for three common variants (idempotency key, rate limit, private-data tool).
 * Informational: a raw SQLite insert+commit of the same size, and a raw group commit, to show
 * what the store itself costs. Last, the same call with tracing off and on (bench/gate-tracing.ts:
 * every call sampled, OTLP/HTTP protobuf to a collector in its own process, call by call in turn
 * with an event-loop turn after each): the overhead as a ratio of p50s, CPU per call, and spans
 * created against exported (`tracing` in the JSON). The last line printed is one JSON object.
 *
 *   npm run bench:gate   (CALLS=3000 WARMUP=1000 CONCURRENCY=64 SECONDS=5 FLOOR=3000
 *                         CPU_CALLS=2000 by default)
 */

import { closeSync, fsyncSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Ajv2020 } from 'ajv/dist/2020.js';
import BetterSqlite3 from 'better-sqlite3';
import { CedarPolicyEngine, type CedarRequest } from '../src/domain/policy/index.js';
import { demoExecutor } from '../src/execution/runtimes/index.js';
import type { InProcessCall as CallContext, CallOptions } from '../src/gate/index.js';
import { type Gateway, openGateway } from '../src/host/toolgate.js';
import {
  AGENT,
  admin,
  allowed,
  args,
  CAPABILITY,
  gc,
  inputSchema,
  r1,
  r3,
  type Stats,
  stats,
  tool,
} from './gate-support.js';
import { tracingOverhead } from './gate-tracing.js';

const CALLS = Number(process.env.CALLS ?? 3_000);
const WARMUP = Number(process.env.WARMUP ?? 1_000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 64);
const SECONDS = Number(process.env.SECONDS ?? 5);
const FLOOR = Number(process.env.FLOOR ?? 3_000);
const COUNTED = Number(process.env.COUNTED ?? 200);
const VARIANT_CALLS = Number(process.env.VARIANT_CALLS ?? 1_000);
const CPU_CALLS = Number(process.env.CPU_CALLS ?? 2_000);

const POLICY_TEXT = 'forbid (principal, action, resource) when { context.hour_utc > 99 };';

/** Times each of `n` runs of a synchronous function after `warmup` untimed runs. */
function timeSync(n: number, warmup: number, fn: (i: number) => void): number[] {
  for (let i = 0; i < warmup; i++) fn(i);
  gc();
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const s = performance.now();
    fn(i);
    out[i] = performance.now() - s;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Counting SQL: wraps better-sqlite3's prepare and Statement#run/all/get/iterate while installed.
// Durable commits are read from the WAL index (the `-shm` file): its header's change counter moves
// on every commit that appended frames to the WAL, and with synchronous=FULL each such commit is
// one fsync of the WAL; a write that changes no page (re-setting a flag to the same value) commits
// nothing and syncs nothing. A checkpoint moves nBackfill and syncs the WAL and the database file.

type StatementFn = (...params: unknown[]) => unknown;
interface StatementLike {
  readonly source: string;
  readonly reader: boolean;
}
interface StatementProto {
  run: StatementFn;
  all: StatementFn;
  get: StatementFn;
  iterate: StatementFn;
}
interface DatabaseProto {
  prepare(this: unknown, sql: string): StatementLike;
}

interface SqlTally {
  count: number;
  execUs: number;
  inTransaction: number;
  durable: number;
}

interface SqlCount {
  readonly calls: number;
  readonly statements: number;
  readonly reads: number;
  readonly writes: number;
  readonly transactions: number;
  /** Commits that appended to the WAL: one fsync each under synchronous=FULL. */
  readonly durable_commits: number;
  /** Pages (WAL frames) those commits wrote, and their bytes (frame = page + 24-byte header). */
  readonly wal_frames: number;
  readonly wal_bytes: number;
  /** WAL checkpoints run by SQLite's auto-checkpoint (each syncs the WAL and the database). */
  readonly checkpoints: number;
  /** Mean time of a commit that ran a checkpoint, against one that did not. */
  readonly checkpoint_commit_us: number;
  readonly plain_commit_us: number;
  readonly prepares: number;
  readonly prepare_us: number;
  readonly execute_us: number;
  readonly by_statement: Record<
    string,
    { per_call: number; us_per_exec: number; kind: string; durable_commits_per_call: number }
  >;
}

function shorten(sql: string): string {
  const one = sql.replace(/\s+/g, ' ').trim();
  const m =
    /^(select .*? from "?(\w+)"?)/i.exec(one) ??
    /^(insert into "?(\w+)"?)/i.exec(one) ??
    /^(update "?(\w+)"?)/i.exec(one) ??
    /^(delete from "?(\w+)"?)/i.exec(one);
  const head = m?.[1] ?? one;
  const where = / where (.*?)(?: order by| limit| returning|$)/i.exec(one)?.[1];
  const onConflict = / on conflict/i.test(one) ? ' on conflict…' : '';
  const text = `${head}${where ? ` where ${where}` : ''}${onConflict}`;
  return text.length > 110 ? `${text.slice(0, 107)}…` : text;
}

/** The WAL index header's change counter and the checkpoint's backfill count. */
function walIndex(
  fd: number,
  buf: Buffer,
): { change: number; frames: number; pageSize: number; backfill: number } {
  readSync(fd, buf, 0, buf.length, 0);
  const size = buf.readUInt16LE(14);
  return {
    change: buf.readUInt32LE(8),
    pageSize: size === 1 ? 65_536 : size,
    frames: buf.readUInt32LE(16),
    backfill: buf.readUInt32LE(96),
  };
}

async function countSql(
  dbPath: string,
  calls: number,
  run: (i: number) => Promise<void>,
): Promise<SqlCount> {
  const dbProto = BetterSqlite3.prototype as unknown as DatabaseProto;
  const originalPrepare = dbProto.prepare;
  const shm = openSync(`${dbPath}-shm`, 'r');
  const shmBuf = Buffer.alloc(104);
  let wal = walIndex(shm, shmBuf);
  const tallies = new Map<string, SqlTally>();
  let prepares = 0;
  let prepareMs = 0;
  let inTx = false;
  let transactions = 0;
  let durable = 0;
  let checkpoints = 0;
  let frames = 0;
  let checkpointUs = 0;
  let plainCommits = 0;
  let plainCommitUs = 0;
  let stmtProto: StatementProto | null = null;
  const originals: Partial<StatementProto> = {};
  const wrap = (name: keyof StatementProto) => {
    if (!stmtProto) return;
    const original = stmtProto[name];
    originals[name] = original;
    stmtProto[name] = function (this: StatementLike, ...params: unknown[]) {
      const s = performance.now();
      const out = original.apply(this, params);
      const us = (performance.now() - s) * 1000;
      const key = shorten(this.source);
      const t = tallies.get(key) ?? { count: 0, execUs: 0, inTransaction: 0, durable: 0 };
      t.count++;
      t.execUs += us;
      if (inTx) t.inTransaction++;
      tallies.set(key, t);
      const verb = this.source.trim().toLowerCase();
      if (verb.startsWith('begin')) {
        inTx = true;
        transactions++;
      } else if (verb === 'commit' || verb === 'rollback') {
        inTx = false;
      }
      if (!inTx && !verb.startsWith('select')) {
        const now = walIndex(shm, shmBuf);
        if (now.change !== wal.change) {
          durable++;
          t.durable++;
        }
        if (now.backfill !== wal.backfill && now.backfill !== 0) {
          checkpoints++;
          checkpointUs += us;
        } else if (now.change !== wal.change) {
          plainCommits++;
          plainCommitUs += us;
        }
        // The WAL restarts from frame 0 after a checkpoint: then all its frames are new.
        frames += now.frames >= wal.frames ? now.frames - wal.frames : now.frames;
        wal = now;
      }
      return out;
    };
  };
  // The store caches prepared statements, so most calls prepare nothing: find the Statement
  // prototype from a throwaway database and wrap its methods up front.
  const probe = new BetterSqlite3(':memory:');
  stmtProto = Object.getPrototypeOf(probe.prepare('select 1')) as StatementProto;
  probe.close();
  for (const name of ['run', 'all', 'get', 'iterate'] as const) wrap(name);
  dbProto.prepare = function (this: unknown, sql: string) {
    const s = performance.now();
    const stmt = originalPrepare.call(this, sql);
    prepareMs += performance.now() - s;
    prepares++;
    return stmt;
  };
  try {
    for (let i = 0; i < calls; i++) await run(i);
  } finally {
    dbProto.prepare = originalPrepare;
    const proto = stmtProto as StatementProto | null;
    if (proto) {
      for (const [name, fn] of Object.entries(originals)) proto[name as keyof StatementProto] = fn;
    }
    closeSync(shm);
  }
  let statements = 0;
  let reads = 0;
  let control = 0;
  let executeUs = 0;
  const by: SqlCount['by_statement'] = {};
  for (const [key, t] of [...tallies.entries()].sort((a, b) => b[1].count - a[1].count)) {
    const isControl = /^(begin( immediate)?|commit|rollback)$/i.test(key);
    const isRead = /^select\b/i.test(key);
    statements += t.count;
    executeUs += t.execUs;
    if (isRead) reads += t.count;
    if (isControl) control += t.count;
    by[key] = {
      per_call: r3(t.count / calls),
      us_per_exec: r1(t.execUs / t.count),
      kind: isControl
        ? 'transaction'
        : isRead
          ? 'read'
          : t.inTransaction > 0
            ? 'write (in transaction)'
            : 'write (autocommit)',
      durable_commits_per_call: r3(t.durable / calls),
    };
  }
  return {
    calls,
    statements: r3(statements / calls),
    reads: r3(reads / calls),
    writes: r3((statements - reads - control) / calls),
    transactions: r3(transactions / calls),
    durable_commits: r3(durable / calls),
    wal_frames: r3(frames / calls),
    wal_bytes: Math.round((frames * (wal.pageSize + 24)) / calls),
    checkpoints: r3(checkpoints / calls),
    checkpoint_commit_us: checkpoints > 0 ? r1(checkpointUs / checkpoints) : 0,
    plain_commit_us: plainCommits > 0 ? r1(plainCommitUs / plainCommits) : 0,
    prepares: r3(prepares / calls),
    prepare_us: r1((prepareMs * 1000) / calls),
    execute_us: r1(executeUs / calls),
    by_statement: by,
  };
}

// ---------------------------------------------------------------------------------------------

async function sequential(
  tg: Gateway,
  ctx: CallContext,
  toolName: string,
  n: number,
  warmup: number,
  options: (i: number) => CallOptions = () => ({}),
): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await allowed(tg, ctx, toolName, options(-1 - i));
  gc();
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const s = performance.now();
    await allowed(tg, ctx, toolName, options(i));
    out[i] = performance.now() - s;
  }
  return out;
}

/** CONCURRENCY closed-loop callers, each in its own session, for SECONDS. */
async function concurrent(tg: Gateway, sessions: readonly CallContext[], toolName: string) {
  // Warm the sessions (first call of each), then run.
  await Promise.all(sessions.map((ctx) => allowed(tg, ctx, toolName, {})));
  gc();
  const latencies: number[] = [];
  let decisions = 0;
  const t0 = performance.now();
  const end = t0 + SECONDS * 1000;
  await Promise.all(
    sessions.map(async (ctx) => {
      while (performance.now() < end) {
        const s = performance.now();
        await allowed(tg, ctx, toolName, {});
        latencies.push(performance.now() - s);
        decisions++;
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const s = stats(latencies);
  return {
    callers: sessions.length,
    seconds: r3(seconds),
    decisions,
    decisions_per_s: Math.round(decisions / seconds),
    latency_p50_us: s.p50_us,
    latency_p99_us: s.p99_us,
  };
}

const loadAtStart = loadavg()[0] ?? 0;
const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-gate-'));
// Exit code 13 means the top-level await never settled: nothing was left to run, which here means
// a query waited for SQLite's single connection while a transaction held it (a deadlock in setup).
process.on('exit', (code) => {
  if (code !== 13 && process.exitCode !== 13) return;
  console.error('bench: setup never settled (exit 13): a store deadlock?');
  rmSync(dir, { recursive: true, force: true });
});
try {
  // --- Floor 1: bare Ajv (2020-12) validation of the same arguments against the same schema.
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  const validate = ajv.compile(inputSchema);
  const ajvFloor = stats(
    timeSync(FLOOR, 1_000, () => {
      if (!validate(args)) throw new Error('floor: arguments do not validate');
    }),
  );

  // --- Floor 2: bare Cedar evaluation of the request the gate builds for this call.
  // The floor is Cedar itself: an engine that never reuses a decision asks cedar-wasm every time.
  const loaded = CedarPolicyEngine.load([{ id: 'p', text: POLICY_TEXT }], {
    reuseDecisions: false,
  });
  if (!loaded.ok)
    throw new Error(`floor: policy does not load: ${JSON.stringify(loaded.problems)}`);
  const engine = loaded.engine;
  const cedarToolFacts = { id: 'bench.read_doc', action_class: 'read', tags: ['docs', 'read'] };
  const request = (): CedarRequest => ({
    agent: { id: AGENT, owner: 'bench', capabilities: [CAPABILITY] },
    tool: {
      id: 'bench.read_doc',
      version: '1.0.0',
      action_class: 'read',
      data_access: 'public',
      egress: 'none',
      access_tier: 'public',
      owner: 'bench-team',
      provenance: 'internal',
      tags: ['docs', 'read'],
    },
    context: {
      session_id: 'ses_0123456789abcdefghijkl',
      run_id: 'ses_0123456789abcdefghijkl',
      on_behalf_of: '',
      user_permissions: [],
      private_data_read: false,
      external_sends: 0,
      egress_bytes: 0,
      spend_cents: 0,
      hour_utc: new Date().getUTCHours(),
      destination_host: '',
      arguments: structuredClone(args),
    },
  });
  const cedarRequest = request();
  const cedarFloor = stats(
    timeSync(FLOOR, 300, () => {
      if (engine.evaluate(cedarRequest).decision !== 'allow')
        throw new Error('floor: Cedar denied');
    }),
  );
  const cedarApplies = engine.appliesTo(cedarToolFacts);
  // Informational: the same request through the engine the gate uses, which reuses the decision
  // for requests that agree on every fact the policies read (here only context.hour_utc).
  const reusing = CedarPolicyEngine.load([{ id: 'p', text: POLICY_TEXT }]);
  if (!reusing.ok) throw new Error('policy does not load');
  const cedarReused = stats(
    timeSync(FLOOR, 300, () => {
      if (reusing.engine.evaluate(cedarRequest).decision !== 'allow')
        throw new Error('Cedar denied');
    }),
  );
  const cedarFacts = reusing.engine.factsRead;

  // --- Floor 3: append + fsync of a 1 KB record to a file next to the database (same disk).
  const record = Buffer.alloc(1024, 0x61);
  const fd = openSync(join(dir, 'floor.log'), 'a');
  const fsyncFloor = stats(
    timeSync(FLOOR, 100, () => {
      writeSync(fd, record);
      fsyncSync(fd);
    }),
  );
  closeSync(fd);

  // --- Informational: the same 1 KB as a raw SQLite row, one commit each, and as group commits.
  const raw = new BetterSqlite3(join(dir, 'raw.db'));
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = FULL');
  raw.exec('create table t (id integer primary key, body text not null)');
  const insert = raw.prepare('insert into t (body) values (?)');
  const body = record.toString('utf8');
  const sqliteCommit = stats(timeSync(FLOOR, 100, () => insert.run(body)));
  const group = raw.transaction((n: number) => {
    for (let i = 0; i < n; i++) insert.run(body);
  });
  const t0 = performance.now();
  let grouped = 0;
  while (performance.now() - t0 < 1000) {
    group(CONCURRENCY);
    grouped += CONCURRENCY;
  }
  const groupCommitPerS = Math.round(grouped / ((performance.now() - t0) / 1000));
  raw.close();

  // --- The pipeline.
  const dbPath = join(dir, 'toolgate.db');
  const tg = await openGateway({
    db: `sqlite:${dbPath}`,
    executor: demoExecutor().register('noop', () => ({})),
    // One agent holds CONCURRENCY + 4 sessions here (the callers, the sequential caller and three
    // single-rule sessions), more than the default per-agent cap (64).
    caps: { maxSessionsPerAgent: CONCURRENCY + 4 },
  });
  await tg.config.apply(
    [
      // Measures the gate, not a day's allowance: the default day ceilings (10000 calls of a tool)
      // are switched off explicitly, as an operator may.
      { kind: 'Agent', spec: { id: AGENT, owner: 'bench', ceilings: { windows: [] } } },
      { kind: 'Tool', spec: tool('bench.read_doc', 'read_doc') },
      { kind: 'Tool', spec: tool('bench.read_doc_idem', 'read_doc_idem', { idempotent: true }) },
      {
        kind: 'Tool',
        spec: tool('bench.read_doc_limited', 'read_doc_limited', {
          rate_limit: {
            per_run: 1_000_000,
            per_window: { limit: 1_000_000, window_seconds: 60 },
          },
        }),
      },
      {
        kind: 'Tool',
        spec: tool('bench.read_doc_private', 'read_doc_private', { data_access: 'private' }),
      },
      { kind: 'Grant', spec: { agent: AGENT, capabilities: [CAPABILITY] } },
    ],
    admin,
  );
  const open = async (): Promise<CallContext> => ({
    agentId: AGENT,
    sessionId: (await tg.sessions.open(AGENT)).id,
  });
  const ctx = await open();
  const callers = await Promise.all(Array.from({ length: CONCURRENCY }, open));

  // Without org policies: the gate skips Cedar (no engine).
  const seqNoPolicy = stats(await sequential(tg, ctx, 'read_doc', CALLS, WARMUP));
  gc();
  const concNoPolicy = await concurrent(tg, callers, 'read_doc');
  gc();
  const countNoPolicy = await countSql(dbPath, COUNTED, () => allowed(tg, ctx, 'read_doc', {}));

  // Variants, without policies: what idempotency, rate limits and a private-data read add.
  const idemCtx = await open();
  const variantRuns: [string, string, CallContext, (i: number) => CallOptions][] = [
    ['idempotency_key', 'read_doc_idem', idemCtx, (i) => ({ idempotencyKey: `k${i}` })],
    ['rate_limit_per_run_and_window', 'read_doc_limited', await open(), () => ({})],
    ['private_data_read', 'read_doc_private', await open(), () => ({})],
  ];
  const variants: Record<string, Stats & { sql: Omit<SqlCount, 'by_statement'> }> = {};
  const variantSql: Record<string, SqlCount> = {};
  for (const [label, name, vctx, opts] of variantRuns) {
    const s = stats(await sequential(tg, vctx, name, VARIANT_CALLS, 100, opts));
    const c = await countSql(dbPath, COUNTED, (i) => allowed(tg, vctx, name, opts(1_000_000 + i)));
    const { by_statement: _, ...sql } = c;
    variants[label] = { ...s, sql };
    variantSql[label] = c;
    gc();
  }

  // With the Cedar policy applied as configuration: the gate loads it and evaluates every call.
  await tg.config.apply([{ kind: 'Policy', spec: { id: 'p', text: POLICY_TEXT } }], admin);
  const seqPolicy = stats(await sequential(tg, ctx, 'read_doc', CALLS, WARMUP));
  gc();
  const concPolicy = await concurrent(tg, callers, 'read_doc');
  gc();
  const countPolicy = await countSql(dbPath, COUNTED, () => allowed(tg, ctx, 'read_doc', {}));

  // fsync again at the end: the disk's latency can drift over a run.
  const fd2 = openSync(join(dir, 'floor.log'), 'a');
  const fsyncFloorAfter = stats(
    timeSync(Math.min(FLOOR, 1000), 50, () => {
      writeSync(fd2, record);
      fsyncSync(fd2);
    }),
  );
  closeSync(fd2);
  await tg.close();

  // Tracing off and on (exported by OTLP/protobuf to a local receiver that discards), interleaved.
  const tracing = await tracingOverhead(dir, CALLS, WARMUP, CPU_CALLS);

  // --- Goals: the pipeline against the sum of the three floors (Ajv + Cedar + fsync).
  // Both pipelines are held to them: the one with the Cedar policy, and the one without policies.
  // Stricter, and reported beside them (not a goal of the issue): the pipeline without policies
  // against Ajv + fsync alone, as if Cedar's floor were not there to absorb any overhead.
  const floorsP50 = ajvFloor.p50_us + cedarFloor.p50_us + fsyncFloor.p50_us;
  const floorsP99 = ajvFloor.p99_us + cedarFloor.p99_us + fsyncFloor.p99_us;
  const floorsP50NoCedar = ajvFloor.p50_us + fsyncFloor.p50_us;
  const floorsP99NoCedar = ajvFloor.p99_us + fsyncFloor.p99_us;
  const overheadP50 = r1(seqPolicy.p50_us - floorsP50);
  const ratioP99 = r3(seqPolicy.p99_us / floorsP99);
  const overheadP50NoPolicyAll = r1(seqNoPolicy.p50_us - floorsP50);
  const ratioP99NoPolicyAll = r3(seqNoPolicy.p99_us / floorsP99);
  const overheadP50NoPolicy = r1(seqNoPolicy.p50_us - floorsP50NoCedar);
  const ratioP99NoPolicy = r3(seqNoPolicy.p99_us / floorsP99NoCedar);
  const goals = {
    p50_overhead_us_max: 100,
    p99_ratio_max: 1.5,
    concurrent_decisions_per_s_min: 10_000,
    with_policy: {
      p50: overheadP50 <= 100,
      p99: ratioP99 <= 1.5,
      concurrent: concPolicy.decisions_per_s >= 10_000,
    },
    without_policy: {
      p50: overheadP50NoPolicyAll <= 100,
      p99: ratioP99NoPolicyAll <= 1.5,
      concurrent: concNoPolicy.decisions_per_s >= 10_000,
    },
  };
  const goalsMet = [...Object.values(goals.with_policy), ...Object.values(goals.without_policy)]
    .map(Boolean)
    .every((x) => x);
  const stricter = {
    what: 'pipeline without policies against Ajv + fsync floors only (not an issue goal)',
    p50_overhead_us: overheadP50NoPolicy,
    p99_ratio: ratioP99NoPolicy,
    p50_within_100_us: overheadP50NoPolicy <= 100,
    p99_within_1_5: ratioP99NoPolicy <= 1.5,
  };

  const result = {
    bench: 'gate',
    calls: CALLS,
    warmup: WARMUP,
    concurrency: CONCURRENCY,
    concurrent_seconds: SECONDS,
    concurrent_mode: 'one session per caller, same agent, closed loop',
    tool: 'read, public data, no egress, inline no-op, 2 string properties',
    store: 'sqlite WAL synchronous=FULL',
    node: process.version,
    cpus: cpus().length,
    load_average_1m: { start: r3(loadAtStart), end: r3(loadavg()[0] ?? 0) },
    floors: {
      ajv_validate: ajvFloor,
      cedar_evaluate: cedarFloor,
      fsync_append_1kb: fsyncFloor,
      fsync_append_1kb_at_end: fsyncFloorAfter,
    },
    cedar_applies_to_tool: cedarApplies,
    info_cedar_evaluate_reused: cedarReused,
    info_cedar_facts_read: cedarFacts,
    floors_p50_sum_us: r1(floorsP50),
    floors_p99_sum_us: r1(floorsP99),
    pipeline_no_policy: seqNoPolicy,
    pipeline_with_policy: seqPolicy,
    concurrent_no_policy: concNoPolicy,
    concurrent_with_policy: concPolicy,
    p50_overhead_us_over_floors: overheadP50,
    p99_ratio_to_floors: ratioP99,
    concurrent_decisions_per_s: concPolicy.decisions_per_s,
    no_policy_p50_overhead_us_over_floors: overheadP50NoPolicyAll,
    no_policy_p99_ratio_to_floors: ratioP99NoPolicyAll,
    stricter_no_policy_vs_ajv_and_fsync: stricter,
    no_policy_concurrent_decisions_per_s: concNoPolicy.decisions_per_s,
    sql_per_call_no_policy: countNoPolicy,
    sql_per_call_with_policy: countPolicy,
    variants_no_policy: variants,
    info_sqlite_insert_commit_1kb: sqliteCommit,
    info_sqlite_group_commit_records_per_s: groupCommitPerS,
    goals,
    goals_met: goalsMet,
    tracing,
  };

  const line = (label: string, s: Stats) =>
    console.log(
      `  ${label.padEnd(34)} p50 ${String(s.p50_us).padStart(8)} µs   p99 ${String(s.p99_us).padStart(8)} µs   p99.9 ${String(s.p999_us).padStart(8)} µs`,
    );
  const sqlLines = (label: string, c: SqlCount) => {
    console.log(
      `  ${label}: ${c.statements} statements (${c.reads} reads, ${c.writes} writes), ${c.transactions} transactions, ${c.durable_commits} durable commits (WAL fsyncs) writing ${c.wal_frames} pages (${c.wal_bytes} B), ${c.checkpoints} checkpoints (commit with checkpoint ${c.checkpoint_commit_us} µs, without ${c.plain_commit_us} µs), ${c.prepares} prepares (${c.prepare_us} µs), execute ${c.execute_us} µs`,
    );
    for (const [sql, t] of Object.entries(c.by_statement)) {
      console.log(
        `    ${String(t.per_call).padStart(6)} × ${String(t.us_per_exec).padStart(7)} µs  ${t.kind.padEnd(22)} ${t.durable_commits_per_call > 0 ? `[fsync ×${t.durable_commits_per_call}] ` : ''}${sql}`,
      );
    }
  };
  console.log('floors (same run, same disk):');
  line('ajv validate', ajvFloor);
  line('cedar evaluate', cedarFloor);
  line('append+fsync 1 KB', fsyncFloor);
  line('append+fsync 1 KB (end of run)', fsyncFloorAfter);
  line('(info) sqlite insert+commit 1 KB', sqliteCommit);
  line(`(info) cedar, reused (reads ${cedarFacts?.join(', ')})`, cedarReused);
  console.log(
    `  (info) sqlite group commit, ${CONCURRENCY} rows/transaction: ${groupCommitPerS} rows/s`,
  );
  console.log(`pipeline, one caller, ${CALLS} calls after ${WARMUP} warm-up:`);
  line('no policy', seqNoPolicy);
  line('with Cedar policy', seqPolicy);
  for (const [label, v] of Object.entries(variants)) line(`variant: ${label}`, v);
  console.log(`concurrent, ${CONCURRENCY} callers (own sessions), ${SECONDS} s:`);
  console.log(
    `  no policy: ${concNoPolicy.decisions_per_s} decisions/s (p50 ${concNoPolicy.latency_p50_us} µs, p99 ${concNoPolicy.latency_p99_us} µs)`,
  );
  console.log(
    `  with policy: ${concPolicy.decisions_per_s} decisions/s (p50 ${concPolicy.latency_p50_us} µs, p99 ${concPolicy.latency_p99_us} µs)`,
  );
  console.log('SQL per allowed call:');
  sqlLines('no policy', countNoPolicy);
  sqlLines('with policy', countPolicy);
  for (const [label, c] of Object.entries(variantSql)) sqlLines(`variant ${label}`, c);
  console.log(
    `goals (with policy): p50 overhead ${overheadP50} µs (≤ 100), p99 ratio ${ratioP99} (≤ 1.5), ${concPolicy.decisions_per_s} decisions/s (≥ 10000)`,
  );
  console.log(
    `goals (no policy): p50 overhead ${overheadP50NoPolicyAll} µs, p99 ratio ${ratioP99NoPolicyAll}, ${concNoPolicy.decisions_per_s} decisions/s`,
  );
  console.log(
    `stricter (no policy against Ajv + fsync only, not an issue goal): p50 overhead ${overheadP50NoPolicy} µs, p99 ratio ${ratioP99NoPolicy}`,
  );
  console.log(
    `tracing: p50 off ${tracing.off.p50_us} µs, on ${tracing.on.p50_us} µs, ratio ${tracing.p50_ratio_on_to_off} (goal ≤ 1.05); p99 ratio ${tracing.p99_ratio_on_to_off}; CPU per call off ${tracing.cpu_us_per_call.off} µs, on ${tracing.cpu_us_per_call.on} µs; spans ${tracing.spans_exported} of ${tracing.spans_created} exported in ${tracing.export_requests} requests`,
  );
  console.log(`goals met: ${goalsMet}`);
  console.log(JSON.stringify(result));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
