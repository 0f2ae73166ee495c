/**
 * @module Reads the audit log for people: records found by agent, user, tool, kind, decision, rule
 * and time, newest first, cursor-paged by seq; and one record whole (with whether its hash
 * recomputes from its own fields). A call's raw arguments are not here: they are in the classified
 * store (classified-arguments.ts), whose every read is audited.
 * Nothing here writes: the log is append-only and this is its read side.
 */
import { type SqlBool, sql } from 'kysely';
import {
  decodeCursor,
  encodeCursor,
  type Page,
  type PageRequest,
  pageLimit,
  problem,
  ToolgateError,
} from '../../core/index.js';
import { recordHash } from '../audit-chain/index.js';
import type { AuditRow, Store } from '../store/index.js';

export interface AuditSearchFilter {
  readonly agent?: string | undefined;
  readonly user?: string | undefined;
  readonly tool?: string | undefined;
  /** `call.pre`, `call.post`, `call.denied`, `call.pending_approval`, `call.replayed`, `alert`. */
  readonly kind?: string | undefined;
  readonly decision?: string | undefined;
  readonly rule?: string | undefined;
  /** ISO-8601 instants: records at or after `from`, strictly before `to`. */
  readonly from?: string | undefined;
  readonly to?: string | undefined;
}

/** One audit record as stored, its JSON columns parsed; raw arguments are never part of it. */
export interface AuditEntry {
  readonly seq: number;
  readonly at: string;
  readonly kind: string;
  readonly call_id: string | null;
  readonly trace_id: string | null;
  readonly session_id: string | null;
  readonly run_id: string | null;
  readonly agent_id: string | null;
  readonly user_id: string | null;
  readonly tool_id: string | null;
  readonly tool_version: string | null;
  readonly args_hash: string | null;
  /**
   * The arguments as the log keeps them: secret-looking values masked, every other string (and
   * large number, and odd key) a keyed hash (audit-pseudonyms.ts).
   */
  readonly args_redacted: unknown;
  readonly decision: string;
  readonly code: string | null;
  readonly rule: string | null;
  readonly message: string | null;
  readonly approval_id: string | null;
  readonly approver: string | null;
  readonly egress_host: string | null;
  readonly bytes_out: number | null;
  readonly duration_ms: number | null;
  readonly outcome: string | null;
  /**
   * Who did it: for an administrative event (`event.*`) the authenticated actor the event
   * records (`operator:<id>`, `admin-token`, `system:…`) and the front it came through; for a
   * call's records the agent (`agent:<id>`), through the gate; null when the record names none.
   */
  readonly actor: string | null;
  readonly via: string | null;
  readonly details: unknown;
  readonly prev_hash: string;
  readonly hash: string;
}

export interface AuditRecordDetail extends AuditEntry {
  /** The leaf hash recomputed from the record's own fields equals the stored one. */
  readonly hashRecomputes: boolean;
}

const LIST = 'audit-records';
const FILTER_COLUMNS = {
  agent: 'agent_id',
  user: 'user_id',
  tool: 'tool_id',
  kind: 'kind',
  decision: 'decision',
  rule: 'rule',
} as const;
const ISO = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/** An instant as the log stores it (UTC ISO-8601 with milliseconds), or INPUT_INVALID. */
function instant(value: string, pointer: string): string {
  const ms = ISO.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) {
    throw new ToolgateError('INPUT_INVALID', `${pointer.slice(1)} must be an ISO-8601 date-time`, {
      problems: [problem(pointer, 'must be an ISO-8601 date or date-time', 'format')],
    });
  }
  return new Date(ms).toISOString();
}

function parsed(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The actor and front a record names (see AuditEntry.actor). */
function actorOf(row: AuditRow, details: unknown): { actor: string | null; via: string | null } {
  if (row.kind.startsWith('event.') && typeof details === 'object' && details !== null) {
    const d = details as { actor?: unknown; via?: unknown };
    return {
      actor: typeof d.actor === 'string' ? d.actor : null,
      via: typeof d.via === 'string' ? d.via : null,
    };
  }
  return row.agent_id !== null
    ? { actor: `agent:${row.agent_id}`, via: 'gate' }
    : { actor: null, via: null };
}

function toEntry(row: AuditRow): AuditEntry {
  const num = (v: number | string | null): number | null => (v === null ? null : Number(v));
  const details = parsed(row.details);
  return {
    seq: Number(row.seq),
    at: row.at,
    kind: row.kind,
    call_id: row.call_id,
    trace_id: row.trace_id,
    session_id: row.session_id,
    run_id: row.run_id,
    agent_id: row.agent_id,
    user_id: row.user_id,
    tool_id: row.tool_id,
    tool_version: row.tool_version,
    args_hash: row.args_hash,
    args_redacted: parsed(row.args_redacted),
    decision: row.decision,
    code: row.code,
    rule: row.rule,
    message: row.message,
    approval_id: row.approval_id,
    approver: row.approver,
    egress_host: row.egress_host,
    bytes_out: num(row.bytes_out),
    duration_ms: num(row.duration_ms),
    outcome: row.outcome,
    ...actorOf(row, details),
    details,
    prev_hash: row.prev_hash,
    hash: row.hash,
  };
}

export class AuditSearch {
  readonly #store: Pick<Store, 'db' | 'audit'>;

  constructor(store: Pick<Store, 'db' | 'audit'>) {
    this.#store = store;
  }

  /**
   * Records matching every given filter, newest first. Agent and tool are equality on indexed
   * `(column, seq)` pairs, alerts have their own index and the time range uses the indexed `at`,
   * so a page reads about what it shows; user, decision and rule narrow those further (alone,
   * they walk back by seq until a page is full).
   */
  async search(filter: AuditSearchFilter, page: PageRequest = {}): Promise<Page<AuditEntry>> {
    const limit = pageLimit(page.limit);
    // A first page shows every record committed before it was asked, on whichever replica: where
    // records are staged for a sequencer, wait (bounded) for their integration. Later pages go
    // back from a seq already shown and need no wait (docs/architecture.md §5, across replicas).
    if (page.cursor === undefined) await this.#store.audit.settled();
    let query = this.#store.db.selectFrom('audit_log').selectAll();
    for (const [key, column] of Object.entries(FILTER_COLUMNS) as [
      keyof typeof FILTER_COLUMNS,
      (typeof FILTER_COLUMNS)[keyof typeof FILTER_COLUMNS],
    ][]) {
      const value = filter[key];
      if (value === undefined || value === '') continue;
      // Alerts have a partial index on `kind = 'alert'`; a planner uses it for that literal only.
      if (key === 'kind' && value === 'alert') query = query.where(sql<SqlBool>`kind = 'alert'`);
      else query = query.where(column, '=', value);
    }
    if (filter.from) query = query.where('at', '>=', instant(filter.from, '/from'));
    if (filter.to) query = query.where('at', '<', instant(filter.to, '/to'));
    if (page.cursor !== undefined) {
      const [before] = decodeCursor(LIST, page.cursor);
      if (typeof before !== 'number') {
        throw new ToolgateError('INPUT_INVALID', 'the cursor is not one this list returned', {
          problems: [problem('/query/cursor', 'not a cursor of this list', 'page.cursor')],
        });
      }
      query = query.where('seq', '<', before);
    }
    const rows = await query
      .orderBy('seq', 'desc')
      .limit(limit + 1)
      .execute();
    const items = rows.slice(0, limit).map(toEntry);
    const last = items.at(-1);
    return {
      items,
      next_cursor: rows.length > limit && last ? encodeCursor(LIST, [last.seq]) : null,
    };
  }

  /** One record, read as verification reads it, and whether its hash recomputes. */
  async record(seq: number): Promise<AuditRecordDetail> {
    if (!Number.isSafeInteger(seq) || seq < 1) {
      throw new ToolgateError('AUDIT_RECORD_NOT_FOUND', `no audit record ${seq}`, {});
    }
    const [row] = await this.#store.audit.page(seq - 1, 1);
    if (!row || Number(row.seq) !== seq) {
      throw new ToolgateError('AUDIT_RECORD_NOT_FOUND', `no audit record ${seq}`, { seq });
    }
    const whole = row as unknown as Readonly<Record<string, unknown>>;
    return { ...toEntry(row), hashRecomputes: recordHash(whole) === row.hash };
  }
}
