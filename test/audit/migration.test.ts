/**
 * Upgrading a database written before the audit chain (migration 0008): the audit records already
 * there (with a gap in their numbering, as a PostgreSQL sequence leaves after a rollback) and the
 * events recorded so far are chained in order, and the log verifies; afterwards a record without
 * its chain is refused by the database itself.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { AuditLog, DEFAULT_ORIGIN, generateNoteSigner } from '../../src/records/audit/index.js';
import { openStore } from '../../src/records/store/index.js';
import { backends, unmigrated } from '../support/backends.js';

for (const backend of backends()) {
  describe(`audit chain migration on ${backend.name}`, () => {
    test('old records and events are chained in order and verify; unchained inserts are refused', async () => {
      const { url, drop } = await backend.fresh();
      try {
        const { old, migrator } = unmigrated(backend, url);
        const { error } = await migrator.migrateTo('0006_change_requests');
        assert.ifError(error);
        for (const [seq, kind] of [
          [1, 'call.pre'],
          [2, 'call.post'],
          [5, 'call.denied'],
        ] as const) {
          await sql`insert into audit_log (seq, at, kind, call_id, decision, details, duration_ms)
            values (${seq}, ${'2026-01-01T00:00:00.000Z'}, ${kind}, ${`c${seq}`}, 'allow', '{}', ${0.1 + seq / 3})`.execute(
            old,
          );
        }
        await sql`insert into events (at, actor, via, action, subject, details)
          values ('2026-01-02T00:00:00.000Z', 'admin', 'cli', 'grant.added', 'agent:a', '{"capability":"x"}')`.execute(
          old,
        );
        await old.destroy();

        const store = await openStore(url);
        try {
          const log = new AuditLog(store, {
            signer: generateNoteSigner(DEFAULT_ORIGIN).signer,
            checkpointIntervalMs: 0,
          });
          const report = await log.verify();
          assert.equal(report.ok, true, JSON.stringify(report.problems));
          assert.equal(report.records, 4);
          const kinds = await store.db
            .selectFrom('audit_log')
            .select(['seq', 'kind'])
            .orderBy('seq')
            .execute();
          assert.deepEqual(
            kinds.map((k) => [Number(k.seq), k.kind]),
            [
              [1, 'call.pre'],
              [2, 'call.post'],
              [3, 'call.denied'],
              [4, 'event.grant.added'],
            ],
          );
          await assert.rejects(
            sql`insert into audit_log (seq, at, kind, decision, details) values (99, 'x', 'forged', 'allow', '{}')`.execute(
              store.db,
            ),
          );
          await log.checkpoint();
          assert.equal((await log.verify()).signedSize, 4);
          await log.close();
        } finally {
          await store.close();
        }
      } finally {
        await drop();
      }
    });
  });
}
