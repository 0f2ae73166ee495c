/**
 * When the audit writer acknowledges. On SQLite every group commit, one caller's single record
 * included, commits without syncing and then syncs the WAL file on the thread pool, so the event
 * loop serves other requests while the disk works; no record of that batch may be acknowledged
 * before that sync has finished, and a failed sync fails every record of the batch. The sync is
 * observed through the writer's sync hook wrapped around the real fdatasync, on a real database
 * file; the records are read back from the database afterwards.
 */
import assert from 'node:assert/strict';
import { fdatasync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { AuditWriter } from '../../src/records/audit/audit-writer.js';
import { AuditLog, type AuditRecord } from '../../src/records/audit/index.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { deniedRecord } from '../support/fixtures.js';

const realSync = promisify(fdatasync);

function record(i: number): AuditRecord {
  return deniedRecord(`call_durability_${i}`, i);
}

describe('audit writer durability on SQLite', () => {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-writer-'));
  const stores: Store[] = [];
  after(async () => {
    for (const s of stores) await s.close();
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });

  async function store(name: string): Promise<Store> {
    const s = await openStore(`sqlite:${join(dir, name)}`);
    stores.push(s);
    return s;
  }

  test('a large batch is acknowledged only after the WAL sync finished', async () => {
    const s = await store('a.db');
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const synced: number[] = [];
    const writer = new AuditWriter(s, {
      syncFile: async (fd) => {
        await gate;
        await realSync(fd);
        synced.push(fd);
      },
    });
    const acknowledged = new Set<number>();
    // The first append finds the writer idle and commits alone; the other 19, queued meanwhile,
    // are the next group commit. Neither batch is acknowledged before its sync.
    const appends = Array.from({ length: 20 }, (_, i) =>
      writer.append(record(i)).then(() => {
        acknowledged.add(i);
      }),
    );
    // Long enough for the commit itself to have happened many times over.
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual([...acknowledged], [], 'no batch is acknowledged before its WAL sync');
    const inDatabase = await s.db
      .selectFrom('audit_log')
      .select('call_id')
      .where('call_id', 'like', 'call_durability_%')
      .execute();
    assert.equal(inDatabase.length, 20, 'the group is committed, waiting only for the sync');
    release();
    await Promise.all(appends);
    assert.equal(acknowledged.size, 20);
    assert.ok(synced.length >= 1, 'the WAL file was synced');
    const rows = await s.db
      .selectFrom('audit_log')
      .select('call_id')
      .where('call_id', 'like', 'call_durability_%')
      .execute();
    assert.equal(rows.length, 20);
    await writer.close();
  });

  test('a failed sync fails every record of its batch', async () => {
    const s = await store('b.db');
    const writer = new AuditWriter(s, {
      syncFile: async () => {
        throw new Error('EIO: simulated');
      },
    });
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => writer.append(record(100 + i))),
    );
    // The first committed alone and the group of nine after it: each failed with its sync.
    assert.deepEqual(
      results.map((r) => r.status),
      Array.from({ length: 10 }, () => 'rejected'),
    );
    await writer.close();
  });

  test('one caller’s single record syncs after its commit, off the event loop, which keeps running meanwhile', async () => {
    const s = await store('c.db');
    const log = new AuditLog(s, { checkpoints: false });
    let release: () => void = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    let syncs = 0;
    let ticksDuringSync = 0;
    let syncing = false;
    // The loop's own heartbeat: it can only beat while no sync holds the thread.
    const heartbeat = setInterval(() => {
      if (syncing) ticksDuringSync += 1;
    }, 1);
    // The log's writer is the gateway's; a second writer on the same handle shows the rule.
    const writer = new AuditWriter(s, {
      syncFile: async (fd) => {
        syncs += 1;
        syncing = true;
        try {
          await held;
          await realSync(fd);
        } finally {
          syncing = false;
        }
      },
    });
    try {
      let acknowledged = false;
      const one = writer.append(record(200)).then(() => {
        acknowledged = true;
      });
      // Conditions, not a fixed sleep: a loaded host may take long to get there, never elsewhere.
      const until = async (holds: () => boolean, what: string) => {
        const t0 = Date.now();
        while (!holds()) {
          assert.ok(Date.now() - t0 < 10_000, what);
          await new Promise((r) => setTimeout(r, 5));
        }
      };
      await until(() => syncs >= 1, 'the single record went through the thread pool’s sync');
      assert.equal(syncs, 1, 'one sync for the one record');
      await until(
        () => ticksDuringSync >= 5,
        `the loop ran during the sync (${ticksDuringSync} beats)`,
      );
      assert.equal(acknowledged, false, 'not acknowledged while its sync is pending');
      const row = await s.db
        .selectFrom('audit_log')
        .select('call_id')
        .where('call_id', '=', 'call_durability_200')
        .executeTakeFirst();
      assert.ok(row, 'committed, waiting only for its sync');
      // Other writes on the connection keep their sync inside the commit.
      const mode = await sql<{ synchronous: number }>`pragma synchronous`.execute(s.db);
      assert.equal(mode.rows[0]?.synchronous, 2, 'synchronous=FULL again after the audit commit');
      release();
      await one;
      assert.equal(acknowledged, true);
      for (let i = 1; i < 5; i++) await writer.append(record(200 + i));
      assert.equal(syncs, 5, 'each sequential append synced off the loop');
      assert.equal((await log.verify()).ok, true);
    } finally {
      clearInterval(heartbeat);
      release();
      await writer.close();
      await log.close();
    }
  });
});
