/**
 * Upgrading a database written before the classified store (migration 0034), on every backend:
 * the chained records already there are left as they were (they cannot be rewritten) and still
 * verify; `meta.audit_masked_from` names the first record written under the masked rule; the old
 * raw arguments (no agent, user or tool) are under erasure and retention like any other, and
 * erasing them keeps `verify` passing.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import {
  AuditLog,
  AuditPseudonyms,
  ClassifiedArguments,
  DEFAULT_ORIGIN,
  generateNoteSigner,
} from '../../src/records/audit/index.js';
import { chainRows, GENESIS_HEAD } from '../../src/records/audit-chain/index.js';
import { openStore } from '../../src/records/store/index.js';
import { backends, unmigrated } from '../support/backends.js';
import { auditRows } from '../support/store-rows.js';

const EMAIL = 'old.customer@customer.example';
const actor = { id: 'operator:root', via: 'library' } as const;

for (const backend of backends()) {
  describe(`classified store migration on ${backend.name}`, () => {
    test('old records stay and verify, the masked rule starts after them, old raw arguments can be erased', async () => {
      const { url, drop } = await backend.fresh();
      try {
        const { old, migrator } = unmigrated(backend, url);
        const { error } = await migrator.migrateTo('0033_owner_notices');
        assert.ifError(error);
        // Two records as an older version wrote them: the argument copy in plain text.
        const rows = auditRows(2, 'old').map((r) => ({
          ...r,
          args_redacted: JSON.stringify({ to: EMAIL }),
        }));
        for (const row of chainRows(GENESIS_HEAD, rows)) {
          await old.insertInto('audit_log').values(row).execute();
        }
        await sql`insert into call_arguments (call_id, at, args)
          values ('call_old_0', '2026-01-01T00:00:00.000Z', ${JSON.stringify({ to: EMAIL })})`.execute(
          old,
        );
        await old.destroy();

        const store = await openStore(url);
        try {
          const marker = await store.db
            .selectFrom('meta')
            .select('value')
            .where('key', '=', 'audit_masked_from')
            .executeTakeFirstOrThrow();
          assert.equal(marker.value, '3');
          const log = new AuditLog(store, {
            signer: generateNoteSigner(DEFAULT_ORIGIN).signer,
            checkpointIntervalMs: 0,
          });
          const before = await log.verify();
          assert.equal(before.ok, true, JSON.stringify(before.problems));
          const classified = new ClassifiedArguments(store, AuditPseudonyms.ephemeral(), {});
          const found = await classified.search({ user: 'nobody' }, actor);
          assert.deepEqual(found.items, []);
          assert.deepEqual(await classified.erase({ value: EMAIL }, actor), { erased: 1 });
          const left = await store.db.selectFrom('call_arguments').selectAll().execute();
          assert.deepEqual(left, []);
          const after = await log.verify();
          assert.equal(after.ok, true, JSON.stringify(after.problems));
          // Two old records, then the search's and the erasure's events.
          assert.equal(after.records, 4);
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
