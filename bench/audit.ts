/**
 * Audit log benchmark, all on SQLite (WAL, synchronous=FULL) in a temp folder:
 *
 * 1. Durable append throughput with group commit: CONCURRENCY appenders in a closed loop through
 *    the real AuditWriter (chain head locked, records hashed and linked, one transaction and one
 *    fsync per batch, each append acknowledged only after its commit) for SECONDS; records/s and
 *    append latency percentiles. Baseline in the same run, on the same disk: a bare append of a
 *    record of the same size to a file with an fsync after each (what durability costs without
 *    grouping).
 * 2. A database log of VERIFY_SIZE (200,000) records, built fast: chained in memory and
 *    bulk-inserted in transactions of 50,000 rows with a prepared statement, a checkpoint each.
 * 3. Verify throughput: AuditLog.verify() over that log — every record re-canonicalised and
 *    re-hashed, every link and the Merkle root at every checkpoint recomputed — records/s.
 * 4. Inclusion-proof latency. Proofs come from an in-memory tree holding every leaf hash and every
 *    complete subtree hash (about 64 bytes a record), so a proof is O(log² n) lookups and a few
 *    hashes, never a pass over the leaves. Measured (a) end to end through AuditLog.inclusionProof
 *    (what the REST route runs: one query for the latest checkpoint, then memory) on the database
 *    log, and (b) on LOG_SIZE (1,000,000) leaves with the same tree code over leaf hashes in
 *    memory — computing from leaf hashes is how the bench reaches a million records within
 *    minutes. A sample of proofs is checked with verifyInclusion.
 *
 *   npm run bench:audit   (CONCURRENCY=256 SECONDS=5 VERIFY_SIZE=200000 LOG_SIZE=1000000 PROOFS=5000)
 * The last line printed is one JSON object.
 */
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import BetterSqlite3 from 'better-sqlite3';
import {
  AuditLog,
  type AuditRecord,
  chainRows,
  checkpointText,
  DEFAULT_ORIGIN,
  generateNoteSigner,
  leafHash,
  MerkleFrontier,
  MerkleTree,
  verifyInclusion,
} from '../src/records/audit/index.js';
import { openStore, type UnchainedRow } from '../src/records/store/index.js';

const CONCURRENCY = Number(process.env.CONCURRENCY ?? 256);
const SECONDS = Number(process.env.SECONDS ?? 5);
const LOG_SIZE = Number(process.env.LOG_SIZE ?? 1_000_000);
const VERIFY_SIZE = Number(process.env.VERIFY_SIZE ?? 200_000);
const PROOFS = Number(process.env.PROOFS ?? 5_000);
const BASELINE_SECONDS = Number(process.env.BASELINE_SECONDS ?? 2);

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}
const r1 = (x: number) => Math.round(x * 10) / 10;
const r2 = (x: number) => Math.round(x * 100) / 100;

function record(i: number): AuditRecord {
  return {
    kind: 'call.pre',
    at: new Date(),
    callId: `call_${i.toString(36).padStart(16, '0')}`,
    sessionId: 'ses_bench',
    runId: 'run_bench',
    agentId: 'support-bot',
    userId: null,
    toolId: 'search_tickets',
    toolVersion: '1.0.0',
    argsHash: 'sha256:1f0c8e5f2d8f0b6b8c1f1e7e9a0b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d',
    argsRedacted: { query: `refund for order ${i}`, limit: 10 },
    decision: 'allow',
    durationMs: 0.4213,
  };
}

function unchained(i: number): UnchainedRow {
  const r = record(i);
  return {
    at: new Date(Date.UTC(2026, 0, 1) + i).toISOString(),
    kind: r.kind,
    call_id: r.callId,
    trace_id: r.callId,
    session_id: r.sessionId,
    run_id: r.runId,
    agent_id: r.agentId,
    user_id: null,
    tool_id: r.toolId,
    tool_version: r.toolVersion,
    args_hash: r.argsHash,
    args_redacted: JSON.stringify(r.argsRedacted),
    decision: r.decision,
    code: null,
    rule: null,
    message: null,
    approval_id: null,
    approver: null,
    egress_host: null,
    bytes_out: null,
    duration_ms: r.durationMs ?? null,
    outcome: null,
    model: null,
    details: '{}',
  };
}

const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-audit-'));
const signer = generateNoteSigner(DEFAULT_ORIGIN).signer;

async function appendBench() {
  const store = await openStore(`sqlite:${join(dir, 'append.db')}`);
  const log = new AuditLog(store, {
    signer,
    checkpointIntervalMs: 0,
    checkpointEvery: 10_000,
  });
  // Warm-up: statement cache, WAL file.
  await Promise.all(Array.from({ length: 1000 }, (_, i) => log.writer.append(record(i))));
  const latencies: number[] = [];
  let n = 0;
  const until = performance.now() + SECONDS * 1000;
  const started = performance.now();
  const cpu = process.cpuUsage();
  const worker = async () => {
    while (performance.now() < until) {
      const t = performance.now();
      await log.writer.append(record(n++));
      latencies.push(performance.now() - t);
      // Let timers and I/O run between rounds, as a server does between requests.
      if (latencies.length % CONCURRENCY === 0) await new Promise((r) => setImmediate(r));
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const elapsed = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const cpuSeconds = (used.user + used.system) / 1e6;
  await log.close();
  const report = await log.verify();
  await store.close();
  if (!report.ok)
    throw new Error(`append bench log does not verify: ${report.firstProblem?.message}`);
  latencies.sort((a, b) => a - b);
  return {
    records: latencies.length,
    records_per_s: Math.round(latencies.length / elapsed),
    records_per_cpu_s: Math.round(latencies.length / cpuSeconds),
    p50_ms: r2(percentile(latencies, 50)),
    p99_ms: r2(percentile(latencies, 99)),
  };
}

function baselineBench() {
  const path = join(dir, 'baseline.log');
  const fd = openSync(path, 'a');
  const line = Buffer.from(`${JSON.stringify(unchained(1))}\n`);
  const latencies: number[] = [];
  const until = performance.now() + BASELINE_SECONDS * 1000;
  const started = performance.now();
  while (performance.now() < until) {
    const t = performance.now();
    writeSync(fd, line);
    fsyncSync(fd);
    latencies.push(performance.now() - t);
  }
  const elapsed = (performance.now() - started) / 1000;
  closeSync(fd);
  latencies.sort((a, b) => a - b);
  return {
    records_per_s: Math.round(latencies.length / elapsed),
    p99_ms: r2(percentile(latencies, 99)),
    bytes_per_record: line.length,
  };
}

interface ProofLike {
  readonly leafIndex: number;
  readonly treeSize: number;
  readonly leafHash: string;
  readonly rootHash: string;
  readonly proof: readonly string[];
}

async function measureProofs(
  count: number,
  size: number,
  prove: (seq: number) => Promise<ProofLike>,
): Promise<{ p50_ms: number; p99_ms: number; checked: number }> {
  const latencies: number[] = [];
  let checked = 0;
  for (let i = 0; i < count; i++) {
    const seq = 1 + Math.floor(Math.random() * size);
    const s = performance.now();
    const p = await prove(seq);
    latencies.push(performance.now() - s);
    if (i % 50 === 0) {
      const ok = verifyInclusion(
        p.leafIndex,
        p.treeSize,
        Buffer.from(p.leafHash, 'hex'),
        p.proof.map((h) => Buffer.from(h, 'hex')),
        Buffer.from(p.rootHash, 'hex'),
      );
      if (!ok) throw new Error(`proof for ${seq} does not verify`);
      checked += 1;
    }
  }
  latencies.sort((a, b) => a - b);
  return {
    p50_ms: Math.round(percentile(latencies, 50) * 1000) / 1000,
    p99_ms: Math.round(percentile(latencies, 99) * 1000) / 1000,
    checked,
  };
}

/** Builds a log of `size` records fast: chained in memory, bulk-inserted, a checkpoint every 50k. */
async function buildLog(path: string, size: number): Promise<number> {
  const store = await openStore(`sqlite:${path}`);
  await store.close();
  const started = performance.now();
  const db = new BetterSqlite3(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  const columns = Object.keys({ ...unchained(0), seq: 0, prev_hash: '', hash: '' });
  const insert = db.prepare(
    `insert into audit_log (${columns.join(',')}) values (${columns.map((c) => `@${c}`).join(',')})`,
  );
  const insertCheckpoint = db.prepare(
    'insert into audit_checkpoints (tree_size, root_hash, note, at) values (?, ?, ?, ?)',
  );
  const frontier = new MerkleFrontier();
  let head = { seq: 0, hash: '0'.repeat(64) };
  const BATCH = 50_000;
  for (let start = 0; start < size; start += BATCH) {
    const rows = chainRows(
      head,
      Array.from({ length: Math.min(BATCH, size - start) }, (_, i) => unchained(start + i)),
    );
    db.transaction(() => {
      for (const row of rows) {
        insert.run(row);
        frontier.append(Buffer.from(row.hash, 'hex'));
      }
      if (frontier.size % BATCH === 0 || frontier.size === size) {
        const root = frontier.root();
        insertCheckpoint.run(
          frontier.size,
          root.toString('hex'),
          signer.sign(checkpointText(DEFAULT_ORIGIN, frontier.size, root)),
          new Date().toISOString(),
        );
      }
    })();
    const last = rows[rows.length - 1] as { seq: number; hash: string };
    head = { seq: last.seq, hash: last.hash };
  }
  db.close();
  return (performance.now() - started) / 1000;
}

async function main() {
  const load = loadavg()[0] ?? 0;
  console.log(
    `audit bench: ${cpus().length} CPUs, load average ${load.toFixed(1)}, SQLite WAL synchronous=FULL, folder ${dir}`,
  );
  const baseline = baselineBench();
  console.log(
    `baseline: bare write+fsync per record: ${baseline.records_per_s} records/s, p99 ${baseline.p99_ms} ms (${baseline.bytes_per_record} B)`,
  );
  const append = await appendBench();
  console.log(
    `durable append (group commit, ${CONCURRENCY} appenders, ${SECONDS}s): ${append.records_per_s} records/s, p50 ${append.p50_ms} ms, p99 ${append.p99_ms} ms (${append.records} records; ${append.records_per_cpu_s} per CPU-second; log verifies)`,
  );

  const bigPath = join(dir, 'big.db');
  const buildSeconds = await buildLog(bigPath, VERIFY_SIZE);
  console.log(`built a database log of ${VERIFY_SIZE} records in ${buildSeconds.toFixed(1)} s`);

  const store = await openStore(`sqlite:${bigPath}`);
  const log = new AuditLog(store, { signer, checkpoints: false });
  let t = performance.now();
  const verifyCpu = process.cpuUsage();
  const report = await log.verify();
  const verifySeconds = (performance.now() - t) / 1000;
  const verifyUsed = process.cpuUsage(verifyCpu);
  const verifyCpuRate = Math.round(VERIFY_SIZE / ((verifyUsed.user + verifyUsed.system) / 1e6));
  if (!report.ok || report.records !== VERIFY_SIZE) {
    throw new Error(`the log does not verify: ${JSON.stringify(report.firstProblem)}`);
  }
  const verifyRate = Math.round(VERIFY_SIZE / verifySeconds);
  console.log(
    `verify: ${VERIFY_SIZE} records and ${report.checkpoints} checkpoints in ${verifySeconds.toFixed(2)} s = ${verifyRate} records/s (${verifyCpuRate} per CPU-second)`,
  );

  // End to end through the service (what GET /v1/audit/proof/inclusion runs) on the database log.
  t = performance.now();
  await log.inclusionProof({ seq: 1 });
  const dbTreeSeconds = (performance.now() - t) / 1000;
  const service = await measureProofs(PROOFS, VERIFY_SIZE, (seq) => log.inclusionProof({ seq }));
  console.log(
    `inclusion proof through AuditLog on ${VERIFY_SIZE} records (tree built from the database in ${dbTreeSeconds.toFixed(1)} s): p50 ${service.p50_ms} ms, p99 ${service.p99_ms} ms (${service.checked} verified)`,
  );
  await store.close();

  // 1,000,000 leaves: the same tree code over leaf hashes in memory (no database to fill).
  t = performance.now();
  const tree = new MerkleTree();
  const seed = Buffer.alloc(8);
  for (let i = 0; i < LOG_SIZE; i++) {
    seed.writeDoubleBE(i);
    tree.append(leafHash(seed));
  }
  const treeSeconds = (performance.now() - t) / 1000;
  const root = tree.root().toString('hex');
  const proof = await measureProofs(PROOFS, LOG_SIZE, async (seq) => ({
    leafIndex: seq - 1,
    treeSize: LOG_SIZE,
    leafHash: tree.leaf(seq - 1).toString('hex'),
    rootHash: root,
    proof: tree.inclusionProof(seq - 1, LOG_SIZE).map((h) => h.toString('hex')),
  }));
  console.log(
    `inclusion proof on ${LOG_SIZE} leaves (leaf and subtree hashes in memory, built in ${treeSeconds.toFixed(1)} s): p50 ${proof.p50_ms} ms, p99 ${proof.p99_ms} ms (${proof.checked} verified)`,
  );
  rmSync(dir, { recursive: true, force: true });

  const figures = {
    append_records_per_s: append.records_per_s,
    append_records_per_cpu_s: append.records_per_cpu_s,
    append_p50_ms: append.p50_ms,
    append_p99_ms: append.p99_ms,
    append_concurrency: CONCURRENCY,
    baseline_fsync_append_records_per_s: baseline.records_per_s,
    append_vs_baseline: r1(append.records_per_s / baseline.records_per_s),
    verify_records_per_s: verifyRate,
    verify_records_per_cpu_s: verifyCpuRate,
    verify_log_size: VERIFY_SIZE,
    log_build_s: r1(buildSeconds),
    proof_log_size: LOG_SIZE,
    tree_build_s: r1(treeSeconds),
    inclusion_proof_p50_ms: proof.p50_ms,
    inclusion_proof_p99_ms: proof.p99_ms,
    service_proof_log_size: VERIFY_SIZE,
    service_inclusion_proof_p50_ms: service.p50_ms,
    service_inclusion_proof_p99_ms: service.p99_ms,
    cpus: cpus().length,
    load_average_at_start: r1(load),
    goals: {
      append_20k_per_s: append.records_per_s >= 20_000,
      verify_200k_per_s: verifyRate >= 200_000,
      proof_p99_under_1ms: proof.p99_ms <= 1,
    },
  };
  console.log(JSON.stringify(figures));
}

await main();
