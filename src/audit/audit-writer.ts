/**
 * @module Appends call records (and alerts) to the chained audit log (DESIGN.md C12). The
 * pre-execution record is committed (synchronous=FULL on SQLite) before the tool runs; nothing
 * here ever updates a record. Each group commit locks the chain head, links its records onto it
 * and inserts them in one transaction: one fsync for the batch, acknowledged only after commit.
 */
import { closeSync, fdatasync as fdatasyncCallback, fstatSync, openSync } from 'node:fs';
import { promisify } from 'node:util';
import type { Kysely } from 'kysely';
import type { Database, NewAuditRow } from '../store/database.js';
import type { SqliteHandle } from '../store/sqlite/dialect.js';
import {
  appendChained,
  appendChainedSqlite,
  type RawArgumentsRow,
  type UnchainedRow,
} from './audit-chain.js';

export type AuditKind =
  | 'call.pre'
  | 'call.post'
  | 'call.denied'
  | 'call.pending_approval'
  /** An idempotency key answered with a finished call's result; nothing ran (issue 11). */
  | 'call.replayed'
  | 'alert';

export interface AuditRecord {
  readonly kind: AuditKind;
  readonly at: Date;
  readonly callId: string;
  readonly sessionId: string | null;
  readonly runId: string | null;
  readonly agentId: string | null;
  readonly userId: string | null;
  readonly toolId: string | null;
  readonly toolVersion: string | null;
  readonly argsHash: string | null;
  readonly argsRedacted: unknown;
  readonly decision: 'allow' | 'deny' | 'pending_approval' | 'none';
  readonly code?: string;
  readonly rule?: string;
  readonly message?: string;
  readonly approvalId?: string;
  readonly approver?: string;
  readonly egressHost?: string;
  readonly bytesOut?: number;
  readonly durationMs?: number;
  readonly outcome?: string;
  readonly model?: string;
  readonly details?: Readonly<Record<string, unknown>>;
}

/** PostgreSQL text cannot hold NUL; whatever a caller sent, the record must still be written. */
function text(value: string | undefined): string | null {
  return value === undefined ? null : value.replaceAll('\u0000', '\uFFFD');
}

function toRow(r: AuditRecord): UnchainedRow {
  return {
    at: r.at.toISOString(),
    kind: r.kind,
    call_id: r.callId,
    trace_id: r.callId,
    session_id: r.sessionId,
    run_id: r.runId,
    agent_id: r.agentId,
    user_id: r.userId,
    tool_id: r.toolId,
    tool_version: r.toolVersion,
    args_hash: r.argsHash,
    args_redacted: r.argsRedacted === undefined ? null : JSON.stringify(r.argsRedacted),
    decision: r.decision,
    code: text(r.code),
    rule: text(r.rule),
    message: text(r.message),
    approval_id: text(r.approvalId),
    approver: text(r.approver),
    egress_host: text(r.egressHost),
    bytes_out: r.bytesOut ?? null,
    duration_ms: r.durationMs ?? null,
    outcome: text(r.outcome),
    model: text(r.model),
    details: JSON.stringify(r.details ?? {}),
  };
}

/** Batches of up to this many records sync inside their commit; larger ones on the thread pool. */
const SYNC_INLINE_MAX = 4;
/** WAL syncs of committed batches that may be outstanding at once. */
const MAX_SYNCS_IN_FLIGHT = 2;

const fdatasync = promisify(fdatasyncCallback);

/** Longest a deferred record waits for a commit to join. */
const DEFER_MS = 25;

interface Pending {
  readonly record: AuditRecord;
  readonly rawArgs: unknown;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

/**
 * Group commit: records queued while a commit is in flight are written together by the next one,
 * so one fsync acknowledges many callers. `append` settles only after the commit that holds the
 * record (durable); a failed commit rejects every record in it, and nothing is acknowledged early.
 */
export interface AuditWriterOptions {
  /** Called after each commit with the rows as written (seq order), before they are
   * acknowledged; must not throw. */
  readonly onCommit?: (rows: readonly NewAuditRow[]) => void;
  /** The SQLite handle behind `db`: group commits then run as prepared statements. */
  readonly sqlite?: SqliteHandle | null;
  /** Makes the WAL file durable (fdatasync on the thread pool); replaceable for tests only. */
  readonly syncFile?: (fd: number) => Promise<void>;
}

export class AuditWriter {
  readonly #db: Kysely<Database>;
  readonly #onCommit: ((rows: readonly NewAuditRow[]) => void) | undefined;
  readonly #sqlite: SqliteHandle | null;
  readonly #syncFile: (fd: number) => Promise<void>;
  #queue: Pending[] = [];
  #flushing: Promise<void> | null = null;
  #listeners: ((batch: readonly AuditRecord[], commitMs: number) => void)[] = [];

  constructor(db: Kysely<Database>, options: AuditWriterOptions = {}) {
    this.#db = db;
    this.#onCommit = options.onCommit;
    this.#sqlite = options.sqlite ?? null;
    this.#syncFile = options.syncFile ?? fdatasync;
  }

  #timer: NodeJS.Timeout | null = null;
  #wal: number | null | undefined;
  /** WAL syncs running on the thread pool, each acknowledging its own batch when it returns. */
  readonly #syncing = new Set<Promise<void>>();

  /** A descriptor of the database's WAL file, for syncing it; null when there is none to sync. */
  #walFd(): number | null {
    if (typeof this.#wal === 'number') {
      // A WAL file removed and made anew (the journal mode switched back and forth by another
      // process) would leave this descriptor syncing a file nobody writes: open the new one.
      try {
        if (fstatSync(this.#wal).nlink > 0) return this.#wal;
        closeSync(this.#wal);
      } catch {}
      this.#wal = undefined;
    }
    if (this.#wal !== undefined) return this.#wal;
    const sqlite = this.#sqlite;
    this.#wal = null;
    if (sqlite && !sqlite.memory) {
      try {
        this.#wal = openSync(`${sqlite.name}-wal`, 'r');
      } catch {
        // No WAL file to hold: every batch syncs inside its commit.
      }
    }
    return this.#wal;
  }

  /** Called with every batch once committed (observers: detectors, metrics); never throws back. */
  onCommitted(listener: (batch: readonly AuditRecord[], commitMs: number) => void): void {
    this.#listeners.push(listener);
  }

  /**
   * Queues a record. `deferred` records (results of calls that already ran) ride along with the
   * next durable commit, or go out within DEFER_MS when nothing else is written: they never cost
   * a call an fsync of its own.
   */
  append(
    record: AuditRecord,
    rawArgs?: unknown,
    options: { deferred?: boolean } = {},
  ): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ record, rawArgs, resolve, reject });
      if (options.deferred && !this.#flushing) {
        this.#timer ??= setTimeout(() => this.#start(), DEFER_MS);
        this.#timer.unref();
        return;
      }
      this.#schedule();
    });
  }

  /** Starts a group commit now, unless one is running (it picks new records up by itself). */
  #schedule(): void {
    if (this.#flushing) return;
    this.#start();
  }

  #start(): void {
    if (this.#timer) {
      clearTimeout(this.#timer);
      this.#timer = null;
    }
    this.#flushing ??= this.#drain().finally(() => {
      this.#flushing = null;
      // A record queued after the drain's last look but before this ran would otherwise wait for
      // the next append (a caller resumed by the last commit can append in that gap).
      if (this.#queue.length > 0) this.#schedule();
    });
  }

  /** Resolves when everything queued so far is committed and durable (used on shutdown). */
  async flush(): Promise<void> {
    if (this.#queue.length > 0) this.#start();
    while (this.#flushing || this.#syncing.size > 0) {
      if (this.#flushing) await this.#flushing;
      await Promise.all([...this.#syncing]);
    }
  }

  /** Flushes, then lets go of the WAL descriptor; appends after this still work (and reopen it). */
  async close(): Promise<void> {
    await this.flush();
    if (typeof this.#wal === 'number') closeSync(this.#wal);
    this.#wal = undefined;
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      if (this.#queue.length <= SYNC_INLINE_MAX && this.#syncing.size > 0) {
        // A few records while a sync runs: rather than sync them on this thread now, they wait
        // for it and go with whatever arrives meanwhile.
        await Promise.race(this.#syncing);
        continue;
      }
      const batch = this.#queue;
      this.#queue = [];
      const started = performance.now();
      try {
        const rows = batch.map((p) => toRow(p.record));
        const raw: RawArgumentsRow[] = [];
        for (const p of batch) {
          if (p.rawArgs === undefined) continue;
          raw.push({
            call_id: p.record.callId,
            at: p.record.at.toISOString(),
            args: JSON.stringify(p.rawArgs),
          });
        }
        const sqlite = this.#sqlite;
        // A small batch (one caller) syncs inside its commit: the quickest way for that caller. A
        // larger one commits unsynced and syncs the WAL on the thread pool, so the event loop
        // runs other calls' checks meanwhile; either way nothing is acknowledged before the sync.
        const wal = sqlite && rows.length > SYNC_INLINE_MAX ? this.#walFd() : null;
        const written = sqlite
          ? await this.#db
              .connection()
              .execute(async () => appendChainedSqlite(sqlite, rows, raw, wal === null))
          : await this.#db.transaction().execute(async (trx) => {
              const chained = await appendChained(trx, rows);
              if (raw.length > 0) {
                await trx
                  .insertInto('call_arguments')
                  .values(raw)
                  .onConflict((oc) => oc.column('call_id').doNothing())
                  .execute();
              }
              return chained;
            });
        // The log learns the rows (their hashes, for the checkpointer) as soon as they are in the
        // database; callers are acknowledged only once the rows are durable.
        this.#onCommit?.(written);
        const settle = () => {
          for (const p of batch) p.resolve();
          const records = batch.map((p) => p.record);
          for (const l of this.#listeners) {
            try {
              l(records, performance.now() - started);
            } catch {
              // An observer's failure never reaches the callers whose records are committed.
            }
          }
        };
        if (wal === null) {
          settle();
        } else {
          // The next batch may commit while this one's sync runs (its own sync, started after its
          // commit, covers both); at most MAX_SYNCS_IN_FLIGHT are outstanding.
          const syncing: Promise<void> = this.#syncFile(wal).then(settle, (err: unknown) => {
            for (const p of batch) p.reject(err);
          });
          this.#syncing.add(syncing);
          void syncing.finally(() => this.#syncing.delete(syncing));
          // Callers still running in this turn queue their records before the next batch is taken.
          if (this.#syncing.size >= MAX_SYNCS_IN_FLIGHT) await Promise.race(this.#syncing);
          else await new Promise<void>((resolve) => setImmediate(resolve));
        }
      } catch (err) {
        for (const p of batch) p.reject(err);
      }
    }
  }
}
