/**
 * The audit log across replicas (docs/architecture.md §5): two toolgate replicas (the built CLI's
 * `serve`) on one PostgreSQL database behind HAProxy stage their audit records with no lock shared
 * between them, and the fleet's elected sequencer integrates them into the one chain. Every
 * replica's records reach the chain within the bound (the wait is measured and printed); calls
 * are answered while the chain lock is held by someone else; the sequencer's replica SIGKILLed
 * in the middle of an integration hands over to the other, which integrates what was staged, each
 * record once, and `audit verify` passes; a staged record removed or changed before integration
 * is found (an alert in the chain) and `audit verify` fails naming it, as is one whose value its
 * column cannot hold (the log goes on); an integration that fails all the same is logged and
 * counted, and what it held back goes in once it succeeds.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as HttpV2,
} from '@modelcontextprotocol/client';
import pg from 'pg';
import type { Actor } from '../../src/core/index.js';
import { loadMasterKey } from '../../src/domain/credentials/index.js';
import { approvalSigner, auditSigner } from '../../src/edge/cli/runtime-files.js';
import { openToolgate } from '../../src/host/toolgate.js';
import { DEFAULT_ORIGIN } from '../../src/records/audit/index.js';
import { stagedHash } from '../../src/records/audit-chain/index.js';
import { LOCK_CLASSES } from '../../src/records/store/index.js';
import { CHAIN_LOCK_KEY } from '../../src/records/store/postgres/audit-append.js';
import { FROZEN_MS } from '../../src/records/store/postgres/fleet.js';
import { backends } from '../support/backends.js';
import { cleanEnv, ensureBuilt, MAIN, ROOT } from '../support/cli.js';
import { approvePendingReviews } from '../support/reviews.js';
import { inlineTool } from '../support/tools.js';
import { decisionOf } from './approval-round-trip.js';
import {
  type Balancer,
  haproxyAvailable,
  REPLICA_HEADER,
  type Replica,
  startBalancer,
  startReplica,
  stopReplica,
} from './cluster.js';

const RUN = 'io.toolgate/run';
const MODERN = '2026-07-28';
const ADMIN_TOKEN = 'sequencer-test-admin-token-0123456789abcdef';
const admin: Actor = { id: 'test-admin', via: 'library' };
const DEMO = readFileSync(join(ROOT, 'demo', 'catalog.yaml'), 'utf8');
/** The sequencer's bound in `serve` (the default). */
const BOUND_MS = 200;

const postgres = backends().find((b) => b.name === 'postgres');
const skip = !postgres
  ? 'TOOLGATE_TEST_PG_URL is not set (run with scripts/run-tests.mjs --with-postgres)'
  : !haproxyAvailable() && process.env.TOOLGATE_REQUIRE_PG !== '1'
    ? 'haproxy is not installed (apt-get install haproxy)'
    : false;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const percentile = (sorted: readonly number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN;

describe('the audit sequencer across replicas', { skip, concurrency: 1 }, () => {
  let dir = '';
  let dataDir = '';
  let db = '';
  let drop: () => Promise<void> = async () => {};
  let inspector: pg.Client | null = null;
  const replicas: Replica[] = [];
  let lb: Balancer | null = null;
  let botKey = '';
  const clients: ClientV2[] = [];

  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => {
    assert.ok(inspector);
    return (await inspector.query(text, params)).rows as T[];
  };

  const leaderHeld = async () =>
    (
      await q<{ n: number }>(
        `select count(*)::int as n from pg_locks where locktype = 'advisory' and classid = $1
          and objid = 0 and objsubid = 2 and granted`,
        [LOCK_CLASSES.leader],
      )
    )[0]?.n === 1;

  /** Waits until `check` holds, up to `ms`; answers how long it took. */
  const until = async (check: () => Promise<boolean>, ms: number, what: string) => {
    const t0 = Date.now();
    while (!(await check())) {
      if (Date.now() - t0 > ms) assert.fail(`${what}: not within ${ms} ms`);
      await sleep(10);
    }
    return Date.now() - t0;
  };

  const stagedLeft = async () =>
    (await q<{ n: number }>('select count(*)::int as n from audit_staged'))[0]?.n ?? -1;

  /** A 2026-07-28 client through HAProxy (or straight to one replica), and its first call. */
  async function agent(
    base = lb?.base,
  ): Promise<{ call: () => Promise<{ id: string; replica: string }> }> {
    assert.ok(base);
    const replicaOf = new Map<number, string>();
    let n = 0;
    const client = new ClientV2(
      { name: 'sequencer-test', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: MODERN } }, inputRequired: { autoFulfill: false } },
    );
    let last = '';
    await client.connect(
      new HttpV2(new URL(`${base}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${botKey}` } },
        fetch: async (url, init) => {
          const res = await fetch(url, init);
          last = res.headers.get(REPLICA_HEADER) ?? '';
          replicaOf.set(n, last);
          return res;
        },
      }),
    );
    clients.push(client);
    let run: string | undefined;
    const call = async () => {
      n += 1;
      const r = await client.callTool({
        name: 'seq_echo',
        arguments: {},
        ...(run ? { _meta: { [RUN]: run } } : {}),
      });
      const d = decisionOf(r);
      assert.equal(d.kind, 'allow', JSON.stringify(r));
      run ??= (r as { _meta?: Record<string, unknown> })._meta?.[RUN] as string | undefined;
      return { id: String(d.call_id), replica: last };
    };
    await call();
    return { call };
  }

  const verify = () => {
    const out = spawnSync(
      process.execPath,
      [MAIN, '--db', db, '--data-dir', dataDir, '--json', 'audit', 'verify'],
      { cwd: dir, env: { ...cleanEnv(), TOOLGATE_ADMIN_TOKEN: ADMIN_TOKEN }, encoding: 'utf8' },
    );
    return {
      status: out.status,
      report: JSON.parse(out.stdout || '{}') as {
        ok?: boolean;
        records?: number;
        problems?: { kind: string; seq: number | null; message: string }[];
      },
      text: `${out.stdout}\n${out.stderr}`,
    };
  };

  before(async () => {
    if (!postgres) return;
    assert.ok(haproxyAvailable(), 'haproxy is not installed: apt-get install haproxy');
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'toolgate-sequencer-'));
    dataDir = join(dir, 'data');
    mkdirSync(dataDir, { recursive: true });
    const fresh = await postgres.fresh();
    db = fresh.url;
    drop = fresh.drop;
    // Set up in this process, which then closes: only the replicas campaign for the lead.
    const tg = await openToolgate({
      db,
      approvalSigner: () => approvalSigner(dataDir),
      auditSigner: () => auditSigner(dataDir, DEFAULT_ORIGIN),
      masterKey: () => loadMasterKey({ dataDir }),
      audit: { checkpoints: false, sequencer: false },
      detectors: false,
      health: false,
    });
    try {
      await tg.admin.config.applyText(DEMO, admin);
      await tg.admin.config.apply(
        [
          { kind: 'Agent', spec: { id: 'seq-bot', owner: 'qa' } },
          {
            kind: 'Tool',
            spec: inlineTool(
              'seq_echo',
              {
                required_capabilities: ['seq:use'],
                runtime: { kind: 'inline', handler: 'demo.grant_role' },
              },
              'the sequencer tests',
            ),
          },
          { kind: 'Grant', spec: { agent: 'seq-bot', capabilities: ['seq:use'] } },
        ],
        admin,
      );
      await approvePendingReviews(tg.admin);
      botKey = (await tg.admin.keys.issue('seq-bot', admin)).apiKey;
    } finally {
      await tg.close();
    }
    inspector = new pg.Client(db);
    await inspector.connect();
    const options = { db, dataDir, cwd: dir, adminToken: ADMIN_TOKEN };
    // Replica a first, and leading before b starts: the sequencer is on a.
    const a = await startReplica('a', options);
    replicas.push(a);
    await until(leaderHeld, 30_000, 'replica a leads');
    replicas.push(await startReplica('b', options));
    lb = await startBalancer(replicas, dir);
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await lb?.stop();
    await Promise.all(replicas.map((r) => stopReplica(r)));
    await inspector?.end().catch(() => {});
    await drop();
    if (dir) rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });

  /** The sequencer's figures on one replica's /metrics. */
  const integrationMetrics = async (base: string) => {
    const res = await fetch(`${base}/metrics`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const text = await res.text();
    assert.equal(res.status, 200, text.slice(0, 200));
    const one = (re: RegExp) => Number(text.match(re)?.[1] ?? Number.NaN);
    const within: Record<number, number> = {};
    for (const le of [0.05, 0.2, 1])
      within[le] = one(
        new RegExp(`^toolgate_audit_integration_wait_seconds_bucket\\{le="${le}"\\} (\\d+)`, 'm'),
      );
    return {
      integrated: one(/^toolgate_audit_integrated_records_total (\d+)/m),
      integrations: one(/^toolgate_audit_integration_wait_seconds_count (\d+)/m),
      late: one(/^toolgate_audit_integration_late_total (\d+)/m),
      failures: one(/^toolgate_audit_integration_failures_total (\d+)/m),
      within,
    };
  };

  test('every replica’s records reach the chain within the bound; the wait is measured', async (t) => {
    const bot = await agent();
    const sent = new Map<string, number>();
    const served = new Set<string>();
    const waits: number[] = [];
    const pending = new Set<string>();
    let calling = true;
    // Looks every 5 ms for the pre-records of answered calls: the wait is from the call being
    // sent (before its record was staged) to the record being seen in the chain.
    const watcher = (async () => {
      while (calling || pending.size > 0) {
        if (pending.size > 0) {
          const seen = await q<{ call_id: string }>(
            `select call_id from audit_log where kind = 'call.pre' and call_id = any($1)`,
            [[...pending]],
          );
          const now = performance.now();
          for (const { call_id } of seen) {
            pending.delete(call_id);
            waits.push(now - (sent.get(call_id) ?? now));
          }
        }
        await sleep(5);
      }
    })();
    for (let i = 0; i < 60; i++) {
      const t0 = performance.now();
      const { id, replica } = await bot.call();
      sent.set(id, t0);
      pending.add(id);
      served.add(replica);
      await sleep(10);
    }
    calling = false;
    await Promise.race([
      watcher,
      sleep(10_000).then(() => assert.fail(`not integrated: ${[...pending]}`)),
    ]);
    assert.deepEqual([...served].sort(), ['a', 'b'], 'both replicas served calls');
    waits.sort((x, y) => x - y);
    const p50 = percentile(waits, 50);
    const p99 = percentile(waits, 99);
    const max = waits.at(-1) ?? Number.NaN;
    t.diagnostic(
      `integration wait (call sent → record in the chain), 60 calls over 2 replicas: p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${max.toFixed(1)} ms (bound ${BOUND_MS} ms)`,
    );
    // The bound holds from staging; the wait measured here adds the call itself and the 5 ms
    // look, on a host other runs load: the margin is for them.
    assert.ok(max < BOUND_MS + 600, `max wait ${max} ms`);
    assert.ok(p50 < BOUND_MS, `median wait ${p50} ms`);

    // The sequencer measures the wait itself, from each record's staging to its integration's
    // commit, and reports it on the leader's /metrics; the follower integrated nothing.
    const scraped = await Promise.all(replicas.map((r) => integrationMetrics(r.base)));
    const leading = scraped.filter((m) => m.integrated > 0);
    assert.equal(leading.length, 1, `one replica integrates: ${JSON.stringify(scraped)}`);
    const m = leading[0];
    assert.ok(m);
    assert.ok(m.integrated >= 120, `every pre- and post-record of 60 calls: ${m.integrated}`);
    assert.ok(m.integrations > 0 && m.integrations <= m.integrated, JSON.stringify(m));
    t.diagnostic(
      `sequencer's own measure: ${m.integrations} integrations of ${m.integrated} records; oldest record's wait ≤ 50 ms in ${m.within[0.05]}, ≤ 200 ms in ${m.within[0.2]}, ≤ 1 s in ${m.within[1]}; late ${m.late}`,
    );
    // Late integrations are counted, not hidden; on a host other runs load, none waits a second.
    assert.equal(m.within[1], m.integrations, 'no integration waited a second');
    assert.equal(m.late, m.integrations - (m.within[0.2] ?? 0), 'late = past the 200 ms bucket');
  });

  test('a leader that stops answering (SIGSTOP) loses the lead within its bound; the other replica integrates (attack round 30, F1)', async (t) => {
    const [a, b] = replicas as [Replica, Replica];
    const holderPid = async () =>
      (
        await q<{ pid: number }>(
          `select pid from pg_locks where locktype = 'advisory' and classid = $1 and objid = 0
            and objsubid = 2 and granted`,
          [LOCK_CLASSES.leader],
        )
      )[0]?.pid ?? null;
    const frozenPid = await holderPid();
    assert.ok(frozenPid !== null, 'a leads');
    // The benign neighbour first: a follower that is merely slow keeps the fleet as it is.
    const viaB = await agent(b.base);
    await viaB.call();
    assert.equal(await holderPid(), frozenPid, 'the lead stays where it was');
    a.child.kill('SIGSTOP');
    try {
      const t0 = Date.now();
      const moved = await until(
        async () => {
          const pid = await holderPid();
          return pid !== null && pid !== frozenPid;
        },
        FROZEN_MS + 5_000,
        'the lead passes from the stopped replica',
      );
      // Calls on the live replica are answered, and their records reach the chain from it.
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await viaB.call()).id);
      const integrated = await until(
        async () =>
          (
            await q<{ n: number }>(
              `select count(*)::int as n from audit_log where kind = 'call.pre' and call_id = any($1)`,
              [ids],
            )
          )[0]?.n === ids.length,
        10_000,
        'calls on the live replica are integrated',
      );
      t.diagnostic(
        `stopped leader: the lead moved ${moved} ms after SIGSTOP (bound ${FROZEN_MS} ms of silence plus the election); five calls on the other replica were in the chain ${Date.now() - t0 - moved} ms later (the last ${integrated} ms after it was answered)`,
      );
    } finally {
      a.child.kill('SIGCONT');
    }
    // The stopped one comes back as a follower: its old connection is gone, nothing is doubled.
    await until(async () => (await stagedLeft()) === 0, 10_000, 'staged drained');
    assert.notEqual(await holderPid(), frozenPid);
    // The next test SIGKILLs the leader: it is b now.
    replicas.reverse();
  });

  test('the sequencer’s replica SIGKILLed in the middle of an integration: the other integrates what was staged, each record once', async (t) => {
    const [leader] = replicas as [Replica, Replica];
    const workers = await Promise.all([agent(), agent(), agent()]);
    const acknowledged: string[] = [];
    const failures: string[] = [];
    let running = true;
    const load = workers.map(async (w) => {
      while (running) {
        try {
          acknowledged.push((await w.call()).id);
        } catch (err) {
          failures.push((err as Error).message);
        }
      }
    });
    await sleep(500);
    // Hold the chain lock: the sequencer's next integration stops inside its transaction, and
    // records pile up staged while calls go on being answered (nothing on the call path waits).
    const holder = new pg.Client(db);
    await holder.connect();
    await holder.query('begin');
    await holder.query(`select pg_advisory_xact_lock(${CHAIN_LOCK_KEY}::bigint)`);
    const answeredBefore = acknowledged.length;
    await sleep(400);
    assert.ok(acknowledged.length > answeredBefore, 'calls are answered while the lock is held');
    assert.ok((await stagedLeft()) > 0, 'records wait staged');
    const waiting = await q<{ n: number }>(
      `select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted`,
    );
    assert.ok((waiting[0]?.n ?? 0) >= 1, 'the sequencer is inside its integration, at the lock');
    leader.child.kill('SIGKILL');
    await leader.exited;
    const newest = (await q<{ id: string }>('select max(id) as id from audit_staged'))[0]?.id;
    await holder.query('commit');
    await holder.end();
    // What was staged before the kill is integrated by the next leader while the load goes on.
    const takeover = await until(
      async () =>
        (await q('select 1 from audit_staged where id <= $1 limit 1', [newest])).length === 0,
      10_000,
      'what was staged before the kill is integrated',
    );
    await sleep(500);
    running = false;
    await Promise.all(load);
    await until(async () => (await stagedLeft()) === 0, 10_000, 'staged drained');
    t.diagnostic(
      `after the kill: ${acknowledged.length} calls answered, ${failures.length} failed in flight; what was staged before it was integrated by the other replica ${takeover} ms after the lock was let go (election and integration)`,
    );
    assert.ok(await leaderHeld(), 'replica b leads now');
    assert.ok(failures.length <= 6, failures.join('; '));
    const logged = await q<{ call_id: string; n: number }>(
      `select call_id, count(*)::int as n from audit_log where kind = 'call.pre' and call_id = any($1) group by call_id`,
      [acknowledged],
    );
    const once = new Map(logged.map((r) => [r.call_id, r.n]));
    assert.deepEqual(
      acknowledged.filter((id) => once.get(id) !== 1),
      [],
      'every answered call has its pre-record in the chain exactly once',
    );
    const doubled = await q<{ call_id: string }>(
      `select call_id from audit_log where call_id is not null group by call_id, kind having count(*) > 1`,
    );
    assert.deepEqual(doubled, [], 'no record is in the chain twice');
    const { status, report, text } = verify();
    assert.equal(status, 0, text);
    assert.equal(report.ok, true, text);
  });

  test('a staged record removed or changed before integration is found, and audit verify names it', async () => {
    const bot = await agent();
    const holder = new pg.Client(db);
    await holder.connect();
    await holder.query('begin');
    await holder.query(`select pg_advisory_xact_lock(${CHAIN_LOCK_KEY}::bigint)`);
    for (let i = 0; i < 4; i++) await bot.call();
    // The calls' result records go out within 25 ms of each call.
    await sleep(300);
    const rows = await q<{ id: string; stream: string; rseq: string }>(
      'select id, stream, rseq from audit_staged order by stream, rseq',
    );
    const stream = rows[0]?.stream;
    const mine = rows.filter((r) => r.stream === stream);
    assert.ok(mine.length >= 6, `${mine.length} staged records in one stream`);
    const [, removed, , changed] = mine;
    assert.ok(removed && changed);
    await q('delete from audit_staged where id = $1', [removed.id]);
    await q(
      `update audit_staged set record = replace(record, '"kind":"call.', '"kind":"call.x') where id = $1`,
      [changed.id],
    );
    await holder.query('commit');
    await holder.end();
    await until(async () => (await stagedLeft()) === 0, 10_000, 'staged drained');
    const alerts = await q<{ seq: string; details: string }>(
      `select seq, details from audit_log where kind = 'alert' and rule = 'audit.staging' order by seq`,
    );
    assert.deepEqual(
      alerts.map((a) => (JSON.parse(a.details) as { problem: string }).problem),
      ['missing', 'altered'],
    );
    const { status, report, text } = verify();
    assert.equal(status, 6, text);
    assert.equal(report.ok, false);
    assert.deepEqual(
      report.problems?.map((p) => [p.kind, p.seq]),
      alerts.map((a) => ['staged_record_broken', Number(a.seq)]),
    );
  });

  /** Stages `records` as a fresh stream `stream`, each linked to the one before (rseq 1, 2…). */
  const stageStream = async (stream: string, records: readonly object[]) => {
    let prev = '0'.repeat(64);
    for (const [i, r] of records.entries()) {
      const text = JSON.stringify(r);
      const hash = stagedHash(stream, i + 1, prev, text);
      await q(
        `insert into audit_staged (stream, rseq, prev_hash, hash, staged_at, record)
          values ($1, $2, $3, $4, $5, $6)`,
        [stream, i + 1, prev, hash, new Date().toISOString(), text],
      );
      prev = hash;
    }
  };

  /** A genuine call record's columns (the chain's own left out), as a template. */
  const template = async (): Promise<Record<string, unknown>> => {
    const [row] = await q<Record<string, unknown>>(
      `select * from audit_log where kind = 'call.pre' order by seq desc limit 1`,
    );
    assert.ok(row);
    const { seq: _s, prev_hash: _p, hash: _h, ...columns } = row;
    return columns;
  };

  const live = () => replicas.filter((r) => r.child.exitCode === null && !r.child.signalCode);

  test('a staged record whose value its column cannot hold is named by an alert, and every replica’s records go on into the chain (attack round 30, F8)', async () => {
    const bot = await agent();
    const base = await template();
    const stream = `f8${'0'.repeat(30)}`;
    const holder = new pg.Client(db);
    await holder.connect();
    await holder.query('begin');
    await holder.query(`select pg_advisory_xact_lock(${CHAIN_LOCK_KEY}::bigint)`);
    // Correctly linked, so only the values tell: 1e20 is beyond bytes_out's int4, NUL is no text.
    await stageStream(stream, [
      { ...base, call_id: 'f8_before', bytes_out: 2 ** 31 - 1, message: 'Ærøskøbing 東京 😀' },
      { ...base, call_id: 'f8_out_of_range', bytes_out: 1e20 },
      { ...base, call_id: 'f8_nul', message: 'a\u0000b' },
      { ...base, call_id: 'f8_after' },
    ]);
    const calls: string[] = [];
    for (let i = 0; i < 3; i++) calls.push((await bot.call()).id);
    await holder.query('commit');
    await holder.end();
    await until(async () => (await stagedLeft()) === 0, 10_000, 'staged drained');
    const genuine = await q<{ n: number }>(
      `select count(*)::int as n from audit_log where kind = 'call.pre' and call_id = any($1)`,
      [calls],
    );
    assert.equal(genuine[0]?.n, calls.length, 'the genuine calls are in the chain');
    const mine = await q<{ call_id: string; bytes_out: number; message: string }>(
      `select call_id, bytes_out, message from audit_log where call_id like 'f8\\_%' order by seq`,
    );
    assert.deepEqual(mine, [
      { call_id: 'f8_before', bytes_out: 2 ** 31 - 1, message: 'Ærøskøbing 東京 😀' },
      { call_id: 'f8_after', bytes_out: base.bytes_out, message: base.message },
    ]);
    const alerts = await q<{ seq: string; details: string }>(
      `select seq, details from audit_log where kind = 'alert' and rule = 'audit.staging'
        and details like $1 order by seq`,
      [`%${stream}%`],
    );
    assert.deepEqual(
      alerts.map((a) => (({ problem, rseq }) => [problem, rseq])(JSON.parse(a.details))),
      [
        ['altered', 2],
        ['altered', 3],
      ],
    );
    const { status, report, text } = verify();
    assert.equal(status, 6, text);
    const named = new Set(report.problems?.map((p) => `${p.kind}@${p.seq}`));
    for (const a of alerts) assert.ok(named.has(`staged_record_broken@${Number(a.seq)}`), text);
  });

  test('an integration that fails all the same is logged and counted, and what it held back goes in after (attack round 30, F8)', async () => {
    const bot = await agent();
    const base = await template();
    // A refusal no check foresees: the database itself refuses the record.
    await q(`alter table audit_log add constraint f8_refused
      check (message is distinct from 'f8 refused') not valid`);
    try {
      await stageStream(`f9${'0'.repeat(30)}`, [{ ...base, call_id: 'f9', message: 'f8 refused' }]);
      const call = (await bot.call()).id;
      // Logged by the replica that sequences (its pino line: the error, then what failed) …
      const logs = (r: Replica) =>
        r
          .output()
          .split('\n')
          .filter(
            (l) =>
              l.includes('f8_refused') && l.includes('integrating staged audit records failed'),
          );
      await until(
        async () => live().some((r) => logs(r).length > 0),
        10_000,
        'the failure is logged',
      );
      const [sequencing] = live().filter((r) => logs(r).length > 0);
      assert.ok(sequencing);
      // … counted on its /metrics at each try, and logged once while it repeats.
      await sleep(600);
      const { failures } = await integrationMetrics(sequencing.base);
      assert.ok(failures >= 2, `${failures} failures counted`);
      assert.equal(logs(sequencing).length, 1, 'a repeated failure is logged once a minute');
      const held = await q('select 1 from audit_log where call_id = $1', [call]);
      assert.equal(held.length, 0, 'the batch rolled back: nothing of it is in the chain');
    } finally {
      await q('alter table audit_log drop constraint f8_refused');
    }
    await until(async () => (await stagedLeft()) === 0, 10_000, 'staged drained');
    assert.equal((await q(`select 1 from audit_log where call_id = 'f9'`)).length, 1);
  });
});
