/**
 * @module Appending to the chained audit log inside a caller's transaction. The one way rows reach
 * `audit_log`: the group-commit writer uses it for call records, and `appendEvent` for grants,
 * registrations, quarantine, approvals and configuration changes, in the same transaction as the
 * change itself, so a change and its audit record commit or roll back together.
 *
 * One total order across processes and replicas: the chain head is locked for the rest of the
 * transaction before it is read — `pg_advisory_xact_lock` on PostgreSQL (released at commit), and
 * on SQLite an UPDATE as the first step (it matches no row, yet takes the database's single write
 * lock; a read first would let two processes read the same head and one of them fail to upgrade).
 * Sequence numbers are assigned here, under the lock, gap-free: leaf index = seq - 1.
 */
import { CompiledQuery, type Kysely, PostgresAdapter, sql, type Transaction } from 'kysely';
import type { Database, NewAuditRow } from '../store/database.js';
import type { SqliteHandle } from '../store/sqlite/dialect.js';
import { GENESIS_PREV_HASH, recordHash } from './record-hash.js';

/** Any 64-bit number, the same for every replica: the lock that orders audit appends. */
const CHAIN_LOCK_KEY = 7_220_410_006n;
/** Rows per INSERT: under SQLite's and PostgreSQL's bound-parameter limits. */
const CHUNK = 500;

export type UnchainedRow = Omit<NewAuditRow, 'seq' | 'prev_hash' | 'hash'>;

export interface ChainHead {
  readonly seq: number;
  readonly hash: string;
}

function isPostgres(db: Kysely<Database> | Transaction<Database>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

export async function lockChain(trx: Transaction<Database>): Promise<void> {
  if (isPostgres(trx)) {
    await sql`select pg_advisory_xact_lock(${sql.lit(CHAIN_LOCK_KEY.toString())}::bigint)`.execute(
      trx,
    );
  } else {
    await sql`update meta set value = value where key = 'audit_chain'`.execute(trx);
  }
}

export async function readHead(db: Kysely<Database> | Transaction<Database>): Promise<ChainHead> {
  const row = await db
    .selectFrom('audit_log')
    .select(['seq', 'hash'])
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row
    ? { seq: Number(row.seq), hash: String(row.hash) }
    : { seq: 0, hash: GENESIS_PREV_HASH };
}

/** Gives each row its seq, prev_hash and hash; pure, so it can run outside any lock. */
export function chainRows(head: ChainHead, rows: readonly UnchainedRow[]): NewAuditRow[] {
  return linkInPlace(
    head,
    rows.map((row) => ({ ...row })),
  );
}

/** chainRows on rows the caller owns: each is completed where it is, and returned. */
function linkInPlace(head: ChainHead, rows: UnchainedRow[]): NewAuditRow[] {
  let prev = head.hash;
  rows.forEach((row, i) => {
    const linked = row as Record<string, unknown>;
    linked.seq = head.seq + 1 + i;
    linked.prev_hash = prev;
    prev = recordHash(linked);
    linked.hash = prev;
  });
  return rows as unknown as NewAuditRow[];
}

/**
 * Locks the head, chains `rows` onto it and inserts them; returns the rows as written. Must run
 * inside a transaction (the lock lasts until it ends); never commits by itself.
 */
export async function appendChained(
  trx: Transaction<Database>,
  rows: readonly UnchainedRow[],
): Promise<NewAuditRow[]> {
  if (rows.length === 0) return [];
  await lockChain(trx);
  const chained = chainRows(await readHead(trx), rows);
  const postgres = isPostgres(trx);
  // A row with columns beyond the known ones (a later migration) goes through Kysely, whole.
  const known = chained.every((row) => Object.keys(row).every((k) => KNOWN.has(k)));
  for (let i = 0; i < chained.length; i += CHUNK) {
    const chunk = chained.slice(i, i + CHUNK);
    if (known) await trx.executeQuery(insertQuery(chunk, postgres));
    else await trx.insertInto('audit_log').values(chunk).execute();
  }
  return chained;
}

const COLUMNS = [
  'seq',
  'prev_hash',
  'hash',
  'at',
  'kind',
  'call_id',
  'trace_id',
  'session_id',
  'run_id',
  'agent_id',
  'user_id',
  'tool_id',
  'tool_version',
  'args_hash',
  'args_redacted',
  'decision',
  'code',
  'rule',
  'message',
  'approval_id',
  'approver',
  'egress_host',
  'bytes_out',
  'duration_ms',
  'outcome',
  'model',
  'details',
] as const satisfies readonly (keyof NewAuditRow)[];

const KNOWN = new Set<string>(COLUMNS);
const insertTexts = new Map<string, string>();

/**
 * The multi-row INSERT as one precompiled statement: Kysely's builder costs more than the hashing
 * for a batch of hundreds of rows, and the text repeats (one per batch size and dialect), so the
 * SQLite statement cache keeps it prepared. Values are bound parameters, never spliced.
 */
function insertQuery(rows: readonly NewAuditRow[], postgres: boolean): CompiledQuery {
  const key = `${postgres ? 'pg' : 'sqlite'}:${rows.length}`;
  let text = insertTexts.get(key);
  if (text === undefined) {
    const tuples: string[] = [];
    let n = 0;
    for (let r = 0; r < rows.length; r++) {
      tuples.push(`(${COLUMNS.map(() => (postgres ? `$${++n}` : '?')).join(',')})`);
    }
    text = `insert into audit_log (${COLUMNS.join(',')}) values ${tuples.join(',')}`;
    if (insertTexts.size < 64) insertTexts.set(key, text);
  }
  const parameters: unknown[] = [];
  for (const row of rows) for (const c of COLUMNS) parameters.push(row[c] ?? null);
  return CompiledQuery.raw(text, parameters);
}

/** A call's raw arguments, kept beside its record (readable by admins only). */
export interface RawArgumentsRow {
  readonly call_id: string;
  readonly at: string;
  readonly args: string;
}

type SqliteAppend = (
  rows: UnchainedRow[],
  raw: readonly RawArgumentsRow[],
  durable: boolean,
) => NewAuditRow[];
const sqliteAppends = new WeakMap<SqliteHandle, SqliteAppend>();

/**
 * appendChained for the embedded database, as prepared statements in one `BEGIN IMMEDIATE`
 * transaction: the write lock is taken before the head is read (as lockChain does for other
 * writers), and the query builder's per-statement cost stays off the hot path. The rows are
 * completed in place (seq, prev_hash, hash) and returned. The caller must hold the Kysely
 * connection (`db.connection().execute`) so that no other query runs in between.
 *
 * `durable: false` commits without syncing the WAL (synchronous=NORMAL for this transaction
 * only): the caller must then sync the WAL file itself before it acknowledges any of the rows,
 * which is what synchronous=FULL would have done inside the commit, on this thread.
 */
export function appendChainedSqlite(
  database: SqliteHandle,
  rows: UnchainedRow[],
  raw: readonly RawArgumentsRow[],
  durable = true,
): NewAuditRow[] {
  let append = sqliteAppends.get(database);
  if (!append) {
    const head = database.prepare('select seq, hash from audit_log order by seq desc limit 1');
    const insert = database.prepare(
      `insert into audit_log (${COLUMNS.join(',')}) values (${COLUMNS.map(() => '?').join(',')})`,
    );
    const insertRaw = database.prepare(
      'insert into call_arguments (call_id, at, args) values (?, ?, ?) on conflict (call_id) do nothing',
    );
    const normal = database.prepare('pragma synchronous = NORMAL');
    const full = database.prepare('pragma synchronous = FULL');
    const run = database.transaction(
      (batch: UnchainedRow[], rawRows: readonly RawArgumentsRow[]) => {
        const last = head.get() as { seq: number | bigint; hash: string } | undefined;
        const chained = linkInPlace(
          last
            ? { seq: Number(last.seq), hash: String(last.hash) }
            : { seq: 0, hash: GENESIS_PREV_HASH },
          batch,
        );
        const values = new Array<unknown>(COLUMNS.length);
        for (const row of chained) {
          for (let i = 0; i < COLUMNS.length; i++)
            values[i] = row[COLUMNS[i] as keyof NewAuditRow] ?? null;
          insert.run(values);
        }
        for (const r of rawRows) insertRaw.run(r.call_id, r.at, r.args);
        return chained;
      },
    );
    append = (batch, rawRows, sync) => {
      if (sync) return run.immediate(batch, rawRows);
      normal.run();
      try {
        return run.immediate(batch, rawRows);
      } finally {
        full.run();
      }
    };
    sqliteAppends.set(database, append);
  }
  if (rows.length === 0 && raw.length === 0) return [];
  return append(rows, raw, durable);
}

/** The audit record of an administrative event (kind `event.<action>`). */
export function eventAuditRow(event: {
  readonly seq: number;
  readonly at: string;
  readonly actor: string;
  readonly via: string;
  readonly action: string;
  readonly subject: string;
  readonly details: string;
}): UnchainedRow {
  return {
    at: event.at,
    kind: `event.${event.action}`,
    call_id: null,
    trace_id: null,
    session_id: null,
    run_id: null,
    agent_id: null,
    user_id: null,
    tool_id: null,
    tool_version: null,
    args_hash: null,
    args_redacted: null,
    decision: 'none',
    code: null,
    rule: null,
    message: null,
    approval_id: null,
    approver: null,
    egress_host: null,
    bytes_out: null,
    duration_ms: null,
    outcome: null,
    model: null,
    details: JSON.stringify({
      event_seq: event.seq,
      actor: event.actor,
      via: event.via,
      subject: event.subject,
      details: JSON.parse(event.details) as unknown,
    }),
  };
}
