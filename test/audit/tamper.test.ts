/**
 * Tampering with the audit log behind toolgate's back: the SQLite file is opened with
 * better-sqlite3, the append-only triggers are dropped, and one attack is made per copy — a field
 * changed, a row deleted, two rows reordered, a row inserted, the tail truncated, the chain
 * rewritten, the checkpoints re-signed with another key. `audit verify` must detect each and name
 * where it starts; the untouched copy (the benign neighbour) must verify. The same attacks on an
 * exported bundle are caught offline.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import {
  closeSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import {
  AuditLog,
  checkpointText,
  DEFAULT_ORIGIN,
  generateNoteSigner,
  MerkleTree,
  type NoteSigner,
  recordHash,
  type VerifyReport,
  verifyBundle,
} from '../../src/records/audit/index.js';
import { appendEvent, openStore } from '../../src/records/store/index.js';
import { cleanEnv, ensureBuilt, MAIN } from '../support/cli.js';

const RECORDS = 40;
const dir = mkdtempSync(join(tmpdir(), 'toolgate-tamper-'));
const pristine = join(dir, 'pristine.db');
const keyPem = join(dir, 'audit-signing-key.pem');
let signer: NoteSigner;

function record(i: number) {
  return {
    kind: 'call.pre' as const,
    at: new Date(Date.UTC(2026, 5, 1, 10, 0, i)),
    callId: `call-${i}`,
    sessionId: 'ses-1',
    runId: 'run-1',
    agentId: 'support-bot',
    userId: null,
    toolId: 'search_tickets',
    toolVersion: '1.0.0',
    argsHash: `sha256:${i}`,
    argsRedacted: { query: `q${i}`, token: '***' },
    decision: 'allow' as const,
    durationMs: i + 0.123456789,
  };
}

before(async () => {
  ensureBuilt();
  const fresh = generateNoteSigner(DEFAULT_ORIGIN);
  signer = fresh.signer;
  writeFileSync(keyPem, fresh.pem, { mode: 0o600 });
  const store = await openStore(`sqlite:${pristine}`);
  const log = new AuditLog(store, { signer, checkpointEvery: 10, checkpointIntervalMs: 0 });
  for (let i = 0; i < RECORDS; i++) {
    await log.writer.append(record(i));
    if (i === 4) {
      await appendEvent(store.db, { id: 'admin', via: 'cli' }, new Date(), {
        action: 'grant.added',
        subject: 'agent:support-bot',
        details: { capability: 'tickets.read' },
      });
    }
    // Checkpoints land every 10 records (background), and one more on close.
    if (i % 10 === 9) await log.checkpoint();
  }
  await log.close();
  await store.close();
});

after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }));

/** A copy of the pristine log with the triggers dropped, and `attack` applied to it. */
function tampered(name: string, attack: (db: Database.Database) => void): string {
  const path = join(dir, `${name}.db`);
  copyFileSync(pristine, path);
  const db = new Database(path);
  for (const t of [
    'audit_no_update',
    'audit_no_delete',
    'audit_chained',
    'audit_checkpoints_no_update',
    'audit_checkpoints_no_delete',
  ]) {
    db.exec(`drop trigger if exists ${t}`);
  }
  attack(db);
  db.close();
  return path;
}

async function verifyDb(path: string, keys?: string[]): Promise<VerifyReport> {
  const store = await openStore(`sqlite:${path}`);
  try {
    const log = new AuditLog(store, { signer, checkpoints: false });
    return await log.verify(keys ? { keys } : {});
  } finally {
    await store.close();
  }
}

type Row = Record<string, unknown> & { seq: number; hash: string };

function rows(db: Database.Database): Row[] {
  return db.prepare('select * from audit_log order by seq').all() as Row[];
}

/** Rewrites every record from `seq` on so the chain holds again (what a careful attacker does). */
function rechain(db: Database.Database, seq: number): void {
  const all = rows(db);
  let prev = (all[seq - 2]?.hash as string | undefined) ?? '0'.repeat(64);
  for (const row of all.slice(seq - 1)) {
    const { hash: _h, ...rest } = row;
    const hash = recordHash({ ...rest, prev_hash: prev });
    db.prepare('update audit_log set prev_hash = ?, hash = ? where seq = ?').run(
      prev,
      hash,
      row.seq,
    );
    prev = hash;
  }
}

function expectProblem(
  report: VerifyReport,
  kind: string,
  seq: number | null,
  message?: RegExp,
): void {
  assert.equal(report.ok, false, 'tampering went unnoticed');
  const p = report.firstProblem;
  assert.ok(p, 'no problem reported');
  assert.equal(p.kind, kind, JSON.stringify(report.problems, null, 1));
  assert.equal(p.seq, seq, p.message);
  if (message) assert.match(p.message, message);
}

describe('audit verify finds tampering in the database file', () => {
  test('the untouched log verifies: records chain, every checkpoint signs the right root', async () => {
    const report = await verifyDb(pristine);
    assert.equal(report.ok, true, JSON.stringify(report.problems));
    assert.equal(report.records, RECORDS + 1);
    assert.equal(report.signedSize, RECORDS + 1);
    assert.ok(report.checkpoints >= 4);
    // The grant event is a record of the chain, in order.
    const db = new Database(pristine, { readonly: true });
    const event = db
      .prepare("select * from audit_log where kind = 'event.grant.added'")
      .get() as Row;
    db.close();
    assert.equal(event.seq, 6);
    assert.match(String(event.details), /tickets\.read/);
  });

  test('a changed field is located at its record', async () => {
    const path = tampered('field', (db) => {
      db.prepare("update audit_log set agent_id = 'someone-else' where seq = 17").run();
    });
    expectProblem(await verifyDb(path), 'record_hash_mismatch', 17, /field was changed/);
  });

  test('a changed field with its hash recomputed breaks the link of the next record', async () => {
    const path = tampered('field-rehashed', (db) => {
      const row = rows(db)[16] as Row;
      const { hash: _h, ...rest } = row;
      const changed = { ...rest, outcome: 'nothing happened' };
      db.prepare('update audit_log set outcome = ?, hash = ? where seq = 17').run(
        changed.outcome,
        recordHash(changed),
      );
    });
    expectProblem(await verifyDb(path), 'chain_broken', 18, /record 17 was replaced/);
  });

  test('a deleted row is named', async () => {
    const path = tampered('delete', (db) =>
      db.prepare('delete from audit_log where seq = 12').run(),
    );
    expectProblem(await verifyDb(path), 'record_missing', 12, /record 12 is missing/);
  });

  test('two reordered rows are located at the first of them', async () => {
    const path = tampered('reorder', (db) => {
      db.prepare('update audit_log set seq = -1 where seq = 20').run();
      db.prepare('update audit_log set seq = 20 where seq = 21').run();
      db.prepare('update audit_log set seq = 21 where seq = -1').run();
    });
    expectProblem(await verifyDb(path), 'record_hash_mismatch', 20);
  });

  test('an inserted row (later rows renumbered) is located where it went in', async () => {
    const path = tampered('insert', (db) => {
      const all = rows(db);
      for (const r of [...all].reverse()) {
        if (r.seq > 25)
          db.prepare('update audit_log set seq = ? where seq = ?').run(r.seq + 1, r.seq);
      }
      const { hash: _h, ...template } = all[24] as Row;
      const forged = {
        ...template,
        seq: 26,
        prev_hash: (all[24] as Row).hash,
        call_id: 'forged',
        trace_id: 'forged',
      };
      const cols = Object.keys(forged);
      db.prepare(
        `insert into audit_log (${cols.join(',')}, hash) values (${cols.map(() => '?').join(',')}, ?)`,
      ).run(...cols.map((c) => forged[c as keyof typeof forged] as unknown), recordHash(forged));
    });
    expectProblem(await verifyDb(path), 'record_hash_mismatch', 27, /inserted before it/);
  });

  test('a truncated tail is caught by the checkpoint that signed it', async () => {
    const path = tampered('truncate', (db) =>
      db.prepare('delete from audit_log where seq > 35').run(),
    );
    expectProblem(await verifyDb(path), 'checkpoint_beyond_log', 36, /tail truncated/);
  });

  test('a rewritten chain is caught by the signed root, between the last good checkpoint and it', async () => {
    const path = tampered('rewrite', (db) => {
      db.prepare("update audit_log set tool_id = 'refund_order' where seq = 25").run();
      rechain(db, 25);
    });
    const report = await verifyDb(path);
    expectProblem(report, 'checkpoint_root_mismatch', report.firstProblem?.seq ?? -1);
    const p = report.firstProblem;
    assert.ok(
      p && p.seq !== null && p.treeSize !== undefined && p.seq <= 25 && p.treeSize >= 25,
      p?.message,
    );
  });

  test('checkpoints re-signed with another key (and the key file replaced) do not verify', async () => {
    const attacker = generateNoteSigner(DEFAULT_ORIGIN).signer;
    const path = tampered('resign', (db) => {
      db.prepare("update audit_log set tool_id = 'refund_order' where seq = 25").run();
      rechain(db, 25);
      db.prepare('delete from audit_checkpoints').run();
      const tree = new MerkleTree();
      for (const r of rows(db)) tree.append(Buffer.from(r.hash, 'hex'));
      const root = tree.root();
      db.prepare(
        'insert into audit_checkpoints (tree_size, root_hash, note, at) values (?, ?, ?, ?)',
      ).run(
        tree.size,
        root.toString('hex'),
        attacker.sign(checkpointText(DEFAULT_ORIGIN, tree.size, root)),
        new Date().toISOString(),
      );
    });
    // Verified with the key the auditor trusts (not whatever key now sits beside the database).
    const report = await verifyDb(path, [signer.verifierKey]);
    expectProblem(report, 'checkpoint_signature', null, /not trusted/);
    assert.equal(report.signedSize, 0);
    // With the attacker's key the forgery is self-consistent: trust comes from the key, not the file.
    assert.equal((await verifyDb(path, [attacker.verifierKey])).ok, true);
  });

  test('toolgate audit verify (CLI) exits 6 (verification failed) and names the record; 0 on the untouched log', async () => {
    const path = tampered('cli', (db) => db.prepare('delete from audit_log where seq = 30').run());
    const dataDir = mkdtempSync(join(dir, 'data-'));
    copyFileSync(keyPem, join(dataDir, 'audit-signing-key.pem'));
    const run = (db: string) =>
      new Promise<{ code: number; stdout: string }>((resolve) => {
        execFile(
          process.execPath,
          [MAIN, '--json', '--db', `sqlite:${db}`, '--data-dir', dataDir, 'audit', 'verify'],
          { env: cleanEnv(), timeout: 20_000 },
          (err, stdout) => resolve({ code: err ? Number(err.code) : 0, stdout }),
        );
      });
    const bad = await run(path);
    assert.equal(bad.code, 6);
    const report = JSON.parse(bad.stdout) as VerifyReport;
    assert.equal(report.firstProblem?.seq, 30);
    assert.equal(report.firstProblem?.kind, 'record_missing');
    const good = await run(pristine);
    assert.equal(good.code, 0, good.stdout);
    assert.equal((JSON.parse(good.stdout) as VerifyReport).ok, true);
  });
});

describe('audit verify on a damaged database file', () => {
  const dataDir = join(dir, 'data-corrupt');
  before(() => {
    mkdirSync(dataDir, { recursive: true });
    copyFileSync(keyPem, join(dataDir, 'audit-signing-key.pem'));
  });
  const run = (db: string, json: boolean) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [
          MAIN,
          ...(json ? ['--json'] : []),
          '--db',
          `sqlite:${db}`,
          '--data-dir',
          dataDir,
          'audit',
          'verify',
        ],
        { env: cleanEnv(), timeout: 20_000 },
        (err, stdout, stderr) => resolve({ code: err ? Number(err.code) : 0, stdout, stderr }),
      );
    });

  /** A copy whose `index`-th audit_log leaf page (in seq order) is overwritten with garbage. */
  function damagedLeaf(name: string): { path: string; lastGood: number } {
    const path = join(dir, `${name}.db`);
    copyFileSync(pristine, path);
    const db = new Database(path, { readonly: true });
    const leaves = db
      .prepare(
        "select pageno, ncell, pgoffset, pgsize from dbstat where name = 'audit_log' and pagetype = 'leaf' order by path",
      )
      .all() as { pageno: number; ncell: number; pgoffset: number; pgsize: number }[];
    db.close();
    assert.ok(leaves.length >= 3, `the log spans ${leaves.length} leaf pages; the test needs 3`);
    const victim = leaves[1] as (typeof leaves)[number];
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.alloc(victim.pgsize, 0xff), 0, victim.pgsize, victim.pgoffset);
    closeSync(fd);
    // Leaves hold seqs in order: the records before the damaged page are the first leaf's.
    return { path, lastGood: leaves[0]?.ncell ?? 0 };
  }

  test('a corrupted page is a verification problem naming the last good record, as JSON, exit 6, no stack trace', async () => {
    const { path, lastGood } = damagedLeaf('corrupt-page');
    const bad = await run(path, true);
    assert.equal(bad.code, 6, bad.stderr);
    assert.doesNotMatch(bad.stderr, /\n\s+at /, 'no stack trace');
    const report = JSON.parse(bad.stdout) as VerifyReport;
    assert.equal(report.ok, false);
    assert.equal(report.firstProblem?.kind, 'store_corrupt');
    assert.equal(report.firstProblem?.seq, lastGood + 1);
    assert.equal(report.lastGoodSeq, lastGood);
    assert.equal(report.records, lastGood, 'every record before the damage was still checked');
    assert.match(report.firstProblem?.message ?? '', /malformed|corrupt/i);

    const text = await run(path, false);
    assert.equal(text.code, 6);
    assert.match(
      text.stdout,
      new RegExp(`FAILED: .*record ${lastGood + 1}: .*last good record is ${lastGood}`),
    );
    assert.doesNotMatch(text.stderr, /\n\s+at |unexpected error/);
  });

  test('a file that is no longer a database at all is reported the same way', async () => {
    const path = join(dir, 'not-a-db.db');
    copyFileSync(pristine, path);
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.alloc(100, 0x42), 0, 100, 0);
    closeSync(fd);
    const bad = await run(path, true);
    assert.equal(bad.code, 6, bad.stderr);
    assert.doesNotMatch(bad.stderr, /\n\s+at /);
    const report = JSON.parse(bad.stdout) as VerifyReport;
    assert.equal(report.firstProblem?.kind, 'store_corrupt');
    assert.equal(report.lastGoodSeq, 0);
  });

  test('the undamaged copy still verifies, with its last record as the last good one', async () => {
    const good = await run(pristine, true);
    assert.equal(good.code, 0, good.stdout);
    const report = JSON.parse(good.stdout) as VerifyReport;
    assert.equal(report.ok, true);
    assert.equal(report.lastGoodSeq, report.lastSeq);
  });
});

describe('audit verify --bundle finds tampering offline', () => {
  let bundle: string;

  before(async () => {
    bundle = join(dir, 'bundle');
    const store = await openStore(`sqlite:${pristine}`);
    const log = new AuditLog(store, { signer, checkpoints: false });
    await log.exportBundle(bundle, { from: 11, to: 33 });
    await store.close();
  });

  function copyBundle(name: string, edit: (files: Record<string, string>) => void): string {
    const out = join(dir, `bundle-${name}`);
    const files: Record<string, string> = {};
    for (const f of ['records.jsonl', 'checkpoints.jsonl', 'context.json', 'public-key.vkey']) {
      files[f] = readFileSync(join(bundle, f), 'utf8');
    }
    edit(files);
    rmSync(out, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    mkdirSync(out, { recursive: true });
    for (const [f, text] of Object.entries(files)) writeFileSync(join(out, f), text);
    return out;
  }

  const lines = (text: string) => text.trimEnd().split('\n');
  const join2 = (ls: string[]) => `${ls.join('\n')}\n`;
  const edited = (text: string, seq: number, change: (r: Row) => Row | null) =>
    join2(
      lines(text).flatMap((l) => {
        const r = JSON.parse(l) as Row;
        if (r.seq !== seq) return [l];
        const c = change(r);
        return c ? [JSON.stringify(c)] : [];
      }),
    );

  test('an untouched bundle of records 11..33 verifies with the trusted key, with no database', () => {
    const report = verifyBundle(bundle, { key: signer.verifierKey });
    assert.equal(report.ok, true, JSON.stringify(report.problems));
    assert.equal(report.records, 23);
    assert.ok(report.checkpoints >= 2);
  });

  for (const [name, seq, kind, edit] of [
    [
      'field',
      15,
      'record_hash_mismatch',
      (f: Record<string, string>) => {
        f['records.jsonl'] = edited(f['records.jsonl'] as string, 15, (r) => ({
          ...r,
          agent_id: 'x',
        }));
      },
    ],
    [
      'delete',
      20,
      'record_missing',
      (f: Record<string, string>) => {
        f['records.jsonl'] = edited(f['records.jsonl'] as string, 20, () => null);
      },
    ],
    // Record 23 arrives where 22 belongs (22 then comes out of order).
    [
      'reorder',
      22,
      'record_missing',
      (f: Record<string, string>) => {
        const ls = lines(f['records.jsonl'] as string);
        const a = ls.findIndex((l) => (JSON.parse(l) as Row).seq === 22);
        [ls[a], ls[a + 1]] = [ls[a + 1] as string, ls[a] as string];
        f['records.jsonl'] = join2(ls);
      },
    ],
    [
      'truncate',
      31,
      'record_missing',
      (f: Record<string, string>) => {
        f['records.jsonl'] = join2(lines(f['records.jsonl'] as string).slice(0, 20));
      },
    ],
  ] as const) {
    test(`a bundle with a ${name} is caught at record ${seq}`, () => {
      const out = copyBundle(name, edit);
      const report = verifyBundle(out, { key: signer.verifierKey });
      assert.equal(report.ok, false);
      assert.equal(report.firstProblem?.seq, seq, JSON.stringify(report.problems));
      assert.equal(report.firstProblem?.kind, kind);
    });
  }

  test('a bundle whose key and checkpoints were replaced fails against the trusted key', () => {
    const attacker = generateNoteSigner(DEFAULT_ORIGIN).signer;
    const out = copyBundle('key', (f) => {
      f['public-key.vkey'] = `${attacker.verifierKey}\n`;
      f['checkpoints.jsonl'] = join2(
        lines(f['checkpoints.jsonl'] as string).map((l) => {
          const c = JSON.parse(l) as { tree_size: number; root_hash: string; note: string };
          const root = Buffer.from(c.root_hash, 'hex');
          return JSON.stringify({
            ...c,
            note: attacker.sign(checkpointText(DEFAULT_ORIGIN, c.tree_size, root)),
          });
        }),
      );
    });
    const report = verifyBundle(out, { key: signer.verifierKey });
    assert.equal(report.ok, false);
    assert.equal(report.firstProblem?.kind, 'checkpoint_signature');
    assert.equal(report.keySource, 'given');
  });
});
