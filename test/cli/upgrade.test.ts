/**
 * Upgrades across one migration, with the real CLI, on every backend (docs/operations.md,
 * "Upgrades and rollback"). A database an older toolgate wrote — every migration but the last,
 * its rows as that version kept them — is upgraded by this one when it opens it: nothing lost, the
 * log verifies, and what is written next chains after it. The neighbour: a database that holds a
 * migration this toolgate does not know (one a newer version ran) is refused by every command and
 * by `serve`, with one line naming that migration (STORE_TOO_NEW), a non-zero exit, and nothing
 * changed.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { knownMigrations } from '../../src/records/store/index.js';
import { type Backend, backends, unmigrated } from '../support/backends.js';
import { type CliRun, cleanEnv, ensureBuilt, MAIN } from '../support/cli.js';

let dir = '';
before(() => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-upgrade-'));
});
after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }));

function cli(db: string, data: string, args: readonly string[]): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MAIN, '--db', db, '--data-dir', data, ...args],
      { cwd: dir, env: cleanEnv() },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

type AnyDb = Kysely<Record<string, Record<string, unknown>>>;

const names = <DB>(db: Kysely<DB>) =>
  sql<{ name: string }>`select name from kysely_migration order by name`
    .execute(db)
    .then((r) => r.rows.map((row) => row.name));

/**
 * Copies every row of `from` into `to`, column by column as `to` has them: the rows an older
 * version would have written, less whatever a later migration added. Foreign keys and triggers
 * are off for the copy (SQLite's pragma; PostgreSQL's replica role), sequences follow the rows.
 */
async function copyRows(backend: Backend, from: AnyDb, to: AnyDb): Promise<void> {
  const tables = await to.introspection.getTables();
  await to.connection().execute(async (conn) => {
    if (backend.name === 'sqlite') await sql`pragma foreign_keys = off`.execute(conn);
    else await sql`set session_replication_role = replica`.execute(conn);
    for (const table of tables) {
      const cols = table.columns.map((c) => c.name);
      const list = sql.join(cols.map((c) => sql.ref(c)));
      const { rows } = await sql<Record<string, unknown>>`select ${list} from ${sql.table(
        table.name,
      )}`.execute(from);
      if (rows.length === 0) continue;
      await sql`delete from ${sql.table(table.name)}`.execute(conn);
      for (const row of rows) {
        const values = sql.join(cols.map((c) => sql`${row[c] ?? null}`));
        await sql`insert into ${sql.table(table.name)} (${list}) values (${values})`.execute(conn);
      }
      if (backend.name === 'postgres') {
        for (const c of table.columns.filter((col) => col.isAutoIncrementing)) {
          await sql`select setval(pg_get_serial_sequence(${table.name}, ${c.name}),
            (select max(${sql.ref(c.name)}) from ${sql.table(table.name)}))`.execute(conn);
        }
      }
    }
  });
}

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

for (const backend of backends()) {
  describe(`upgrades on ${backend.name}`, () => {
    test('a database of the previous version (every migration but the last) is upgraded on open: rows intact, the log verifies, new records chain after it', async () => {
      const known = await knownMigrations(backend.name);
      const previous = known.at(-2) ?? '';
      const last = known.at(-1) ?? '';
      const data = join(dir, `${backend.name}-a-data`);
      // Rows written by this version first (agents, their events, a signed checkpoint)…
      const source = await backend.fresh();
      for (const args of [
        ['agents', 'create', 'support-bot'],
        ['agents', 'create', 'billing-bot'],
        ['audit', 'checkpoint'],
      ]) {
        const run = await cli(source.url, data, args);
        assert.equal(run.code, 0, run.stderr);
      }
      // …then kept in a database of the previous version, as it would have held them.
      const older = await backend.fresh();
      const { old, migrator } = unmigrated(backend, older.url);
      const { old: src } = unmigrated(backend, source.url);
      try {
        assert.ifError((await migrator.migrateTo(previous)).error);
        await copyRows(backend, src as unknown as AnyDb, old as unknown as AnyDb);
        assert.deepEqual(await names(old), known.slice(0, -1));
      } finally {
        await old.destroy();
        await src.destroy();
        await source.drop();
      }

      const verify = await cli(older.url, data, ['--json', 'audit', 'verify']);
      assert.equal(verify.code, 0, verify.stdout + verify.stderr);
      const before = JSON.parse(verify.stdout) as { records: number; checkpoints: number };
      assert.ok(before.records >= 2 && before.checkpoints >= 1, verify.stdout);
      const agents = await cli(older.url, data, ['--json', 'agents', 'list']);
      assert.equal(agents.code, 0, agents.stderr);
      assert.match(agents.stdout, /support-bot/);
      assert.match(agents.stdout, /billing-bot/);

      const after = unmigrated(backend, older.url).old;
      try {
        assert.deepEqual(await names(after), known, `${last} ran on open`);
      } finally {
        await after.destroy();
      }
      const more = await cli(older.url, data, ['agents', 'create', 'third-bot']);
      assert.equal(more.code, 0, more.stderr);
      const again = await cli(older.url, data, ['--json', 'audit', 'verify']);
      assert.equal(again.code, 0, again.stdout + again.stderr);
      assert.ok((JSON.parse(again.stdout) as { records: number }).records > before.records);
      await older.drop();
    });

    test('a database holding a migration this version does not know: every command refuses with one line and changes nothing', async () => {
      const data = join(dir, `${backend.name}-b-data`);
      const newer = await backend.fresh();
      for (const args of [
        ['agents', 'create', 'support-bot'],
        ['audit', 'checkpoint'],
      ]) {
        const run = await cli(newer.url, data, args);
        assert.equal(run.code, 0, run.stderr);
      }
      const snapshot = async () => {
        const db = unmigrated(backend, newer.url).old;
        try {
          return {
            migrations: await names(db),
            records: await sql<{ n: number }>`select count(*) as n from audit_log`
              .execute(db)
              .then((r) => Number(r.rows[0]?.n)),
            agents: await sql`select id from agents order by id`.execute(db).then((r) => r.rows),
            meta: await sql`select key, value from meta order by key`
              .execute(db)
              .then((r) => r.rows),
          };
        } finally {
          await db.destroy();
        }
      };
      const { old } = unmigrated(backend, newer.url);
      try {
        await sql`insert into kysely_migration (name, timestamp)
          values ('9999_from_a_newer_version', ${new Date().toISOString()})`.execute(old);
      } finally {
        await old.destroy();
      }
      const state = await snapshot();
      const file = backend.name === 'sqlite' ? newer.url.slice('sqlite:'.length) : null;
      const hash = file ? sha256(file) : null;

      for (const args of [
        ['agents', 'list'],
        ['audit', 'verify'],
        ['serve', '--port', '0'],
      ]) {
        const run = await cli(newer.url, data, args);
        assert.equal(run.code, 5, `${args.join(' ')}: ${run.stdout}${run.stderr}`);
        assert.match(
          run.stderr,
          /^error STORE_TOO_NEW: the database holds migration 9999_from_a_newer_version, which this toolgate does not know/,
        );
        assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
        assert.doesNotMatch(run.stderr, /at .*\.js:\d+/, 'no stack trace');
      }
      const json = await cli(newer.url, data, ['--json', 'agents', 'list']);
      assert.equal(json.code, 5);
      const { error } = JSON.parse(json.stdout) as {
        error: { code: string; details: { unknown: string[]; newestKnown: string } };
      };
      assert.equal(error.code, 'STORE_TOO_NEW');
      assert.deepEqual(error.details.unknown, ['9999_from_a_newer_version']);
      assert.equal(error.details.newestKnown, (await knownMigrations(backend.name)).at(-1));

      assert.deepEqual(await snapshot(), state);
      if (file) assert.equal(sha256(file), hash, 'the database file is byte for byte unchanged');
      await newer.drop();
    });
  });
}
