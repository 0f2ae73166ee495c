/**
 * Staged records whose values the audit log's columns cannot hold (docs/architecture.md §5, "The
 * audit log across replicas", "Tampering"), on a real PostgreSQL: a staged record correctly
 * linked in its stream but holding a number out of an integer column's range, a fraction there, a
 * string with NUL, a lone surrogate, a missing NOT NULL column, or a value of the wrong type is
 * not inserted (the insert would fail and roll the whole integration back, for every replica,
 * forever): an `altered` alert stands for it, and every other record goes in. The benign
 * neighbours (a large number within range, text in ordinary Unicode) go in unchanged, their
 * hashes those of their values. Also: the column kinds the sequencer checks are the schema's, and
 * the staging table is never truncated by vacuum (its AccessExclusive lock would stall staging).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { AuditLog } from '../../src/records/audit/index.js';
import {
  firstBreak,
  GENESIS_HEAD,
  STREAM_GENESIS,
  type StreamHead,
  stagedHash,
} from '../../src/records/audit-chain/index.js';
import type { Store } from '../../src/records/store/index.js';
import { AUDIT_COLUMN_KINDS } from '../../src/records/store/postgres/audit-record.js';
import { backends, freshStore } from '../support/backends.js';
import { auditRows } from '../support/store-rows.js';

const postgres = backends().find((b) => b.name === 'postgres');
const skip = postgres ? false : 'TOOLGATE_TEST_PG_URL is not set (run with --with-postgres)';

/** A genuine record's JSON with `change` applied (a key set to undefined is left out). */
function recordWith(tag: string, change: Record<string, unknown>): string {
  const base = auditRows(1, tag)[0] as Record<string, unknown>;
  return JSON.stringify({ ...base, ...change });
}

/** Stages `records` (JSON texts) as one fresh stream, each correctly linked to the one before. */
async function stageStream(store: Store, stream: string, records: readonly string[]) {
  let head: StreamHead = STREAM_GENESIS;
  for (const record of records) {
    const rseq = head.rseq + 1;
    const hash = stagedHash(stream, rseq, head.hash, record);
    await store.db
      .insertInto('audit_staged')
      .values({
        stream,
        rseq,
        prev_hash: head.hash,
        hash,
        staged_at: new Date().toISOString(),
        record,
      })
      .execute();
    head = { rseq, hash };
  }
}

const chainOf = async (store: Store) =>
  (await store.audit.page(0, 100_000)) as unknown as Record<string, unknown>[];

/** What PostgreSQL's audit_log columns refuse (or would store as another value than hashed). */
const POISONS: readonly [string, Record<string, unknown>][] = [
  ['bytes_out beyond the integer column', { bytes_out: 1e20 }],
  ['bytes_out just past int4', { bytes_out: 2 ** 31 }],
  ['bytes_out a fraction', { bytes_out: 1.5 }],
  ['duration_ms not finite (1e400 parses to Infinity)', { duration_ms: '__INF__' }],
  ['message with NUL', { message: 'a\u0000b' }],
  ['details with a lone surrogate', { details: 'x\ud800y' }],
  ['details missing (NOT NULL)', { details: undefined }],
  ['message a number (not text)', { message: 5 }],
  ['bytes_out a string (not an integer)', { bytes_out: '7' }],
];

describe('staged values the audit log cannot hold', { skip, concurrency: 1 }, () => {
  let store: Store | null = null;
  before(async () => {
    assert.ok(postgres);
    store = await freshStore(postgres);
  });
  after(async () => {
    await store?.close();
  });

  for (const [name, change] of POISONS) {
    test(`${name}: an alert stands for it, the log goes on`, async () => {
      assert.ok(store);
      const before = (await chainOf(store)).length;
      const tag = name.replace(/[^a-z0-9]+/gi, '_');
      await store.audit.commit(auditRows(2, `${tag}_genuine`), [], false);
      const poisoned = recordWith(`${tag}_poisoned`, change).replace('"__INF__"', '1e400');
      const stream = Buffer.from(tag).toString('hex').padEnd(32, '0').slice(0, 32);
      await stageStream(store, stream, [
        recordWith(`${tag}_before`, { bytes_out: 2 ** 31 - 1, message: 'Ærøskøbing 東京 😀' }),
        poisoned,
        recordWith(`${tag}_after`, { duration_ms: 1e300 }),
      ]);
      await store.audit.commit(auditRows(1, `${tag}_later`), [], false);
      await store.audit.integrate();
      const chain = await chainOf(store);
      assert.equal(firstBreak(GENESIS_HEAD, chain), null, 'the chain is whole');
      const added = chain.slice(before);
      assert.deepEqual(
        added.map((r) => r.call_id ?? `alert:${JSON.parse(String(r.details)).problem}`),
        [
          `call_${tag}_genuine_0`,
          `call_${tag}_genuine_1`,
          `call_${tag}_before_0`,
          'alert:altered',
          `call_${tag}_after_0`,
          `call_${tag}_later_0`,
        ],
      );
      const alert = added[3] as Record<string, unknown>;
      assert.equal(alert.rule, 'audit.staging');
      assert.deepEqual(
        (JSON.parse(String(alert.details)) as { stream: string; rseq: number }).rseq,
        2,
      );
      // The benign neighbours go in as staged.
      assert.equal(added[2]?.bytes_out, 2 ** 31 - 1);
      assert.equal(added[2]?.message, 'Ærøskøbing 東京 😀');
      assert.equal(added[4]?.duration_ms, 1e300);
      assert.equal((await store.db.selectFrom('audit_staged').select('id').execute()).length, 0);
    });
  }

  test('audit verify names each such record, and only those', async () => {
    assert.ok(store);
    const audit = new AuditLog(store, { checkpoints: false });
    const report = await audit.verify();
    await audit.close();
    assert.equal(report.ok, false);
    assert.deepEqual(
      report.problems.map((p) => p.kind),
      POISONS.map(() => 'staged_record_broken'),
    );
  });

  test('the column kinds checked are those of the migrated audit_log', async () => {
    assert.ok(store);
    const columns = await sql<{ column_name: string; data_type: string; is_nullable: string }>`
      select column_name, data_type, is_nullable from information_schema.columns
      where table_name = 'audit_log' and column_name not in ('seq', 'prev_hash', 'hash')`.execute(
      store.db,
    );
    const kindOf: Record<string, string> = {
      text: 'text',
      integer: 'int4',
      bigint: 'int8',
      'double precision': 'float8',
    };
    const schema = Object.fromEntries(
      columns.rows.map((c) => [
        c.column_name,
        { kind: kindOf[c.data_type] ?? c.data_type, required: c.is_nullable === 'NO' },
      ]),
    );
    assert.deepEqual(schema, AUDIT_COLUMN_KINDS);
  });

  test('vacuum never truncates the staging table (its lock would stall every staging)', async () => {
    assert.ok(store);
    const rel = await sql<{ reloptions: string[] | null }>`
      select reloptions from pg_class where relname = 'audit_staged'`.execute(store.db);
    assert.deepEqual(rel.rows[0]?.reloptions, ['vacuum_truncate=off']);
  });
});
