/**
 * @module Appends call records (and alerts) to the chained audit log (C12). The pre-execution
 * record is committed durably before the tool runs; nothing here ever updates a record. Each group
 * commit goes through the store's audit slot (`Store.audit`), which locks the chain head, links
 * the records onto it and inserts them in one transaction: one sync for the batch, acknowledged
 * only once durable. Every batch lets the slot sync after its commit, off the event loop (on
 * SQLite the WAL file on the thread pool), so no caller's fsync ever stops the others' requests,
 * and the records that arrive during a sync make the next batch: batches grow with the load.
 * Which database it is, and how it locks and syncs, is the slot's business: docs/architecture.md §5.
 */
import type { NewAuditRow, RawArgumentsRow, Store, UnchainedRow } from '../store/index.js';
import { AuditPseudonyms } from './audit-pseudonyms.js';

export type AuditKind =
  | 'call.pre'
  | 'call.post'
  | 'call.denied'
  | 'call.pending_approval'
  /** An idempotency key answered with a finished call's result; nothing ran. */
  | 'call.replayed'
  | 'alert';

export interface AuditRecord {
  readonly kind: AuditKind;
  readonly at: Date;
  readonly callId: string;
  /**
   * The call's W3C trace id (32 hex), when it was traced or its caller sent a `traceparent`; the
   * `trace_id` column (records written before tracing hold the call id there).
   */
  readonly traceId?: string | null;
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
    trace_id: r.traceId ?? null,
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

/**
 * A batch of up to this many records waits for a sync already running rather than start one of
 * its own beside it: under load the records that arrive meanwhile join it, so batches grow.
 */
const JOIN_SYNC_MAX = 4;
/** Syncs of committed batches that may be outstanding at once. */
const MAX_SYNCS_IN_FLIGHT = 2;

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
  /**
   * Called after each commit with the rows as linked (seq order; none when the slot staged them
   * for its sequencer) and how many records the batch held, before they are acknowledged; must
   * not throw.
   */
  readonly onCommit?: (rows: readonly NewAuditRow[], records: number) => void;
  /**
   * Told of every record a failed commit or sync gave up (after the store's own retries), with
   * the error; must not throw. A result record of a call that ran has no caller left to tell.
   */
  readonly onFailed?: (records: readonly AuditRecord[], err: unknown) => void;
  /** Replaces the slot's deferred sync (fdatasync of SQLite's WAL file); for tests only. */
  readonly syncFile?: (fd: number) => Promise<void>;
  /**
   * Keyed hashes for what callers supplied (audit-pseudonyms.ts); default a per-process key, so
   * hashes match within this process only.
   */
  readonly pseudonyms?: AuditPseudonyms;
}

export class AuditWriter {
  readonly #store: Pick<Store, 'audit'>;
  readonly #onCommit: ((rows: readonly NewAuditRow[], records: number) => void) | undefined;
  readonly #syncFile: ((fd: number) => Promise<void>) | undefined;
  readonly #onFailed: ((records: readonly AuditRecord[], err: unknown) => void) | undefined;
  readonly #pseudonyms: AuditPseudonyms;
  #queue: Pending[] = [];
  #flushing: Promise<void> | null = null;
  #listeners: ((batch: readonly AuditRecord[], commitMs: number) => void)[] = [];

  constructor(store: Pick<Store, 'audit'>, options: AuditWriterOptions = {}) {
    this.#store = store;
    this.#onCommit = options.onCommit;
    this.#syncFile = options.syncFile;
    this.#onFailed = options.onFailed;
    this.#pseudonyms = options.pseudonyms ?? AuditPseudonyms.ephemeral();
  }

  /** The keyed hashes records are masked with (a detector matches a probe's hashed name by them). */
  get pseudonyms(): AuditPseudonyms {
    return this.#pseudonyms;
  }

  #timer: NodeJS.Timeout | null = null;
  /** Batches staged for the slot's sequencer, and how many of them a flush saw integrated. */
  #staged = 0;
  #settled = 0;
  /** Deferred syncs running off the event loop, each acknowledging its own batch when done. */
  readonly #syncing = new Set<Promise<void>>();

  /** Called with every batch once committed (observers: detectors, metrics); never throws back. */
  onCommitted(listener: (batch: readonly AuditRecord[], commitMs: number) => void): void {
    this.#listeners.push(listener);
  }

  /**
   * Queues a record. What the log keeps of caller-supplied values is masked here, for every
   * record kind (audit-pseudonyms.ts); `rawArgs`, when given, go to the classified store beside
   * the record, never into the chain. `deferred` records (results of calls that already ran) ride
   * along with the next durable commit, or go out within DEFER_MS when nothing else is written:
   * they never cost a call an fsync of its own. `declared`: the property names the tool's input
   * schema declares, the only keys kept readable (none given: every key is hashed). `hosts`: the
   * egress hosts the tool's definition names, the only egress hosts kept readable.
   */
  append(
    record: AuditRecord,
    rawArgs?: unknown,
    options: {
      deferred?: boolean;
      declared?: ReadonlySet<string> | null;
      hosts?: readonly string[];
    } = {},
  ): Promise<void> {
    let masked: AuditRecord;
    try {
      masked = this.#pseudonyms.maskRecord(
        record,
        rawArgs,
        options.declared ?? null,
        options.hosts ?? [],
      );
    } catch (err) {
      // No key, no record: a record that cannot be masked is not written raw (fail closed).
      return Promise.reject(err);
    }
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ record: masked, rawArgs, resolve, reject });
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

  /**
   * Resolves when everything queued so far is committed, durable and in the chain (used on
   * shutdown, and by whoever reads the log right after writing). Where the slot stages records
   * for a sequencer (PostgreSQL), this waits for their integration: a bounded wait, ended by
   * integrating them here (docs/architecture.md §5, "The audit log across replicas").
   */
  async flush(): Promise<void> {
    if (this.#queue.length > 0) this.#start();
    while (this.#flushing || this.#syncing.size > 0) {
      if (this.#flushing) await this.#flushing;
      await Promise.all([...this.#syncing]);
    }
    const staged = this.#staged;
    if (this.#settled < staged) {
      await this.#store.audit.settled();
      this.#settled = Math.max(this.#settled, staged);
    }
  }

  /** Flushes, then lets the slot close any file it holds; appends after this still work. */
  async close(): Promise<void> {
    await this.flush();
    this.#store.audit.release();
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      if (this.#queue.length <= JOIN_SYNC_MAX && this.#syncing.size > 0) {
        // A few records while a sync runs: rather than start a second sync now, they wait for it
        // and go with whatever arrives meanwhile.
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
          let args: string;
          try {
            args = JSON.stringify(p.rawArgs);
          } catch {
            continue; // not representable (the record says so: no argument hash)
          }
          if (args === undefined) continue;
          raw.push({
            call_id: p.record.callId,
            at: p.record.at.toISOString(),
            agent_id: p.record.agentId,
            user_id: p.record.userId,
            tool_id: p.record.toolId,
            args,
          });
        }
        // Every batch, one caller's included, commits unsynced and syncs afterwards off the event
        // loop, which runs other calls' requests meanwhile (a sync inside the commit would stop
        // them all for the disk's latency); nothing is acknowledged before it is durable.
        const { rows: written, durable } = await this.#store.audit.commit(
          rows,
          raw,
          true,
          this.#syncFile,
        );
        // The log learns the rows (their hashes, for the checkpointer) as soon as they are in the
        // database; callers are acknowledged only once the rows are durable.
        if (written.length < rows.length) this.#staged += 1;
        this.#onCommit?.(written, batch.length);
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
        if (durable === null) {
          settle();
        } else {
          // The next batch may commit while this one's sync runs (its own sync, started after its
          // commit, covers both); at most MAX_SYNCS_IN_FLIGHT are outstanding.
          const syncing: Promise<void> = durable.then(settle, (err: unknown) =>
            this.#fail(batch, err),
          );
          this.#syncing.add(syncing);
          void syncing.finally(() => this.#syncing.delete(syncing));
          // Callers still running in this turn queue their records before the next batch is taken.
          if (this.#syncing.size >= MAX_SYNCS_IN_FLIGHT) await Promise.race(this.#syncing);
          else await new Promise<void>((resolve) => setImmediate(resolve));
        }
      } catch (err) {
        this.#fail(batch, err);
      }
    }
  }

  #fail(batch: readonly Pending[], err: unknown): void {
    for (const p of batch) p.reject(err);
    try {
      this.#onFailed?.(
        batch.map((p) => p.record),
        err,
      );
    } catch {
      // An observer's failure changes nothing for the callers, already told.
    }
  }
}
