/**
 * `audit verify` in parallel (docs/architecture.md §5, "Verify in parallel"): on an SQLite file
 * the log's ranges are checked by worker threads, each on its own read-only connection. The
 * parallel check must say exactly what the sequential one says, on the untouched log and after
 * each tampering (a field changed, a record rehashed, deleted mid-range and at a range's edge,
 * reordered, inserted, a far seq, the tail truncated, the chain rewritten under a signed root),
 * and the bundled command must load its workers (`checkedInParallel` counts what they checked).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import {
  AuditLog,
  chainRows,
  checkpointText,
  DEFAULT_ORIGIN,
  generateNoteSigner,
  type LogReport,
  MerkleFrontier,
  type NoteSigner,
  recordHash,
} from '../../src/records/audit/index.js';
import { openStore, type UnchainedRow } from '../../src/records/store/index.js';
import { cleanEnv, ensureBuilt, MAIN } from '../support/cli.js';

const RECORDS = 2_000;
/** Small ranges, so the log is many of them and tampering lands inside and at their edges. */
const RANGE = 128;
const dir = mkdtempSync(join(tmpdir(), 'toolgate-verify-parallel-'));
const pristine = join(dir, 'pristine.db');
let signer: NoteSigner;

function unchained(i: number): UnchainedRow {
  return {
    at: new Date(Date.UTC(2026, 5, 1) + i * 1000).toISOString(),
    kind: i % 7 === 3 ? 'call.post' : 'call.pre',
    call_id: `call-${i}`,
    trace_id: `trace-${i}`,
    session_id: 'ses-1',
    run_id: 'run-1',
    agent_id: 'support-bot',
    // Nulls, unicode, escapes and numbers vary between rows, as they do in a real log.
    user_id: i % 3 === 0 ? null : `user-${i % 5}`,
    tool_id: 'search_tickets',
    tool_version: '1.0.0',
    args_hash: `sha256:${i}`,
    args_redacted: JSON.stringify({ query: `q${i} "é\u2028\\"`, n: i }),
    decision: 'allow',
    code: null,
    rule: null,
    message: i % 11 === 0 ? 'line\nbreak\u0007 \ud83d\ude00' : null,
    approval_id: null,
    approver: null,
    egress_host: null,
    bytes_out: i % 4 === 0 ? i * 17 : null,
    duration_ms: i + 0.123456789,
    outcome: null,
    model: null,
    details: '{}',
  };
}

/** A signed log of `size` records with a checkpoint every `every`, written straight to the file. */
async function buildLog(path: string, size: number, every: number): Promise<void> {
  const store = await openStore(`sqlite:${path}`);
  await store.close();
  const db = new Database(path);
  const all = chainRows(
    { seq: 0, hash: '0'.repeat(64) },
    Array.from({ length: size }, (_, i) => unchained(i)),
  );
  const columns = Object.keys(all[0] as object);
  const insert = db.prepare(
    `insert into audit_log (${columns.join(',')}) values (${columns.map((c) => `@${c}`).join(',')})`,
  );
  const insertCheckpoint = db.prepare(
    'insert into audit_checkpoints (tree_size, root_hash, note, at) values (?, ?, ?, ?)',
  );
  const frontier = new MerkleFrontier();
  db.transaction(() => {
    for (const row of all) {
      insert.run(row);
      frontier.append(Buffer.from(row.hash, 'hex'));
      if (frontier.size % every === 0 || frontier.size === size) {
        const root = frontier.root();
        insertCheckpoint.run(
          frontier.size,
          root.toString('hex'),
          signer.sign(checkpointText(DEFAULT_ORIGIN, frontier.size, root)),
          new Date().toISOString(),
        );
      }
    }
  })();
  db.close();
}

type Row = Record<string, unknown> & { seq: number; hash: string };

/**
 * An insider's rewrite: record `seq` changed, and it and every record after it rehashed and
 * relinked, so each still chains; only a signed checkpoint can tell.
 */
function rewriteFrom(db: Database.Database, seq: number): void {
  db.prepare("update audit_log set tool_id = 'refund_order' where seq = ?").run(seq);
  const all = db
    .prepare('select * from audit_log where seq >= ? order by seq')
    .all(seq - 1) as Row[];
  let prev = (all[0] as Row).hash;
  const update = db.prepare('update audit_log set prev_hash = ?, hash = ? where seq = ?');
  for (const row of all.slice(1)) {
    const { hash: _h, ...rest } = row;
    const hash = recordHash({ ...rest, prev_hash: prev });
    update.run(prev, hash, row.seq);
    prev = hash;
  }
}

function tampered(name: string, attack: (db: Database.Database) => void, from = pristine): string {
  const path = join(dir, `${name}.db`);
  copyFileSync(from, path);
  const db = new Database(path);
  for (const t of ['audit_no_update', 'audit_no_delete', 'audit_chained']) {
    db.exec(`drop trigger if exists ${t}`);
  }
  attack(db);
  db.close();
  return path;
}

async function verify(path: string, parallel: boolean, range = RANGE): Promise<LogReport> {
  const store = await openStore(`sqlite:${path}`);
  try {
    const log = new AuditLog(store, { signer, checkpoints: false });
    // range 0: the default size (whole subtrees of 8192 records).
    return await log.verify({ parallel, workers: 2, ...(range > 0 ? { range } : {}) });
  } finally {
    await store.close();
  }
}

/** Both checks, compared whole: the same findings, in the same words. */
async function same(path: string, range = RANGE): Promise<LogReport> {
  const inOrder = await verify(path, false, range);
  const spread = await verify(path, true, range);
  assert.equal(inOrder.checkedInParallel, 0);
  const { checkedInParallel: _a, ...a } = inOrder;
  const { checkedInParallel: _b, ...b } = spread;
  assert.deepEqual(b, a);
  return spread;
}

before(async () => {
  ensureBuilt();
  signer = generateNoteSigner(DEFAULT_ORIGIN).signer;
  await buildLog(pristine, RECORDS, 300);
});

after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }));

describe('audit verify in parallel says what the sequential check says', () => {
  test('the untouched log verifies, every record checked by a worker', async () => {
    const report = await same(pristine);
    assert.equal(report.ok, true, JSON.stringify(report.problems));
    assert.equal(report.records, RECORDS);
    assert.equal(report.signedSize, RECORDS);
    assert.equal(report.checkedInParallel, RECORDS);
  });

  const attacks: [string, (db: Database.Database) => void, string, number | null][] = [
    [
      'a changed field mid-range',
      (db) => db.prepare("update audit_log set agent_id = 'x' where seq = 700").run(),
      'record_hash_mismatch',
      700,
    ],
    [
      'a changed field in the first record of a range',
      (db) => db.prepare("update audit_log set tool_id = 'x' where seq = ?").run(RANGE * 3 + 1),
      'record_hash_mismatch',
      RANGE * 3 + 1,
    ],
    [
      'a record rehashed (the next link breaks, across a range edge)',
      (db) => {
        const row = db.prepare('select * from audit_log where seq = ?').get(RANGE * 4) as Row;
        const { hash: _h, ...rest } = row;
        const changed = { ...rest, outcome: 'nothing happened' };
        db.prepare('update audit_log set outcome = ?, hash = ? where seq = ?').run(
          changed.outcome,
          recordHash(changed),
          RANGE * 4,
        );
      },
      'chain_broken',
      RANGE * 4 + 1,
    ],
    [
      'a record deleted mid-range',
      (db) => db.prepare('delete from audit_log where seq = 1000').run(),
      'record_missing',
      1000,
    ],
    [
      "the last records of a range deleted (the gap ends at the range's edge)",
      (db) =>
        db.prepare('delete from audit_log where seq between ? and ?').run(RANGE * 2 - 3, RANGE * 2),
      'record_missing',
      RANGE * 2 - 3,
    ],
    [
      'two records swapped',
      (db) => {
        db.prepare('update audit_log set seq = -1 where seq = 1500').run();
        db.prepare('update audit_log set seq = 1500 where seq = 1501').run();
        db.prepare('update audit_log set seq = 1501 where seq = -1').run();
      },
      'record_hash_mismatch',
      1500,
    ],
    [
      'a record with a far seq added (no range plan is made from it)',
      (db) => {
        const row = db.prepare('select * from audit_log where seq = 5').get() as Row;
        const forged: Row = { ...row, seq: 4_000_000_000_000, call_id: 'forged' };
        const cols = Object.keys(forged);
        db.prepare(
          `insert into audit_log (${cols.join(',')}) values (${cols.map(() => '?').join(',')})`,
        ).run(...cols.map((c) => forged[c] as unknown));
      },
      'record_missing',
      RECORDS + 1,
    ],
    [
      'the tail truncated under a signed checkpoint',
      (db) => db.prepare('delete from audit_log where seq > 1950').run(),
      'checkpoint_beyond_log',
      1951,
    ],
  ];
  for (const [name, attack, kind, seq] of attacks) {
    test(`${name}: ${kind} at ${seq}`, async () => {
      const report = await same(tampered(name.replace(/\W+/g, '-'), attack));
      assert.equal(report.ok, false);
      assert.equal(report.firstProblem?.kind, kind, JSON.stringify(report.problems));
      assert.equal(report.firstProblem?.seq, seq);
    });
  }

  test('a chain rewritten from record 901 on (every record rehashed) fails the signed root', async () => {
    const path = tampered('rewrite', (db) => rewriteFrom(db, 901));
    const report = await same(path);
    assert.equal(report.firstProblem?.kind, 'checkpoint_root_mismatch');
    // Every record still chains: the workers took the ranges, and the tree found the rewrite.
    assert.ok(report.checkedInParallel > 0);
    assert.equal(report.firstProblem?.seq, 901);
  });
});

describe('default ranges (8192 records, one subtree each) with a checkpoint every 1000', () => {
  const LONG = 20_000;
  const long = join(dir, 'long.db');
  before(async () => {
    await buildLog(long, LONG, 1000);
  });

  test('the untouched log verifies, every record checked by a worker, every checkpoint compared', async () => {
    const report = await same(long, 0);
    assert.equal(report.ok, true, JSON.stringify(report.problems));
    assert.equal(report.checkedInParallel, LONG);
    assert.equal(report.checkpoints, LONG / 1000);
    assert.equal(report.signedSize, LONG);
  });

  test('a field changed in the middle of a range is named by its seq', async () => {
    const path = tampered(
      'long-field',
      (db) => db.prepare("update audit_log set decision = 'deny' where seq = 12345").run(),
      long,
    );
    const report = await same(path, 0);
    assert.equal(report.firstProblem?.kind, 'record_hash_mismatch');
    assert.equal(report.firstProblem?.seq, 12345);
    assert.equal(report.lastGoodSeq, 12344);
    // The ranges before it were taken from the workers.
    assert.equal(report.checkedInParallel, 8192);
  });

  test('records rewritten from 10,500 on (each still chains) fail the checkpoint inside the range', async () => {
    const path = tampered('long-rewrite', (db) => rewriteFrom(db, 10_500), long);
    const report = await same(path, 0);
    assert.equal(report.firstProblem?.kind, 'checkpoint_root_mismatch');
    assert.equal(report.firstProblem?.treeSize, 11_000);
    assert.equal(report.firstProblem?.seq, 10_001);
    // The two ranges up to the mismatch came from the workers; once the tree is known wrong the
    // rest is read on this thread, which names any further finding record by record.
    assert.equal(report.checkedInParallel, 2 * 8192);
  });
});

describe('the toolgate command checks a long log with its workers', () => {
  test('audit verify --json on 25,000 records: ok and checked in parallel; a deleted record is named', async () => {
    const big = join(dir, 'big.db');
    await buildLog(big, 25_000, 10_000);
    const key = join(dir, 'trusted.vkey');
    writeFileSync(key, `${signer.verifierKey}\n`);
    const run = (db: string) =>
      new Promise<{ code: number; stdout: string }>((resolve) => {
        execFile(
          process.execPath,
          [MAIN, '--json', '--db', `sqlite:${db}`, 'audit', 'verify', '--key', key],
          { env: cleanEnv(), timeout: 60_000 },
          (err, stdout) => resolve({ code: err ? Number(err.code) : 0, stdout }),
        );
      });
    const good = await run(big);
    assert.equal(good.code, 0, good.stdout);
    const report = JSON.parse(good.stdout) as LogReport;
    assert.equal(report.ok, true);
    assert.equal(report.records, 25_000);
    assert.equal(report.checkedInParallel, 25_000);
    const db = new Database(big);
    db.exec('drop trigger if exists audit_no_delete');
    db.prepare('delete from audit_log where seq = 17017').run();
    db.close();
    const bad = await run(big);
    assert.equal(bad.code, 6);
    const found = JSON.parse(bad.stdout) as LogReport;
    assert.equal(found.firstProblem?.kind, 'record_missing');
    assert.equal(found.firstProblem?.seq, 17017);
  });
});
