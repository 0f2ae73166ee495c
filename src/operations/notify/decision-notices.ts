/**
 * @module Reviewers hear of every decision that waits for them, not only calls (C8, C19): a
 * four-eyes change (`change.requested`: a gated tool version or a grant request) and a pending
 * security review (`tool.registered` that opened one) reach the same channels as a pending
 * approval, through the same notifier — its bounded, retried deliveries per channel and kind, and
 * its redaction (ids, tool versions, reason names; never a definition, a description or an
 * operator's free text). Both are read from the committed event record, followed by sequence
 * number (docs/architecture.md §8, C16), so a change made by the CLI or another replica is heard
 * too; the cursor in `meta` moves by compare-and-set, so of several replicas only the one that
 * moved it sends. Never on a call's path; nothing here throws to its caller.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../records/store/index.js';
import type { Notifier } from './notifier.js';

const CURSOR_KEY = 'notify.decisions.cursor';
const FOLLOWED = ['change.requested', 'tool.registered'] as const;
const EVENTS_PER_CHECK = 200;

export interface DecisionNoticesDeps {
  readonly db: Kysely<Database>;
  readonly notifier: Pick<Notifier, 'changePending' | 'reviewPending' | 'enabled'>;
  /** How often the record is read for new decisions (0: only when `check` is called). */
  readonly intervalMs?: number;
}

/** `tool:<id>@<version>` → its parts, or null. */
function toolOf(subject: string): { id: string; version: string } | null {
  if (!subject.startsWith('tool:')) return null;
  const at = subject.lastIndexOf('@');
  return at > 5 ? { id: subject.slice(5, at), version: subject.slice(at + 1) } : null;
}

function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

export class DecisionNotices {
  readonly #d: DecisionNoticesDeps;
  #checking: Promise<void> | null = null;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(deps: DecisionNoticesDeps) {
    this.#d = deps;
  }

  /** Sets the cursor (history before it is not announced); starts the timer when a channel exists. */
  async start(): Promise<void> {
    const { max } = await this.#d.db
      .selectFrom('events')
      .select((eb) => eb.fn.max('seq').as('max'))
      .executeTakeFirstOrThrow();
    // Without a channel nothing is announced, and nothing decided meanwhile is announced later:
    // the cursor follows the record's end. With one, a cursor already set is kept.
    const enabled = this.#d.notifier.enabled;
    await this.#d.db
      .insertInto('meta')
      .values({ key: CURSOR_KEY, value: String(Number(max ?? 0)) })
      .onConflict((oc) =>
        enabled
          ? oc.column('key').doNothing()
          : oc.column('key').doUpdateSet({ value: String(Number(max ?? 0)) }),
      )
      .execute();
    if (!enabled) return;
    const every = this.#d.intervalMs ?? 5_000;
    if (every > 0 && this.#timer === undefined) {
      this.#timer = setInterval(() => void this.check().catch(() => {}), every);
      this.#timer.unref();
    }
  }

  /** Reads the record once for new decisions and notifies them; checks never overlap. */
  check(): Promise<void> {
    this.#checking ??= this.#check().finally(() => {
      this.#checking = null;
    });
    return this.#checking;
  }

  close(): void {
    this.#closed = true;
    clearInterval(this.#timer);
  }

  async #check(): Promise<void> {
    if (this.#closed || !this.#d.notifier.enabled) return;
    const db = this.#d.db;
    const row = await db
      .selectFrom('meta')
      .select('value')
      .where('key', '=', CURSOR_KEY)
      .executeTakeFirst();
    if (!row) return;
    const from = Number(row.value);
    const events = await db
      .selectFrom('events')
      .select(['seq', 'action', 'subject', 'details'])
      .where('seq', '>', from)
      .where('action', 'in', [...FOLLOWED])
      .orderBy('seq')
      .limit(EVENTS_PER_CHECK)
      .execute();
    const last = events.at(-1);
    if (!last) return;
    // Only the process that moves the cursor sends what it covered: replicas send it once.
    const moved = await db
      .updateTable('meta')
      .set({ value: String(Number(last.seq)) })
      .where('key', '=', CURSOR_KEY)
      .where('value', '=', row.value)
      .executeTakeFirst();
    if (Number(moved.numUpdatedRows) !== 1) return;
    for (const e of events) this.#notify(e.action, e.subject, e.details);
  }

  #notify(action: string, subject: string, detailsText: string): void {
    let details: Record<string, unknown>;
    try {
      details = JSON.parse(detailsText) as Record<string, unknown>;
    } catch {
      return;
    }
    if (action === 'change.requested') {
      const id = subject.startsWith('change:') ? subject.slice('change:'.length) : subject;
      this.#d.notifier.changePending({
        id,
        kind: details.kind === 'grant' ? 'grant' : 'tool',
        toolId: str(details.toolId),
        version: str(details.version),
        agentId: str(details.agentId),
        capability: str(details.capability),
        required: typeof details.required === 'number' ? details.required : 2,
      });
      return;
    }
    const tool = toolOf(subject);
    const review = str(details.review);
    if (tool === null || review === null) return;
    const reasons = Array.isArray(details.review_reasons)
      ? details.review_reasons.filter((r): r is string => typeof r === 'string')
      : [];
    this.#d.notifier.reviewPending({ id: review, toolId: tool.id, version: tool.version, reasons });
  }
}
