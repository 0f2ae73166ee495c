/**
 * The store conformance suite: the same cases on every backend (a fresh SQLite file, and a real
 * PostgreSQL when the harness started one: `node scripts/run-tests.mjs --with-postgres`). What
 * every dialect's slots must do alike — migrations, the chained audit append and its lock, event
 * appends, driver errors turned into STORE_UNAVAILABLE at the store's edge, keyset pages, opening
 * again. Cases one backend cannot show are named skips.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import pg from 'pg';
import { isStoreCorrupt, isToolgateError, systemActor } from '../../src/core/index.js';
import { AuditLog } from '../../src/records/audit/index.js';
import { firstBreak, GENESIS_HEAD } from '../../src/records/audit-chain/index.js';
import {
  appendEvent,
  isUniqueViolation,
  olderThan,
  openStore,
  type Store,
} from '../../src/records/store/index.js';
import { migrationProvider } from '../../src/records/store/migrations/index.js';
import { backends, freshStore } from '../support/backends.js';
import { auditRows } from '../support/store-rows.js';

const CHILD = fileURLToPath(new URL('../support/store-append-child.ts', import.meta.url));

function isUnavailable(err: unknown): boolean {
  return isToolgateError(err) && err.code === 'STORE_UNAVAILABLE';
}

async function wholeLog(store: Store): Promise<Record<string, unknown>[]> {
  return (await store.audit.page(0, 100_000)) as unknown as Record<string, unknown>[];
}

/**
 * Commits `rows` through the audit slot and answers their seqs, in the order given, once they are
 * in the chain: at once where the slot links at commit (SQLite), after the integration it waits
 * for where the slot stages them for a sequencer (PostgreSQL).
 */
async function commitLinked(
  store: Store,
  rows: ReturnType<typeof auditRows>,
  raw: Parameters<Store['audit']['commit']>[1] = [],
  deferSync = false,
): Promise<number[]> {
  const { rows: linked, durable } = await store.audit.commit(rows, raw, deferSync);
  await durable;
  if (linked.length === rows.length) return linked.map((r) => Number(r.seq));
  assert.equal(linked.length, 0, 'a slot links all of a batch at commit, or none of it');
  await store.audit.settled();
  const ids = rows.map((r) => String(r.call_id));
  const found = await store.db
    .selectFrom('audit_log')
    .select(['seq', 'call_id'])
    .where('call_id', 'in', ids)
    .execute();
  const seqOf = new Map(found.map((f) => [f.call_id, Number(f.seq)]));
  return ids.map((id) => seqOf.get(id) ?? -1);
}

/** Runs the child appender; resolves `ready` once it opened the store, `seqs` when it is done. */
function child(url: string, count: number, batches = 1) {
  const proc = spawn(
    process.execPath,
    ['--import', 'tsx', CHILD, url, String(count), String(batches)],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  proc.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const lines = createInterface({ input: proc.stdout });
  let exited = false;
  let onReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    onReady = resolve;
  });
  const seqs = new Promise<number[]>((resolve, reject) => {
    let result: number[] | null = null;
    lines.on('line', (line) => {
      if (line === 'ready') onReady();
      else result = JSON.parse(line) as number[];
    });
    proc.on('exit', (code) => {
      exited = true;
      if (code === 0 && result) resolve(result);
      else reject(new Error(`child exited ${code}: ${stderr}`));
    });
  });
  return { ready, seqs, exited: () => exited };
}

for (const backend of backends()) {
  describe(`store conformance on ${backend.name}`, () => {
    test('migrations apply: every migration is recorded once and the audit log is append-only', async () => {
      const store = await freshStore(backend);
      try {
        const names = Object.keys(await migrationProvider(backend.name).getMigrations());
        const applied = await sql<{
          name: string;
        }>`select name from kysely_migration order by name`.execute(store.db);
        assert.deepEqual(
          applied.rows.map((r) => r.name),
          names,
        );
        await commitLinked(store, auditRows(1, 'm'));
        await assert.rejects(sql`update audit_log set decision = 'allow'`.execute(store.db));
        await assert.rejects(sql`delete from audit_log`.execute(store.db));
        assert.equal((await wholeLog(store)).length, 1);
      } finally {
        await store.close();
      }
    });

    test('an audit append chains gap-free from seq 1, stores raw arguments, and verifies', async () => {
      const store = await freshStore(backend);
      try {
        const given = [
          {
            call_id: 'call_a_0',
            at: '2026-01-01T00:00:00.000Z',
            agent_id: 'agent-a',
            user_id: 'user-a',
            tool_id: 'weather',
            args: '{"city":"Oslo"}',
          },
        ];
        const first = await store.audit.commit(auditRows(3, 'a'), given, false);
        assert.equal(first.durable, null, 'a batch that may not defer is durable at commit');
        await store.audit.settled();
        assert.deepEqual(
          (await wholeLog(store)).map((r) => [r.seq, r.call_id]),
          [
            [1, 'call_a_0'],
            [2, 'call_a_1'],
            [3, 'call_a_2'],
          ],
        );
        // A batch allowed to defer its sync: durable once its promise settles, if it has one.
        assert.deepEqual(
          await commitLinked(store, auditRows(20, 'b'), [], true),
          Array.from({ length: 20 }, (_, i) => i + 4),
        );
        const log = await wholeLog(store);
        assert.equal(log.length, 23);
        assert.equal(firstBreak(GENESIS_HEAD, log), null);
        const raw = await store.db.selectFrom('call_arguments').selectAll().execute();
        assert.deepEqual(
          raw.map((r) => [r.call_id, r.user_id, r.tool_id, r.args]),
          [['call_a_0', 'user-a', 'weather', '{"city":"Oslo"}']],
        );
        const audit = new AuditLog(store, { checkpoints: false });
        const report = await audit.verify();
        assert.equal(report.ok, true, JSON.stringify(report.problems));
        assert.equal(report.records, 23);
        await audit.close();
      } finally {
        await store.close();
      }
    });

    test('events append with their audit record in one transaction, and roll back together', async () => {
      const store = await freshStore(backend);
      try {
        const at = new Date('2026-02-01T00:00:00.000Z');
        await appendEvent(store.db, systemActor('conformance'), at, {
          action: 'grant.added',
          subject: 'agent:a',
          details: { capability: 'x' },
        });
        await assert.rejects(
          store.db.transaction().execute(async (trx) => {
            await appendEvent(trx, systemActor('conformance'), at, {
              action: 'grant.removed',
              subject: 'agent:a',
              details: {},
            });
            throw new Error('roll back');
          }),
          /roll back/,
        );
        await appendEvent(store.db, systemActor('conformance'), at, {
          action: 'tool.registered',
          subject: 'tool:t',
          details: {},
        });
        const events = await store.db.selectFrom('events').selectAll().orderBy('seq').execute();
        assert.deepEqual(
          events.map((e) => e.action),
          ['grant.added', 'tool.registered'],
        );
        const log = await wholeLog(store);
        assert.deepEqual(
          log.map((r) => [r.seq, r.kind]),
          [
            [1, 'event.grant.added'],
            [2, 'event.tool.registered'],
          ],
          'the rolled-back event left neither a record nor a gap',
        );
        const details = JSON.parse(String(log[1]?.details)) as { event_seq: number };
        assert.equal(details.event_seq, Number(events[1]?.seq));
        assert.equal(firstBreak(GENESIS_HEAD, log), null);
      } finally {
        await store.close();
      }
    });

    test('concurrent appends from two store handles keep one unbroken chain', async () => {
      // The second handle is another process, as a second replica or the CLI beside a server is:
      // SQLite's busy wait blocks its caller's thread, so two handles in one process would wait
      // on each other.
      const store = await freshStore(backend);
      try {
        const other = child(store.url, 5, 30);
        await other.ready;
        const work: Promise<unknown>[] = [];
        let mine = 0;
        for (let i = 0; i < 40; i++) {
          work.push(
            store.audit
              .commit(auditRows(1 + (i % 7), `c${i}`), [], i % 3 === 0)
              .then((c) => c.durable),
          );
          mine += 1 + (i % 7);
          if (i % 5 === 0) {
            mine += 1;
            work.push(
              appendEvent(store.db, systemActor('conformance'), new Date(), {
                action: 'config.applied',
                subject: `config:${i}`,
                details: {},
              }),
            );
          }
          // Let the other process in between.
          if (i % 4 === 0) await Promise.all(work.splice(0));
        }
        await Promise.all(work);
        const theirs = await other.seqs;
        assert.equal(theirs.length, 150);
        await store.audit.settled();
        const log = await wholeLog(store);
        assert.equal(log.length, mine + 150);
        assert.deepEqual(
          log.map((r) => r.seq),
          Array.from({ length: log.length }, (_, i) => i + 1),
        );
        assert.equal(firstBreak(GENESIS_HEAD, log), null);
        const audit = new AuditLog(store, { checkpoints: false });
        const report = await audit.verify();
        assert.equal(report.ok, true, JSON.stringify(report.problems));
        await audit.close();
      } finally {
        await store.close();
      }
    });

    test('the chain lock serialises: another process’s records enter the chain only after the holder commits', async () => {
      const store = await freshStore(backend);
      try {
        await commitLinked(store, auditRows(3, 'before'));
        const { mine, appender } = await store.db.transaction().execute(async (trx) => {
          // Holding the lock, with the head read: a second writer that did not wait for this
          // transaction would link onto seq 3 as well.
          const rows = await store.audit.appendIn(trx, auditRows(2, 'holder'));
          const other = child(store.url, 2);
          await other.ready;
          // The other process is at its commit; it must still be waiting when this one commits.
          await new Promise((r) => setTimeout(r, 300));
          assert.equal(other.exited(), false, 'the second appender waited for the lock');
          return { mine: rows, appender: other };
        });
        assert.deepEqual(
          mine.map((r) => r.seq),
          [4, 5],
        );
        const theirs = await appender.seqs;
        assert.deepEqual(theirs, [6, 7]);
        const log = await wholeLog(store);
        assert.equal(log.length, 7);
        assert.equal(firstBreak(GENESIS_HEAD, log), null);
      } finally {
        await store.close();
      }
    });

    test('a driver failure is STORE_UNAVAILABLE: a closed store answers every way with it', async () => {
      const store = await freshStore(backend);
      const url = store.url;
      const closed = await openStore(url);
      await closed.close();
      try {
        await assert.rejects(closed.db.selectFrom('meta').selectAll().execute(), isUnavailable);
        await assert.rejects(closed.audit.commit(auditRows(1, 'x'), [], false), isUnavailable);
        await assert.rejects(closed.audit.page(0, 10), isUnavailable);
        await assert.rejects(
          appendEvent(closed.db, systemActor('conformance'), new Date(), {
            action: 'x',
            subject: 's',
            details: {},
          }),
          isUnavailable,
        );
        await assert.rejects(
          closed.db.transaction().execute(async () => {}),
          isUnavailable,
        );
        await assert.rejects(closed.ping(), isUnavailable);
        // A mistake in a query is not an outage: the driver's own error, as before.
        await store.db.insertInto('meta').values({ key: 'k', value: '1' }).execute();
        const dup = await store.db
          .insertInto('meta')
          .values({ key: 'k', value: '2' })
          .execute()
          .then(
            () => null,
            (err: unknown) => err,
          );
        assert.ok(isUniqueViolation(dup), String(dup));
        assert.equal(isToolgateError(dup), false);
      } finally {
        await store.close();
      }
    });

    test('a server that cannot be reached, or that ends a query, is STORE_UNAVAILABLE', {
      skip: backend.name === 'sqlite' ? 'an embedded database has no server to lose' : false,
    }, async () => {
      await assert.rejects(openStore('postgres://nobody@127.0.0.1:1/none'), isUnavailable);
      const store = await freshStore(backend);
      try {
        // Its outcome is taken at once: it fails while the loop below still runs.
        const running = sql`select pg_sleep(30)`.execute(store.db).then(
          () => null,
          (err: unknown) => err,
        );
        const admin = new pg.Client(store.url);
        await admin.connect();
        try {
          // Ended by the server (an administrator, a failover): SQLSTATE 57P01 on the wire.
          for (let ended = 0; ended === 0; ) {
            const r = await admin.query(
              "select pg_terminate_backend(pid) as t from pg_stat_activity where query like 'select pg_sleep(30)%' and pid <> pg_backend_pid()",
            );
            ended = r.rowCount ?? 0;
            if (ended === 0) await new Promise((res) => setTimeout(res, 20));
          }
        } finally {
          await admin.end();
        }
        const ended = await running;
        assert.ok(isUnavailable(ended), String(ended));
      } finally {
        await store.close();
      }
    });

    test('damaged data is reported as StoreCorruptError with the driver’s code', {
      skip:
        backend.name === 'postgres'
          ? 'a client cannot damage PostgreSQL data pages; covered on SQLite'
          : false,
    }, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'toolgate-corrupt-'));
      try {
        const path = join(dir, 'tg.db');
        const store = await openStore(`sqlite:${path}`);
        const padded = auditRows(400, 'p').map((r) => ({ ...r, details: 'x'.repeat(300) }));
        await store.audit.commit(padded, [], false);
        await store.close();
        const probe = new BetterSqlite3(path, { readonly: true });
        const leaves = probe
          .prepare(
            "select pgoffset, pgsize from dbstat where name = 'audit_log' and pagetype = 'leaf' order by path",
          )
          .all() as { pgoffset: number; pgsize: number }[];
        probe.close();
        assert.ok(leaves.length >= 3, `${leaves.length} leaf pages`);
        const victim = leaves[1] as { pgoffset: number; pgsize: number };
        const fd = openSync(path, 'r+');
        writeSync(fd, Buffer.alloc(victim.pgsize, 0xff), 0, victim.pgsize, victim.pgoffset);
        closeSync(fd);
        const damaged = await openStore(`sqlite:${path}`);
        try {
          const err = await damaged.audit.page(0, 100_000).then(
            () => null,
            (e: unknown) => e,
          );
          assert.ok(isStoreCorrupt(err), String(err));
          assert.match(err.code, /^SQLITE_CORRUPT/);
          const viaKysely = await damaged.db
            .selectFrom('audit_log')
            .selectAll()
            .execute()
            .then(
              () => null,
              (e: unknown) => e,
            );
          assert.ok(isStoreCorrupt(viaKysely), String(viaKysely));
        } finally {
          await damaged.close();
        }
        // A file that is no database at all fails to open the same way.
        const notDb = join(dir, 'not.db');
        writeFileSync(notDb, Buffer.alloc(4096, 0x42));
        const opened = await openStore(`sqlite:${notDb}`).then(
          () => null,
          (e: unknown) => e,
        );
        assert.ok(isStoreCorrupt(opened), String(opened));
        assert.equal(opened.code, 'SQLITE_NOTADB');
      } finally {
        rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
      }
    });

    test('a keyset page newest-first by (created_at, id) visits every row once, ties included', async () => {
      const store = await freshStore(backend);
      try {
        const at = (i: number) =>
          new Date(Date.UTC(2026, 2, 1, 0, 0, Math.floor(i / 3))).toISOString();
        const ids = Array.from(
          { length: 25 },
          (_, i) => `agent_${String((i * 7) % 25).padStart(2, '0')}`,
        );
        await store.db
          .insertInto('agents')
          .values(
            ids.map((id, i) => ({
              id,
              display_name: id,
              description: 'd',
              owner: 'o',
              enabled: 1,
              spec_hash: 'h',
              created_at: at(i),
              updated_at: at(i),
            })),
          )
          .execute();
        const all = ids
          .map((id, i) => ({ id, created_at: at(i) }))
          .sort((a, b) =>
            a.created_at === b.created_at
              ? a.id < b.id
                ? 1
                : -1
              : a.created_at < b.created_at
                ? 1
                : -1,
          );
        const seen: string[] = [];
        let last: { id: string; created_at: string } | undefined;
        for (;;) {
          let q = store.db
            .selectFrom('agents')
            .select(['id', 'created_at'])
            .orderBy('created_at', 'desc')
            .orderBy('id', 'desc')
            .limit(7);
          if (last) q = q.where(olderThan(last.created_at, last.id));
          const page = await q.execute();
          seen.push(...page.map((r) => r.id));
          last = page[page.length - 1];
          if (page.length < 7) break;
        }
        assert.deepEqual(
          seen,
          all.map((r) => r.id),
        );
      } finally {
        await store.close();
      }
    });

    test('opening again is idempotent: nothing re-migrates and the chain continues', async () => {
      const store = await freshStore(backend);
      try {
        await commitLinked(store, auditRows(4, 'first'));
        const before = await sql<{ n: number }>`select count(*) as n from kysely_migration`.execute(
          store.db,
        );
        const meta = await store.db.selectFrom('meta').selectAll().orderBy('key').execute();
        for (let i = 0; i < 2; i++) {
          const again = await openStore(store.url);
          assert.deepEqual(await commitLinked(again, auditRows(2, `again${i}`)), [
            5 + 2 * i,
            6 + 2 * i,
          ]);
          await again.close();
        }
        const after = await sql<{ n: number }>`select count(*) as n from kysely_migration`.execute(
          store.db,
        );
        assert.equal(Number(after.rows[0]?.n), Number(before.rows[0]?.n));
        assert.deepEqual(
          await store.db.selectFrom('meta').selectAll().orderBy('key').execute(),
          meta,
        );
        const log = await wholeLog(store);
        assert.equal(log.length, 8);
        assert.equal(firstBreak(GENESIS_HEAD, log), null);
      } finally {
        await store.close();
      }
    });
  });
}
