/**
 * @module The audit slot: how the store appends to the chained audit log, one implementation per
 * dialect in the same-named file of each dialect's folder (sqlite/audit-append.ts,
 * postgres/audit-append.ts), chosen once when the store opens (`Store.audit`). Callers (the audit
 * writer, `appendEvent`) use this interface and never learn the dialect: docs/architecture.md §5.
 *
 * Two ways to the same chain. SQLite (one writer per file) integrates at commit: it takes the
 * chain lock (the file's write lock), reads the head and inserts the rows linked onto it.
 * PostgreSQL, where replicas write at once, sequences then integrates: a group commit stages its
 * records durably with no lock shared across replicas, and the fleet's elected sequencer links
 * them into the chain within a bounded delay (postgres/audit-sequencer.ts). Either way sequence
 * numbers are assigned under the chain lock, gap-free: leaf index = seq - 1. This file also holds
 * what both slots share: the head query and the multi-row INSERT.
 */
import { CompiledQuery, type Kysely, type Transaction } from 'kysely';
import { type ChainHead, GENESIS_HEAD, type RangeResult } from '../audit-chain/index.js';
import type { AuditRow, Database, NewAuditRow } from './database.js';
import type { Fleet } from './fleet.js';

/** An audit record before it is linked: every column but seq, prev_hash and hash. */
export type UnchainedRow = Omit<NewAuditRow, 'seq' | 'prev_hash' | 'hash'>;

/**
 * A record that belongs to no call (an administrative event, an alert): every call column null,
 * decision `none`, and what the caller gives.
 */
export function rowWithoutCall(
  row: Pick<UnchainedRow, 'at' | 'kind' | 'details'> &
    Partial<Pick<UnchainedRow, 'code' | 'rule' | 'message'>>,
): UnchainedRow {
  return {
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
    code: row.code ?? null,
    rule: row.rule ?? null,
    message: row.message ?? null,
    approval_id: null,
    approver: null,
    egress_host: null,
    bytes_out: null,
    duration_ms: null,
    outcome: null,
    model: null,
    at: row.at,
    kind: row.kind,
    details: row.details,
  };
}

/**
 * A call's raw arguments, kept beside its record in the classified store (`call_arguments`):
 * never chained, read only by admins and auditors (each read audited), removed by the retention
 * sweep or an erasure.
 */
export interface RawArgumentsRow {
  readonly call_id: string;
  readonly at: string;
  readonly agent_id: string | null;
  readonly user_id: string | null;
  readonly tool_id: string | null;
  readonly args: string;
}

/** A group commit's outcome: the rows as linked, and when they are durable. */
export interface AuditCommit {
  /**
   * The rows as linked into the chain, in seq order; empty when the slot staged them for its
   * sequencer instead (PostgreSQL), which links them within its bound (`settled()` waits).
   */
  readonly rows: NewAuditRow[];
  /**
   * Null when the rows were durable at commit; else settles once they are (the slot syncs what
   * the commit left unsynced). Nothing of the batch may be acknowledged before.
   */
  readonly durable: Promise<void> | null;
}

/** How the sequencer runs where a slot stages (PostgreSQL: postgres/audit-sequencer.ts). */
export interface SequencerOptions {
  /**
   * The longest a staged record may wait to be integrated while a sequencer runs (default
   * 200 ms): the sequencer looks at least four times within it, and reports an integration whose
   * oldest record waited longer (`onLate`).
   */
  readonly maxDelayMs?: number;
  readonly onError?: (err: unknown) => void;
  /**
   * Told of each integration that took records, once it committed: how many, and how long the
   * oldest of them waited from its staging to that commit, in ms.
   */
  readonly onIntegrated?: (count: number, oldestWaitMs: number) => void;
  /** Told when a record waited longer than maxDelayMs (a stalled database, a slow failover). */
  readonly onLate?: (waitedMs: number) => void;
  /**
   * Join the fleet's election to sequence (serve does). Otherwise the sequencer runs only while
   * this process leads for its other duties (detectors, probes): an embedding process that does
   * not campaign never takes the lead from the replicas that do.
   */
  readonly campaign?: boolean;
}

export interface AuditAppend {
  /**
   * One group commit in its own transaction, `rows` and `raw` together: either linked onto the
   * head under the chain lock (completed in place and returned: SQLite), or staged for the
   * sequencer (none returned: PostgreSQL). Durable once `durable` settles (null: at commit). With
   * `deferSync`, a slot may commit without syncing and sync afterwards off the event loop;
   * `syncFile` replaces the sync, for tests that watch it.
   */
  commit(
    rows: UnchainedRow[],
    raw: readonly RawArgumentsRow[],
    deferSync: boolean,
    syncFile?: (fd: number) => Promise<void>,
  ): Promise<AuditCommit>;
  /**
   * Locks the chain and appends `rows` inside the caller's transaction (the lock lasts until it
   * ends); never commits by itself. Returns the rows as written.
   */
  appendIn(trx: Transaction<Database>, rows: readonly UnchainedRow[]): Promise<NewAuditRow[]>;
  /** Up to `limit` whole records after seq `after`, in seq order (verification reads these). */
  page(after: number, limit: number): Promise<AuditRow[]>;
  /**
   * Integrates every record staged so far, by any replica, in transactions under the chain lock;
   * answers how many records went into the chain. 0 where commits integrate (SQLite).
   */
  integrate(): Promise<number>;
  /**
   * Resolves once every record committed before the call, by any replica, is in the chain: waits
   * for the sequencer up to twice its bound, then integrates them itself. At once on SQLite.
   */
  settled(): Promise<void>;
  /**
   * Runs the sequencer in this process whenever it leads `fleet` (joining the election only with
   * `campaign`); resolves the returned stop once it stopped. Nothing on SQLite.
   */
  sequence(fleet: Fleet, options?: SequencerOptions): () => Promise<void>;
  /** Lets go of any file the slot holds open; later commits reopen it. */
  release(): void;
}

/** A parallel check of the log's records 1..last in ranges of `range` (RangeChecker). */
export interface RangePlan {
  readonly last: number;
  readonly range: number;
  /** Workers at most (default: one per core, at most four). */
  readonly workers?: number;
}

/**
 * Where a dialect can check ranges of the log off this thread (SQLite's worker threads on the
 * file, sqlite/parallel-ranges.ts): each range's result handed to `take` in seq order.
 */
export interface RangeChecker {
  each(
    plan: RangePlan,
    take: (from: number, to: number, result: RangeResult) => Promise<void> | void,
  ): Promise<void>;
}

export async function readHead(db: Kysely<Database> | Transaction<Database>): Promise<ChainHead> {
  const row = await db
    .selectFrom('audit_log')
    .select(['seq', 'hash'])
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row ? { seq: Number(row.seq), hash: String(row.hash) } : GENESIS_HEAD;
}

/** Rows per INSERT: under SQLite's and PostgreSQL's bound-parameter limits. */
const CHUNK = 500;

export const AUDIT_COLUMNS = [
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

const KNOWN = new Set<string>(AUDIT_COLUMNS);
const insertTexts = new Map<string, string>();

/** Inserts linked rows through Kysely, in chunks; the caller holds the chain lock. */
export async function insertChained(
  trx: Transaction<Database>,
  chained: readonly NewAuditRow[],
  placeholders: 'numbered' | 'question',
): Promise<void> {
  // A row with columns beyond the known ones (a later migration) goes through Kysely, whole.
  const known = chained.every((row) => Object.keys(row).every((k) => KNOWN.has(k)));
  for (let i = 0; i < chained.length; i += CHUNK) {
    const chunk = chained.slice(i, i + CHUNK);
    if (known) await trx.executeQuery(insertQuery(chunk, placeholders));
    else await trx.insertInto('audit_log').values(chunk).execute();
  }
}

/**
 * The multi-row INSERT as one precompiled statement: Kysely's builder costs more than the hashing
 * for a batch of hundreds of rows, and the text repeats (one per batch size and dialect), so the
 * SQLite statement cache keeps it prepared. Values are bound parameters, never spliced.
 */
function insertQuery(
  rows: readonly NewAuditRow[],
  placeholders: 'numbered' | 'question',
): CompiledQuery {
  const numbered = placeholders === 'numbered';
  const key = `${placeholders}:${rows.length}`;
  let text = insertTexts.get(key);
  if (text === undefined) {
    const tuples: string[] = [];
    let n = 0;
    for (let r = 0; r < rows.length; r++) {
      tuples.push(`(${AUDIT_COLUMNS.map(() => (numbered ? `$${++n}` : '?')).join(',')})`);
    }
    text = `insert into audit_log (${AUDIT_COLUMNS.join(',')}) values ${tuples.join(',')}`;
    if (insertTexts.size < 64) insertTexts.set(key, text);
  }
  const parameters: unknown[] = [];
  for (const row of rows) for (const c of AUDIT_COLUMNS) parameters.push(row[c] ?? null);
  return CompiledQuery.raw(text, parameters);
}

/** Which slot a database opened by openStore uses, found from any of its transactions. */
const slots = new WeakMap<object, AuditAppend>();

/** Called once by openStore: `db` and every transaction on it append through `slot`. */
export function bindAuditSlot(db: Kysely<Database>, slot: AuditAppend): void {
  // Kysely hands one adapter object to the database and to each of its transactions.
  slots.set(db.getExecutor().adapter, slot);
}

/** The slot of the store `db` (or a transaction on it) belongs to. */
export function auditSlotOf(db: Kysely<Database> | Transaction<Database>): AuditAppend {
  const slot = slots.get(db.getExecutor().adapter);
  if (!slot) throw new TypeError('this database was not opened by openStore: it has no audit slot');
  return slot;
}
