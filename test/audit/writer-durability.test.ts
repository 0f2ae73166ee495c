/**
 * When the audit writer acknowledges. On SQLite a group commit of more than a few records commits
 * without syncing and then syncs the WAL file on the thread pool; no record of that batch may be
 * acknowledged before that sync has finished, and a failed sync fails every record of the batch.
 * A batch of one caller's records syncs inside its own commit and never waits for the pool. The
 * sync is observed through the writer's sync hook wrapped around the real fdatasync, on a real
 * database file; the records are read back from the database afterwards.
 */
import assert from 'node:assert/strict';
import { fdatasync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { promisify } from 'node:util';
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
    // The first append finds the writer idle and commits alone (a one-caller batch, synced in its
    // commit); the other 19, queued meanwhile, are the next group commit.
    const appends = Array.from({ length: 20 }, (_, i) =>
      writer.append(record(i)).then(() => {
        acknowledged.add(i);
      }),
    );
    // Long enough for the commit itself to have happened many times over.
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual([...acknowledged], [0], 'the group is not acknowledged before its WAL sync');
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
    // The first committed alone, synced in its commit; the group of nine failed with its sync.
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', ...Array.from({ length: 9 }, () => 'rejected')],
    );
    await writer.close();
  });

  test('one caller’s records sync inside their own commit, never through the pool', async () => {
    const s = await store('c.db');
    let poolSyncs = 0;
    const log = new AuditLog(s, { checkpoints: false });
    // The log's writer is the gateway's; a second writer on the same handle shows the rule.
    const writer = new AuditWriter(s, {
      syncFile: async (fd) => {
        poolSyncs += 1;
        await realSync(fd);
      },
    });
    for (let i = 0; i < 5; i++) await writer.append(record(200 + i));
    assert.equal(poolSyncs, 0);
    assert.equal((await log.verify()).ok, true);
    await writer.close();
    await log.close();
  });
});
