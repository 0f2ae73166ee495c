/**
 * Sequence-then-integrate at the store (docs/architecture.md §5, "The audit log across
 * replicas"), on every backend: SQLite links at commit and stages nothing; PostgreSQL stages each
 * group commit and integrates on demand, checking every writer stream's links. A staged record
 * removed, changed or put in again is found at integration (an alert in the chain, and `audit
 * verify` fails naming it); the records around it are integrated once each; two processes
 * integrating at once never integrate a record twice.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { AuditLog } from '../../src/records/audit/index.js';
import { firstBreak, GENESIS_HEAD } from '../../src/records/audit-chain/index.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { backends, freshStore } from '../support/backends.js';
import { auditRows } from '../support/store-rows.js';

async function log(store: Store) {
  return (await store.audit.page(0, 100_000)) as unknown as Record<string, unknown>[];
}

const staged = (store: Store) =>
  store.db.selectFrom('audit_staged').selectAll().orderBy('id').execute();

for (const backend of backends()) {
  const stages = backend.name === 'postgres';
  describe(`audit staging on ${backend.name}`, () => {
    test('a commit is linked at once (SQLite) or staged and then integrated once, in order (PostgreSQL)', async () => {
      const store = await freshStore(backend);
      try {
        const { rows } = await store.audit.commit(auditRows(3, 'a'), [], false);
        await store.audit.commit(auditRows(2, 'b'), [], false);
        assert.equal(rows.length, stages ? 0 : 3);
        assert.equal((await staged(store)).length, stages ? 5 : 0);
        assert.equal(await store.audit.integrate(), stages ? 5 : 0);
        assert.equal(await store.audit.integrate(), 0, 'nothing is integrated twice');
        const chain = await log(store);
        assert.deepEqual(
          chain.map((r) => r.call_id),
          ['call_a_0', 'call_a_1', 'call_a_2', 'call_b_0', 'call_b_1'],
        );
        assert.equal(firstBreak(GENESIS_HEAD, chain), null);
        assert.equal((await staged(store)).length, 0);
      } finally {
        await store.close();
      }
    });

    test('a staged record removed, changed or staged again is found at integration, and audit verify names it', {
      skip: stages ? false : 'SQLite links at commit: nothing is ever staged',
    }, async () => {
      const store = await freshStore(backend);
      try {
        await store.audit.commit(auditRows(4, 'x'), [], false);
        await store.audit.commit(auditRows(3, 'y'), [], false);
        const before = await staged(store);
        assert.deepEqual(
          before.map((s) => Number(s.rseq)),
          [1, 2, 3, 4, 5, 6, 7],
        );
        const [, second, , , fifth] = before;
        assert.ok(second && fifth);
        // Removed: the stream's record 2. Changed: record 5's content, its hash left as it was.
        await store.db.deleteFrom('audit_staged').where('id', '=', second.id).execute();
        await sql`update audit_staged set record = replace(record, 'refused 0', 'allowed 0')
          where id = ${fifth.id}`.execute(store.db);
        await store.audit.integrate();
        const chain = await log(store);
        assert.equal(firstBreak(GENESIS_HEAD, chain), null, 'the chain itself is whole');
        const alerts = chain.filter((r) => r.kind === 'alert');
        assert.deepEqual(
          alerts.map((a) => (JSON.parse(String(a.details)) as { problem: string }).problem),
          ['missing', 'altered'],
        );
        assert.match(
          String(alerts[0]?.message),
          /staged audit records 2\.\.2 of stream [0-9a-f]{32} are missing/,
        );
        // Every other record went in once; the missing one is named, not invented.
        assert.deepEqual(
          chain.filter((r) => r.kind !== 'alert').map((r) => r.call_id),
          ['call_x_0', 'call_x_2', 'call_x_3', 'call_y_0', 'call_y_1', 'call_y_2'],
        );
        // Staged again after its integration (a replayed row): refused, named, not doubled.
        await store.db
          .insertInto('audit_staged')
          .values({
            stream: before[0]?.stream ?? '',
            rseq: 1,
            prev_hash: before[0]?.prev_hash ?? '',
            hash: before[0]?.hash ?? '',
            staged_at: new Date().toISOString(),
            record: before[0]?.record ?? '',
          })
          .execute();
        await store.audit.integrate();
        const again = await log(store);
        assert.equal(again.filter((r) => r.call_id === 'call_x_0').length, 1);
        assert.equal(
          (JSON.parse(String(again.at(-1)?.details)) as { problem: string }).problem,
          'repeated',
        );
        const audit = new AuditLog(store, { checkpoints: false });
        const report = await audit.verify();
        await audit.close();
        assert.equal(report.ok, false);
        assert.deepEqual(
          report.problems.map((p) => p.kind),
          ['staged_record_broken', 'staged_record_broken', 'staged_record_broken'],
        );
        assert.equal(report.firstProblem?.seq, 2, JSON.stringify(report.firstProblem));
      } finally {
        await store.close();
      }
    });

    test('two processes integrating at once put each staged record in the chain once', {
      skip: stages ? false : 'SQLite links at commit: nothing is ever staged',
    }, async () => {
      const store = await freshStore(backend);
      const other = await openStore(store.url);
      try {
        for (let i = 0; i < 20; i++) {
          await Promise.all([
            store.audit.commit(auditRows(5, `m${i}`), [], false),
            other.audit.commit(auditRows(5, `o${i}`), [], false),
          ]);
        }
        const counts = await Promise.all([
          store.audit.integrate(),
          other.audit.integrate(),
          store.audit.integrate(),
        ]);
        assert.equal(
          counts.reduce((a, b) => a + b, 0),
          200,
        );
        const chain = await log(store);
        assert.equal(chain.length, 200);
        assert.equal(new Set(chain.map((r) => r.call_id)).size, 200);
        assert.equal(firstBreak(GENESIS_HEAD, chain), null);
        // Each stream's last integrated link is kept: the next staged record must continue it.
        const heads = await store.db.selectFrom('audit_stream_heads').selectAll().execute();
        assert.deepEqual(heads.map((h) => Number(h.rseq)).sort(), [100, 100]);
      } finally {
        await other.close();
        await store.close();
      }
    });
  });
}
