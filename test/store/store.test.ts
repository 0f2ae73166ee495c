/** The storage layer on every backend: migrations, append-only events, URL parsing, pragmas. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { postgresUrl } from '../../src/records/store/db-url.js';
import { dbLocation, openStore, parseDbUrl } from '../../src/records/store/index.js';
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

  test('every secret of a postgres URL is masked where shown and left out for a client tool; other parameters stay as written', () => {
    const url =
      'postgres://tg:u%40ser@db.example:5432/tg?application_name=a%20b&pass%77ord=e&password=q%26p&SSLPassword=k&options=-c%20x&oauth_client_secret=o&sslkey=/k.pem';
    const p = postgresUrl(url);
    for (const secret of ['u%40ser', 'u@ser', 'q%26p', '=k', '=e', '=o']) {
      assert.equal(p.location.includes(secret), false, `${secret} in ${p.location}`);
      assert.equal(p.withoutSecrets.includes(secret), false, `${secret} in ${p.withoutSecrets}`);
    }
    assert.equal(
      p.location,
      'postgres://tg:***@db.example:5432/tg?application_name=a%20b&pass%77ord=***&password=***&SSLPassword=***&options=-c%20x&oauth_client_secret=***&sslkey=/k.pem',
    );
    assert.equal(
      p.withoutSecrets,
      'postgres://tg@db.example:5432/tg?application_name=a%20b&options=-c%20x&sslkey=/k.pem',
    );
    // As node-postgres signs in: the query's last password (names decoded), before the userinfo's.
    assert.equal(p.password, 'q&p');
    assert.deepEqual(p.otherSecrets, ['sslpassword', 'oauth_client_secret']);
    assert.equal(parseDbUrl(url).location, p.location);
    // The neighbours: the userinfo's password alone; a URL without any secret is unchanged.
    assert.equal(postgresUrl('postgres://tg:s%2Bx@h/d').password, 's+x');
    const plain = postgresUrl('postgres://tg@h:5/d?sslmode=require');
    assert.equal(plain.location, 'postgres://tg@h:5/d?sslmode=require');
    assert.equal(plain.withoutSecrets, plain.location);
    assert.deepEqual([plain.password, plain.otherSecrets], ['', []]);
    // A manifest's location written before: shown masked; something else is not echoed.
    assert.equal(dbLocation('postgres://tg@h/d?password=old'), 'postgres://tg@h/d?password=***');
    assert.equal(dbLocation('Pw-not-a-url'), '(not a database URL)');
    assert.throws(
      () => parseDbUrl('postgres://tg:Pw-secret@[bad/d'),
      (err: Error) => {
        assert.equal(err.message.includes('Pw-secret'), false);
        return true;
      },
    );
    assert.throws(
      () => parseDbUrl('Pw-secret-given-as-db'),
      (err: Error) => !err.message.includes('Pw-secret'),
    );
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
