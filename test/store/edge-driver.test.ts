/**
 * The store's edge driver (src/records/store/edge-driver.ts) on SQLite: a transaction that cannot
 * take the write lock (`begin immediate`, which the driver fails synchronously) is
 * STORE_UNAVAILABLE saying the database stayed locked, never the driver's own error (which the CLI
 * would report as a bug); once the lock is free the same transaction runs.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { isToolgateError } from '../../src/core/index.js';
import { edgeDialect } from '../../src/records/store/edge-driver.js';

test('a transaction that meets the write lock held is STORE_UNAVAILABLE; with the lock free it runs', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-edge-'));
  const path = join(dir, 'locked.db');
  const holder = new Database(path);
  const inner = new Database(path);
  // No wait: the lock is held for the whole refusal, and the test needs no busy timeout.
  inner.pragma('busy_timeout = 0');
  const { dialect } = edgeDialect(new SqliteDialect({ database: inner }), {
    immediateTransactions: true,
  });
  const db = new Kysely<Record<string, never>>({ dialect });
  try {
    holder.exec('create table t (a integer)');
    holder.exec('begin immediate');
    await assert.rejects(
      db.transaction().execute(async (trx) => sql`insert into t values (1)`.execute(trx)),
      (err: unknown) =>
        isToolgateError(err) && err.code === 'STORE_UNAVAILABLE' && /locked/.test(err.message),
    );
    holder.exec('commit');
    await db.transaction().execute(async (trx) => sql`insert into t values (2)`.execute(trx));
    assert.deepEqual(holder.prepare('select a from t').all(), [{ a: 2 }]);
  } finally {
    await db.destroy();
    holder.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
