/**
 * What the checkpointer signs. Records this gateway wrote are taken with the leaf hash it computed
 * when writing them; records written by anyone else (another process, another replica) are read
 * back whole and re-hashed before anything is signed. So: a foreign record whose stored hash is not
 * its hash stops the checkpoint (nothing signed); a correct foreign record is signed with the rest;
 * and an own record edited in the database after it was written (hash column left alone) is signed
 * with its true hash, so `verify` names the edit against the signed root. On PostgreSQL records
 * are staged and linked by the fleet's sequencer, so none is this process's own: each is re-hashed.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { sql } from 'kysely';
import { isToolgateError } from '../../src/core/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import type { AuditRecord } from '../../src/records/audit/index.js';
import { appendEvent, openStore, type Store } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { deniedRecord } from '../support/fixtures.js';

const admin = { id: 'test-admin', via: 'library' } as const;

function record(i: number): AuditRecord {
  return deniedRecord(`call_test_${i}`, i, { message: `denied ${i}` });
}

/** Appends through the gateway's writer; resolves once the records are in the chain. */
async function writeOwn(tg: Gateway, from: number, n: number): Promise<void> {
  await Promise.all(Array.from({ length: n }, (_, i) => tg.audit.writer.append(record(from + i))));
  // On PostgreSQL an append is durable once staged; the sequencer links it a moment later.
  await tg.audit.writer.flush();
}

for (const backend of backends()) {
  describe(`checkpoint catch-up on ${backend.name}`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    after(async () => {
      for (const c of cleanups.reverse()) await c();
    });

    /** A gateway, and a second connection to its database for what the test does behind it. */
    async function open(): Promise<{ tg: Gateway; url: string; db: Store['db'] }> {
      const { url, drop } = await backend.fresh();
      const tg = await openGateway({
        db: url,
        audit: { checkpointEvery: 1_000_000, checkpointIntervalMs: 0 },
        // The denials written here would raise a deny-rate alert: a record appended whenever the
        // leader's detectors catch up, between the checkpoint and verify or not.
        detectors: false,
      });
      const behind = await openStore(url);
      cleanups.push(async () => {
        await behind.close();
        await tg.close();
        await drop();
      });
      return { tg, url, db: behind.db };
    }

    test('a correct record from another process is signed with this gateway’s own', async () => {
      const { tg, url } = await open();
      await writeOwn(tg, 0, 10);
      const other = await openStore(url);
      try {
        await appendEvent(other.db, admin, new Date(), {
          action: 'test.foreign',
          subject: 'x',
          details: {},
        });
      } finally {
        await other.close();
      }
      await writeOwn(tg, 10, 5);
      const cp = await tg.audit.checkpoint();
      const report = await tg.audit.verify();
      assert.equal(report.ok, true, JSON.stringify(report.problems));
      assert.equal(cp?.treeSize, report.records);
    });

    test('a foreign record whose stored hash is not its hash stops the checkpoint', async () => {
      const { tg, db } = await open();
      await writeOwn(tg, 0, 5);
      const first = await tg.audit.checkpoint();
      const head = await db
        .selectFrom('audit_log')
        .select(['seq', 'hash'])
        .orderBy('seq', 'desc')
        .limit(1)
        .executeTakeFirstOrThrow();
      // Linked to the head like any append, but its hash column is made up.
      await sql`insert into audit_log (seq, prev_hash, hash, at, kind, decision, details)
        values (${Number(head.seq) + 1}, ${head.hash}, ${'ab'.repeat(32)}, ${new Date().toISOString()},
          'call.denied', 'deny', '{}')`.execute(db);
      await assert.rejects(
        () => tg.audit.checkpoint(),
        (err: unknown) => isToolgateError(err) && err.code === 'AUDIT_CHAIN_BROKEN',
      );
      assert.deepEqual(await tg.audit.latestCheckpoint(), first, 'nothing new was signed');
    });

    test('an own record edited after it was written is signed as written and named by verify', async () => {
      const { tg, db } = await open();
      await writeOwn(tg, 0, 8);
      const target = await db
        .selectFrom('audit_log')
        .select('seq')
        .where('call_id', '=', 'call_test_3')
        .executeTakeFirstOrThrow();
      if (backend.name === 'sqlite') {
        await sql`drop trigger audit_no_update`.execute(db);
      } else {
        await sql`alter table audit_log disable trigger audit_no_update`.execute(db);
      }
      await sql`update audit_log set message = 'nothing happened here' where seq = ${target.seq}`.execute(
        db,
      );
      if (backend.name === 'postgres') {
        // Staged, then linked by the sequencer: no record is this process's own, each is read
        // back and re-hashed like a foreign one, so the edited one stops the checkpoint.
        await assert.rejects(
          () => tg.audit.checkpoint(),
          (err: unknown) => isToolgateError(err) && err.code === 'AUDIT_CHAIN_BROKEN',
        );
      } else {
        const cp = await tg.audit.checkpoint();
        assert.ok(cp && cp.treeSize >= 8);
      }
      const report = await tg.audit.verify();
      assert.equal(report.ok, false);
      assert.equal(report.firstProblem?.kind, 'record_hash_mismatch');
      assert.equal(report.firstProblem?.seq, Number(target.seq));
    });
  });
}
