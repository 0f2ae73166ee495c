/**
 * @module SQLite's audit slot (the interface: ../audit-append.ts). The chain lock is the database's
 * single write lock: a group commit runs as prepared statements in one `BEGIN IMMEDIATE`
 * transaction (the lock taken before the head is read, and the query builder's per-statement cost
 * kept off the hot path); an append inside someone else's transaction takes it with an UPDATE as
 * its first step (it matches no row, yet takes the write lock; a read first would let two
 * processes read the same head and one of them fail to upgrade). docs/architecture.md §5.
 *
 * Durability: the database runs synchronous=FULL, so a commit is on disk when it returns. A batch
 * the writer lets defer its sync commits with synchronous=NORMAL instead and the WAL file is
 * synced afterwards on the thread pool (fdatasync), which is what FULL would have done inside the
 * commit on the event loop; the batch is durable, and may be acknowledged, only after that.
 */
import { closeSync, fdatasync as fdatasyncCallback, fstatSync, openSync } from 'node:fs';
import { promisify } from 'node:util';
import type BetterSqlite3 from 'better-sqlite3';
import { type Kysely, sql, type Transaction } from 'kysely';
import { chainRows, GENESIS_HEAD, linkInPlace } from '../../audit-chain/index.js';
import {
  AUDIT_COLUMNS,
  type AuditAppend,
  type AuditCommit,
  insertChained,
  type RawArgumentsRow,
  readHead,
  type UnchainedRow,
} from '../audit-append.js';
import type { AuditRow, Database, NewAuditRow } from '../database.js';
import { storeError } from '../store-errors.js';

const fdatasync = promisify(fdatasyncCallback);

type Append = (
  rows: UnchainedRow[],
  raw: readonly RawArgumentsRow[],
  sync: boolean,
) => NewAuditRow[];

async function lockChain(trx: Transaction<Database>): Promise<void> {
  await sql`update meta set value = value where key = 'audit_chain'`.execute(trx);
}

/** One process writes the file and links at commit: nothing is ever staged to integrate. */
const LINKED_AT_COMMIT: Pick<AuditAppend, 'integrate' | 'settled' | 'sequence'> = {
  integrate: async () => 0,
  settled: async () => {},
  sequence: () => async () => {},
};

/**
 * `database` is the handle behind `db`. Its prepared statements run only inside
 * `db.connection().execute(…)`, which keeps every other query off the connection meanwhile.
 */
export function auditAppend(db: Kysely<Database>, database: BetterSqlite3.Database): AuditAppend {
  let append: Append | null = null;
  let pageStatement: BetterSqlite3.Statement<[number, number]> | null = null;
  /** The WAL file's descriptor, for syncing it; null when there is none; undefined: not looked. */
  let wal: number | null | undefined;
  /** Deferred syncs still running: a descriptor is closed only once none of them uses it. */
  const syncing = new Set<Promise<void>>();
  const closeWhenIdle = (fd: number) => {
    if (syncing.size === 0) closeSync(fd);
    else void Promise.allSettled([...syncing]).then(() => closeSync(fd));
  };

  const prepared = (): Append => {
    const head = database.prepare('select seq, hash from audit_log order by seq desc limit 1');
    const insert = database.prepare(
      `insert into audit_log (${AUDIT_COLUMNS.join(',')}) values (${AUDIT_COLUMNS.map(() => '?').join(',')})`,
    );
    const insertRaw = database.prepare(
      'insert into call_arguments (call_id, at, agent_id, user_id, tool_id, args) values (?, ?, ?, ?, ?, ?) on conflict (call_id) do nothing',
    );
    const normal = database.prepare('pragma synchronous = NORMAL');
    const full = database.prepare('pragma synchronous = FULL');
    const run = database.transaction(
      (batch: UnchainedRow[], rawRows: readonly RawArgumentsRow[]) => {
        const last = head.get() as { seq: number | bigint; hash: string } | undefined;
        const chained = linkInPlace(
          last ? { seq: Number(last.seq), hash: String(last.hash) } : GENESIS_HEAD,
          batch,
        );
        const values = new Array<unknown>(AUDIT_COLUMNS.length);
        for (const row of chained) {
          for (let i = 0; i < AUDIT_COLUMNS.length; i++)
            values[i] = row[AUDIT_COLUMNS[i] as keyof NewAuditRow] ?? null;
          insert.run(values);
        }
        for (const r of rawRows) {
          insertRaw.run(r.call_id, r.at, r.agent_id, r.user_id, r.tool_id, r.args);
        }
        return chained as NewAuditRow[];
      },
    );
    return (batch, rawRows, sync) => {
      if (sync) return run.immediate(batch, rawRows);
      normal.run();
      try {
        return run.immediate(batch, rawRows);
      } finally {
        full.run();
      }
    };
  };

  /** A descriptor of the database's WAL file; null when there is none to sync. */
  const walFd = (): number | null => {
    if (typeof wal === 'number') {
      // A WAL file removed and made anew (the journal mode switched back and forth by another
      // process) would leave this descriptor syncing a file nobody writes: open the new one.
      try {
        if (fstatSync(wal).nlink > 0) return wal;
        closeWhenIdle(wal);
      } catch {}
      wal = undefined;
    }
    if (wal !== undefined) return wal;
    wal = null;
    if (!database.memory) {
      try {
        wal = openSync(`${database.name}-wal`, 'r');
      } catch {
        // No WAL file to hold: every batch syncs inside its commit.
      }
    }
    return wal;
  };

  return {
    async commit(rows, raw, deferSync, syncFile = fdatasync): Promise<AuditCommit> {
      if (rows.length === 0 && raw.length === 0) return { rows: [], durable: null };
      const fd = deferSync ? walFd() : null;
      const written = await db.connection().execute(async () => {
        try {
          append ??= prepared();
          return append(rows, raw, fd === null);
        } catch (err) {
          throw storeError(err);
        }
      });
      if (fd === null) return { rows: written, durable: null };
      const durable = syncFile(fd);
      syncing.add(durable);
      const done = () => void syncing.delete(durable);
      durable.then(done, done);
      return { rows: written, durable };
    },

    async appendIn(trx, rows) {
      if (rows.length === 0) return [];
      await lockChain(trx);
      const chained = chainRows(await readHead(trx), rows);
      await insertChained(trx, chained, 'question');
      return chained;
    },

    /**
     * Read as arrays and made into objects here: several times quicker than the driver's own row
     * objects, with the same members in the same order (every column, NULL as null).
     */
    page(after: number, limit: number): Promise<AuditRow[]> {
      return db.connection().execute(async () => {
        try {
          pageStatement ??= database
            .prepare<[number, number]>(
              'select * from audit_log where seq > ? order by seq asc limit ?',
            )
            .raw(true);
          const names = pageStatement.columns().map((c) => c.name);
          const out: AuditRow[] = [];
          for (const values of pageStatement.all(after, limit) as unknown[][]) {
            const row: Record<string, unknown> = {};
            for (let i = 0; i < names.length; i++) row[names[i] as string] = values[i];
            out.push(row as unknown as AuditRow);
          }
          return out;
        } catch (err) {
          throw storeError(err);
        }
      });
    },

    ...LINKED_AT_COMMIT,

    release() {
      if (typeof wal === 'number') closeWhenIdle(wal);
      wal = undefined;
    },
  };
}
