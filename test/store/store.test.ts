/** The storage layer on every backend: migrations, append-only events, URL parsing, pragmas. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { openStore, parseDbUrl } from '../../src/records/store/index.js';
import { backends, freshStore } from '../support/backends.js';

describe('database URLs', () => {
  test('sqlite:PATH resolves the path; postgres URLs hide the password', () => {
    const s = parseDbUrl('sqlite:./data/x.db');
    assert.equal(s.dialect, 'sqlite');
    assert.ok(s.target.endsWith('/data/x.db') && s.target.startsWith('/'));
    const p = parseDbUrl('postgres://tg:s3cret@127.0.0.1:5432/toolgate');
    assert.equal(p.dialect, 'postgres');
    assert.equal(p.location.includes('s3cret'), false);
  });

  test('an unsupported scheme is refused with the accepted forms', () => {
    assert.throws(() => parseDbUrl('mysql://x'), /sqlite:PATH or postgres/);
    assert.throws(() => parseDbUrl('sqlite:'), /needs a path/);
  });

  test('an unreachable PostgreSQL fails to open instead of hanging', async () => {
    await assert.rejects(openStore('postgres://nobody@127.0.0.1:1/none'));
  });
});

for (const backend of backends()) {
  describe(`store on ${backend.name}`, () => {
    test('migrations run once and opening again is a no-op', async () => {
      const store = await freshStore(backend);
      try {
        const meta = () => store.db.selectFrom('meta').selectAll().orderBy('key').execute();
        const before = await meta();
        assert.deepEqual(
          before.find((r) => r.key === 'catalog_revision'),
          { key: 'catalog_revision', value: '0' },
        );
        const again = await openStore(store.url);
        await again.close();
        // Opening again changes nothing: not the revision, not the cursor key, nothing added.
        assert.deepEqual(await meta(), before);
      } finally {
        await store.close();
      }
    });

    test('the events table refuses UPDATE and DELETE', async () => {
      const store = await freshStore(backend);
      try {
        await store.db
          .insertInto('events')
          .values({ at: 'now', actor: 'a', via: 'cli', action: 'x', subject: 's', details: '{}' })
          .execute();
        await assert.rejects(
          sql`update events set actor = 'mallory'`.execute(store.db),
          /append-only/,
        );
        await assert.rejects(sql`delete from events`.execute(store.db), /append-only/);
        const rows = await store.db.selectFrom('events').selectAll().execute();
        assert.equal(rows.length, 1);
        assert.equal(rows[0]?.actor, 'a');
        assert.equal(typeof rows[0]?.seq, 'number');
      } finally {
        await store.close();
      }
    });

    test('a lifecycle value outside the state machine is refused by the schema', async () => {
      const store = await freshStore(backend);
      try {
        await assert.rejects(
          sql`insert into tool_versions (tool_id, version, name, description, owner, action_class, access_tier, data_access, egress_mode, provenance, tags, definition, definition_hash, lifecycle, quarantined, quarantine_findings, created_at, created_by, updated_at)
              values ('t', '1.0.0', 't', 'd', 'o', 'read', 'public', 'none', 'none', 'internal', '[]', '{}', 'h', 'enabled', 0, '[]', 'x', 'x', 'x')`.execute(
            store.db,
          ),
        );
      } finally {
        await store.close();
      }
    });
  });
}

test('SQLite runs in WAL mode with synchronous=FULL and foreign keys on', async () => {
  const sqlite = backends().find((b) => b.name === 'sqlite');
  assert.ok(sqlite);
  const store = await freshStore(sqlite);
  try {
    const journal = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(store.db);
    const sync = await sql<{ synchronous: number }>`pragma synchronous`.execute(store.db);
    const fk = await sql<{ foreign_keys: number }>`pragma foreign_keys`.execute(store.db);
    assert.equal(journal.rows[0]?.journal_mode, 'wal');
    assert.equal(sync.rows[0]?.synchronous, 2);
    assert.equal(fk.rows[0]?.foreign_keys, 1);
  } finally {
    await store.close();
  }
});
