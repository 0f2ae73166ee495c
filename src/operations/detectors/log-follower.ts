/**
 * @module The detectors' record stream when several replicas serve one database (Store.fleet
 * `shared`; docs/architecture.md §5, "Replicas that agree"): the fleet's elected leader alone reads
 * the committed audit log in `seq` order, every replica's records alike, and hands each page to the
 * engine; the position it has processed is kept in `meta` (`detectors_cursor`, moved forward
 * only), so a replica that takes over resumes where the last leader left off. A record is handed
 * over once in a fleet that keeps its leader; a leader that dies between processing a page and
 * saving the position has that page processed again by the next one (at least once, never lost).
 * On PostgreSQL a record's `seq` is assigned when the sequencer integrates it (or an event is
 * appended), always under the chain lock held through that commit, so no smaller `seq` can commit
 * after a larger one is seen (docs/architecture.md §5, "The audit log across replicas").
 */
import { sql } from 'kysely';
import type { AuditKind, AuditRecord } from '../../records/audit/index.js';
import type { AuditRow, Fleet, Store } from '../../records/store/index.js';

/** How often the leader reads what was committed since its last page. */
export const FOLLOW_MS = 100;
const PAGE = 1000;
/** A new leader far behind starts this many records before the head (older ones are skipped). */
const MAX_BACKLOG = 10_000;
const CURSOR_KEY = 'detectors_cursor';

const decisions = new Set(['allow', 'deny', 'pending_approval', 'none']);

function parsed(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The record a committed row holds, as the writer was given it (no arguments: only hashes). */
export function recordOfRow(r: AuditRow): AuditRecord {
  const details = parsed(r.details);
  const opt = <K extends string, V>(key: K, value: V | null) =>
    (value === null ? {} : { [key]: value }) as Partial<Record<K, V>>;
  return {
    kind: r.kind as AuditKind,
    at: new Date(r.at),
    callId: r.call_id ?? '',
    traceId: r.trace_id,
    sessionId: r.session_id,
    runId: r.run_id,
    agentId: r.agent_id,
    userId: r.user_id,
    toolId: r.tool_id,
    toolVersion: r.tool_version,
    argsHash: r.args_hash,
    argsRedacted: parsed(r.args_redacted),
    decision: (decisions.has(r.decision) ? r.decision : 'none') as AuditRecord['decision'],
    ...opt('code', r.code),
    ...opt('rule', r.rule),
    ...opt('message', r.message),
    ...opt('approvalId', r.approval_id),
    ...opt('approver', r.approver),
    ...opt('egressHost', r.egress_host),
    ...opt('bytesOut', r.bytes_out),
    ...opt('durationMs', r.duration_ms),
    ...opt('outcome', r.outcome),
    ...opt('model', r.model),
    ...(details && typeof details === 'object'
      ? { details: details as Readonly<Record<string, unknown>> }
      : {}),
  };
}

export interface LogFollowerDependencies {
  readonly store: Pick<Store, 'db' | 'audit'> & {
    readonly fleet: Pick<Fleet, 'onLeader' | 'decided'>;
  };
  /** Processes one page in order; resolves once done (the position is saved after it). */
  readonly process: (batch: readonly AuditRecord[]) => Promise<void>;
  /** Called when this replica starts leading, before the first page (fresh state, baselines). */
  readonly onLead: () => Promise<void>;
  readonly onError: (err: unknown) => void;
  /** Records skipped by a new leader far behind. */
  readonly onSkipped?: (n: number) => void;
}

export class CommittedLogFollower {
  readonly #d: LogFollowerDependencies;
  #cursor: number | null = null;
  #leading = false;
  #timer: NodeJS.Timeout | null = null;
  #pulling: Promise<void> | null = null;
  #stop: (() => void) | null = null;

  constructor(deps: LogFollowerDependencies) {
    this.#d = deps;
  }

  get leading(): boolean {
    return this.#leading;
  }

  start(): void {
    this.#stop ??= this.#d.store.fleet.onLeader((leading) => {
      this.#leading = leading;
      this.#cursor = null;
      if (leading) this.#schedule();
    });
  }

  stop(): void {
    this.#stop?.();
    this.#stop = null;
    this.#leading = false;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }

  /** Resolves once every record committed before the call is processed (on the leader). */
  async caughtUp(): Promise<void> {
    await this.#d.store.fleet.decided();
    if (!this.#leading) return;
    // Records staged on any replica but not yet in the chain are committed too: wait for them.
    await this.#d.store.audit.settled();
    const head = await this.#head();
    while (this.#leading && (this.#cursor === null || this.#cursor < head)) {
      const before = this.#cursor;
      // A scheduled page already under way may have been read before these records were there
      // (integrated a moment ago): it does not count as this call's look.
      const joined = this.#pulling !== null;
      await this.#pull();
      if (joined) continue;
      // A failed page (reported) leaves the position: no busy loop on a broken database.
      if (this.#cursor === before && before !== null) return;
    }
  }

  #schedule(): void {
    if (this.#timer || !this.#leading) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.#pull().finally(() => this.#schedule());
    }, FOLLOW_MS);
    this.#timer.unref();
  }

  #pull(): Promise<void> {
    this.#pulling ??= this.#page()
      .catch(this.#d.onError)
      .finally(() => {
        this.#pulling = null;
      });
    return this.#pulling;
  }

  async #head(): Promise<number> {
    const row = await this.#d.store.db
      .selectFrom('audit_log')
      .select((eb) => eb.fn.max('seq').as('head'))
      .executeTakeFirst();
    return Number(row?.head ?? 0);
  }

  async #page(): Promise<void> {
    if (!this.#leading) return;
    const db = this.#d.store.db;
    if (this.#cursor === null) {
      await this.#d.onLead();
      const saved = await db
        .selectFrom('meta')
        .select('value')
        .where('key', '=', CURSOR_KEY)
        .executeTakeFirst();
      const head = await this.#head();
      // The first leader ever starts at the head: records before the fleet had detectors are
      // the baselines' (Detector.load), not alerts.
      const from = saved ? Number(saved.value) : head;
      const start = Math.max(from, head - MAX_BACKLOG);
      if (start > from) this.#d.onSkipped?.(start - from);
      this.#cursor = start;
    }
    const rows = await db
      .selectFrom('audit_log')
      .selectAll()
      .where('seq', '>', this.#cursor)
      .orderBy('seq', 'asc')
      .limit(PAGE)
      .execute();
    if (rows.length === 0 || !this.#leading) return;
    await this.#d.process(rows.map(recordOfRow));
    const last = rows[rows.length - 1]?.seq ?? this.#cursor;
    this.#cursor = last;
    const value = String(last);
    await db
      .insertInto('meta')
      .values({ key: CURSOR_KEY, value })
      .onConflict((oc) =>
        oc
          .column('key')
          .doUpdateSet({ value })
          // Only forward: a leader that lost its place never moves another's back.
          .where(sql<boolean>`cast(meta.value as bigint) < ${last}`),
      )
      .execute();
  }
}
