/**
 * @module Owner notices (docs/architecture.md §8, C16): owner teams are told when their tool is
 * deprecated or about to retire, quarantined (with the findings' rules), orphaned, unhealthy, or
 * when its error rate rises above 10% over 5 minutes. One entry, `toolEvent`, takes every kind;
 * the sources feeding it are the administrative event record (followed by sequence number, so a
 * deprecation made by the CLI or another replica is seen), a scheduled check (retire dates,
 * orphans), the committed call outcomes (error rate) and the health monitor.
 *
 * Each notice is deduplicated by one conditional upsert in the store (the same kind for the same
 * tool version within the window is sent once, across replicas), bounded by a per-team rate cap
 * counted in the store (`owner_notice_sends`, one transaction locked on the team: the cap holds
 * across replicas, docs/architecture.md §5),
 * recorded as the event `owner.notice` (so an audit record) and counted. Delivery is the bounded,
 * retried webhook delivery of `notify/`: nothing here is awaited on a call's path, and nothing
 * here throws into a caller.
 */
import { type Kysely, sql } from 'kysely';
import { type Clock, isToolId, type Outbound, systemActor, systemClock } from '../../core/index.js';
import { appendEvent, type Database, LOCK_CLASSES, lockKeyIn } from '../../records/store/index.js';
import { type DeliveryOutcome, WebhookDelivery } from '../notify/index.js';
import { type ErrorRateOptions, ErrorRateWindow } from './error-rate-window.js';
import type { OwnerChannels } from './owner-channels.js';
import {
  boundFacts,
  OWNER_NOTICE_KINDS,
  type OwnerNoticeKind,
  ownerNoticeMessage,
  type ToolEvent,
} from './owner-notice.js';

/** What became of one notice. */
export type NoticeOutcome =
  | 'sent'
  | 'deduplicated'
  | 'rate_limited'
  | 'unrouted'
  | 'unknown_tool'
  | 'invalid'
  | 'failed';

/** Where notices and their deliveries are counted (GatewayMetrics). */
export interface OwnerNoticeSink {
  ownerNotice(kind: OwnerNoticeKind, outcome: NoticeOutcome): void;
  /** A delivery's outcome, or `unreadable`: a channel skipped because its seal does not open. */
  ownerNoticeDelivery(outcome: DeliveryOutcome | 'unreadable'): void;
}

/** The part of an audit record the error-rate window reads. */
export interface CallOutcomeRecord {
  readonly kind: string;
  readonly at: Date;
  readonly toolId: string | null;
  readonly toolVersion: string | null;
  readonly outcome?: string;
  readonly code?: string;
}

export interface OwnerNoticesOptions {
  /** The scheduled check's period (events, retire dates, orphans); 0: no timer (call `check`). */
  readonly checkIntervalMs: number;
  /** The same kind for the same tool version is sent once within this window (default 24 h). */
  readonly dedupeWindowMs: number;
  /** Notices per team per hour, at most (default 30); past it they are counted and recorded. */
  readonly perTeamPerHour: number;
  /** A deprecated version whose retire date is this close is announced (default 7 days). */
  readonly retireLeadMs: number;
  /** Who hears of an orphan whose owner has no channel (default: nobody; counted unrouted). */
  readonly fallbackTeam: string | null;
  readonly errorRate: Partial<ErrorRateOptions>;
}

export const DEFAULT_OWNER_NOTICES: OwnerNoticesOptions = {
  checkIntervalMs: 0,
  dedupeWindowMs: 24 * 3_600_000,
  perTeamPerHour: 30,
  retireLeadMs: 7 * 86_400_000,
  fallbackTeam: null,
  errorRate: {},
};

/** How each notice is delivered (the reviewer notifications' bounds). */
export interface NoticeDelivery {
  readonly publicUrl: string;
  readonly timeoutMs: number;
  readonly maxAttempts: number;
  readonly backoffMs: number;
  readonly maxInFlight: number;
  readonly maxQueue: number;
}

export interface OwnerNoticesDeps {
  readonly db: Kysely<Database>;
  readonly channels: OwnerChannels;
  /** The owner of a registered version; null when there is no such version. */
  readonly ownerOf: (toolId: string, version: string) => Promise<string | null>;
  /** Deprecated versions not yet retired, with their retire dates. */
  readonly deprecated: () => Promise<
    readonly { id: string; version: string; owner: string; retire_at: string | null }[]
  >;
  /** Tools whose owner is gone or unknown (the orphaned-tools rule). */
  readonly orphans: () => Promise<
    readonly { tool: string; version: string; owner: string; reason: string }[]
  >;
  readonly delivery: NoticeDelivery;
  /** The egress rules every delivery goes out under (checked again at each delivery). */
  readonly outbound: Pick<Outbound, 'fetch'>;
  readonly sink?: OwnerNoticeSink;
  readonly clock?: Clock;
  readonly options?: Partial<OwnerNoticesOptions>;
}

const CURSOR_KEY = 'owner_notices_seq';
const FOLLOWED = ['tool.deprecated', 'tool.quarantined'] as const;
const EVENTS_PER_CHECK = 500;
const HOUR_MS = 3_600_000;

function parseSubject(subject: string): { id: string; version: string } | null {
  if (!subject.startsWith('tool:')) return null;
  const at = subject.lastIndexOf('@');
  if (at <= 5) return null;
  return { id: subject.slice(5, at), version: subject.slice(at + 1) };
}

/** A finding as owners are told of it: which rule fired where, never the flagged text. */
function findingNames(findings: unknown): string[] {
  if (!Array.isArray(findings)) return [];
  return findings
    .map((f: unknown) => {
      if (typeof f !== 'object' || f === null) return null;
      const { rule, field } = f as { rule?: unknown; field?: unknown };
      return typeof rule === 'string'
        ? `${rule}${typeof field === 'string' ? ` at ${field}` : ''}`
        : null;
    })
    .filter((n): n is string => n !== null)
    .slice(0, 20);
}

export class OwnerNotices {
  readonly #d: OwnerNoticesDeps;
  readonly #o: OwnerNoticesOptions;
  readonly #clock: Clock;
  readonly #window: ErrorRateWindow;
  readonly #deliveries = new Map<string, WebhookDelivery>();
  readonly #pending = new Set<Promise<unknown>>();
  #cursor: number | null = null;
  #checking: Promise<void> | null = null;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(deps: OwnerNoticesDeps) {
    this.#d = deps;
    this.#o = { ...DEFAULT_OWNER_NOTICES, ...deps.options };
    this.#clock = deps.clock ?? systemClock;
    this.#window = new ErrorRateWindow(this.#o.errorRate);
  }

  /**
   * The one entry for a tool event (the health monitor calls it with `unhealthy`). Never
   * rejects: the outcome says what happened.
   */
  toolEvent(event: ToolEvent): Promise<NoticeOutcome> {
    const p = this.#notice(event).catch(() => {
      this.#count(event.kind, 'failed');
      return 'failed' as const;
    });
    this.#pending.add(p);
    void p.finally(() => this.#pending.delete(p));
    return p;
  }

  /** Feeds committed audit records (AuditWriter.onCommitted); O(1) per record, never throws. */
  observe(batch: readonly CallOutcomeRecord[]): void {
    if (this.#closed) return;
    for (const r of batch) {
      if (r.kind !== 'call.post' || r.toolId === null || r.toolVersion === null) continue;
      // A call the caller cancelled says nothing about the tool.
      const error = r.outcome !== 'ok' && r.code !== 'CALL_CANCELLED';
      const c = this.#window.observe(r.toolId, r.toolVersion, r.at.getTime(), error);
      if (c === null) continue;
      const o = this.#window.options;
      void this.toolEvent({
        kind: 'error_rate',
        tool_id: c.toolId,
        version: c.version,
        facts: {
          calls: c.calls,
          errors: c.errors,
          rate_percent: Math.round(c.rate * 1000) / 10,
          threshold_percent: Math.round(o.threshold * 1000) / 10,
          window_minutes: Math.round(o.windowMs / 6_000) / 10,
        },
      });
    }
  }

  /** Reads (or sets, the first time) where the event record is followed from. */
  async init(): Promise<void> {
    const row = await this.#d.db
      .selectFrom('meta')
      .select('value')
      .where('key', '=', CURSOR_KEY)
      .executeTakeFirst();
    if (row) {
      this.#cursor = Number(row.value);
      return;
    }
    // From now on: history before notices existed is not announced.
    const { max } = await this.#d.db
      .selectFrom('events')
      .select((eb) => eb.fn.max('seq').as('max'))
      .executeTakeFirstOrThrow();
    this.#cursor = Number(max ?? 0);
    await this.#saveCursor(this.#cursor);
  }

  /** Runs the scheduled check every `checkIntervalMs` (0: never); the timer holds no process. */
  start(): void {
    if (this.#o.checkIntervalMs <= 0 || this.#timer) return;
    this.#timer = setInterval(() => void this.check().catch(() => {}), this.#o.checkIntervalMs);
    this.#timer.unref();
  }

  /**
   * One scheduled check: new deprecations and quarantines in the event record, retire dates
   * within the lead time, orphans. Checks never overlap; resolves when its notices are decided.
   */
  check(): Promise<void> {
    this.#checking ??= this.#check().finally(() => {
      this.#checking = null;
    });
    return this.#checking;
  }

  async #check(): Promise<void> {
    if (this.#closed) return;
    if (this.#cursor === null) await this.init();
    const jobs: Promise<NoticeOutcome>[] = [];
    const from = this.#cursor ?? 0;
    const events = await this.#d.db
      .selectFrom('events')
      .select(['seq', 'action', 'subject', 'details'])
      .where('seq', '>', from)
      .where('action', 'in', [...FOLLOWED])
      .orderBy('seq')
      .limit(EVENTS_PER_CHECK)
      .execute();
    for (const e of events) {
      const tool = parseSubject(e.subject);
      if (!tool) continue;
      const details = JSON.parse(e.details) as Record<string, unknown>;
      if (e.action === 'tool.deprecated') {
        jobs.push(
          this.toolEvent({
            kind: 'deprecated',
            tool_id: tool.id,
            version: tool.version,
            // The operator's reason is their own text: not sent on.
            facts: { retire_at: typeof details.retire_at === 'string' ? details.retire_at : null },
          }),
        );
      } else {
        const names = findingNames(details.findings);
        jobs.push(
          this.toolEvent({
            kind: 'quarantined',
            tool_id: tool.id,
            version: tool.version,
            facts: {
              findings: Array.isArray(details.findings) ? details.findings.length : 0,
              rules: names,
            },
          }),
        );
      }
    }
    // The cursor moves past every followed event of this page, and past the unfollowed ones
    // before the page's end when the page was not full.
    const last = events.at(-1);
    const next =
      events.length === EVENTS_PER_CHECK && last
        ? Number(last.seq)
        : Number(
            (
              await this.#d.db
                .selectFrom('events')
                .select((eb) => eb.fn.max('seq').as('max'))
                .executeTakeFirstOrThrow()
            ).max ?? from,
          );
    if (next > from) {
      this.#cursor = next;
      await this.#saveCursor(next);
    }
    const now = this.#clock().getTime();
    for (const t of await this.#d.deprecated()) {
      if (t.retire_at === null) continue;
      const at = Date.parse(t.retire_at);
      if (at <= now || at - now > this.#o.retireLeadMs) continue;
      jobs.push(
        this.toolEvent({
          kind: 'retiring',
          tool_id: t.id,
          version: t.version,
          owner: t.owner,
          facts: { retire_at: t.retire_at, days_left: Math.ceil((at - now) / 86_400_000) },
        }),
      );
    }
    for (const o of await this.#d.orphans())
      jobs.push(
        this.toolEvent({
          kind: 'orphaned',
          tool_id: o.tool,
          version: o.version,
          owner: o.owner,
          facts: { reason: o.reason },
        }),
      );
    await Promise.all(jobs);
  }

  async #saveCursor(seq: number): Promise<void> {
    const value = String(seq);
    await this.#d.db
      .insertInto('meta')
      .values({ key: CURSOR_KEY, value })
      .onConflict((oc) =>
        oc
          .column('key')
          .doUpdateSet({ value })
          // Only forward: another replica may have followed further.
          .where(sql<boolean>`cast(meta.value as integer) < ${seq}`),
      )
      .execute();
  }

  async #notice(e: ToolEvent): Promise<NoticeOutcome> {
    if (
      this.#closed ||
      !OWNER_NOTICE_KINDS.includes(e.kind) ||
      typeof e.tool_id !== 'string' ||
      !isToolId(e.tool_id) ||
      typeof e.version !== 'string' ||
      e.version.length === 0 ||
      e.version.length > 64
    ) {
      this.#count(OWNER_NOTICE_KINDS.includes(e.kind) ? e.kind : 'unhealthy', 'invalid');
      return 'invalid';
    }
    const owner = e.owner ?? (await this.#d.ownerOf(e.tool_id, e.version));
    if (owner === null) return this.#count(e.kind, 'unknown_tool');
    const now = this.#clock();
    const window = e.kind === 'retiring' ? this.#o.retireLeadMs : this.#o.dedupeWindowMs;
    if (!(await this.#claim(e, now, window))) return this.#count(e.kind, 'deduplicated');
    let team = owner;
    let found = await this.#d.channels.deliveryTargets(owner);
    const none = found.targets.length === 0 && found.unreadable.length === 0;
    if (none && e.kind === 'orphaned' && this.#o.fallbackTeam !== null) {
      team = this.#o.fallbackTeam;
      found = await this.#d.channels.deliveryTargets(team);
    }
    // A channel whose sealed URL does not open is skipped, never the team's notice: recorded
    // on the notice's event and counted, as an undeliverable notice is (attack round 22, Y14).
    const { targets, unreadable } = found;
    for (const _ of unreadable) this.#d.sink?.ownerNoticeDelivery('unreadable');
    const facts = boundFacts(e.facts);
    const outcome: NoticeOutcome =
      targets.length === 0
        ? unreadable.length > 0
          ? 'failed'
          : 'unrouted'
        : (await this.#takeSlot(team, now))
          ? 'sent'
          : 'rate_limited';
    if (outcome === 'sent') {
      const payload = ownerNoticeMessage(e, owner, facts, this.#d.delivery.publicUrl);
      for (const t of targets) this.#deliveryFor(t.id, t.url).send(payload);
    }
    await appendEvent(this.#d.db, systemActor('owner-notices'), now, {
      action: 'owner.notice',
      subject: `tool:${e.tool_id}@${e.version}`,
      details: {
        kind: e.kind,
        owner,
        team,
        channels: targets.length,
        ...(unreadable.length > 0 ? { unreadable } : {}),
        outcome,
        facts,
      },
    });
    return this.#count(e.kind, outcome);
  }

  /** Claims the (kind, tool, version) mark unless it was set within the window: one statement. */
  async #claim(e: ToolEvent, now: Date, windowMs: number): Promise<boolean> {
    const at = now.toISOString();
    const cutoff = new Date(now.getTime() - windowMs).toISOString();
    const r = await this.#d.db
      .insertInto('owner_notice_marks')
      .values({ kind: e.kind, tool_id: e.tool_id, tool_version: e.version, sent_at: at })
      .onConflict((oc) =>
        oc
          .columns(['kind', 'tool_id', 'tool_version'])
          .doUpdateSet({ sent_at: at })
          .where('owner_notice_marks.sent_at', '<=', cutoff),
      )
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0n) > 0;
  }

  /**
   * The per-team cap over the last hour, across every replica: the team's sends are counted and
   * one added in a transaction locked on the team (Store.lockKey), so two replicas never both
   * take the last slot. Sends older than the hour are removed on the way.
   */
  #takeSlot(team: string, now: Date): Promise<boolean> {
    const since = new Date(now.getTime() - HOUR_MS).toISOString();
    return this.#d.db.transaction().execute(async (trx) => {
      await lockKeyIn(trx, LOCK_CLASSES.ownerNotices, team);
      await trx
        .deleteFrom('owner_notice_sends')
        .where('team', '=', team)
        .where('sent_at', '<=', since)
        .execute();
      const row = await trx
        .selectFrom('owner_notice_sends')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('team', '=', team)
        .executeTakeFirst();
      if (Number(row?.n ?? 0) >= this.#o.perTeamPerHour) return false;
      await trx
        .insertInto('owner_notice_sends')
        .values({ team, sent_at: now.toISOString() })
        .execute();
      return true;
    });
  }

  #deliveryFor(id: string, url: string): WebhookDelivery {
    const key = `${id} ${url}`;
    let d = this.#deliveries.get(key);
    if (!d) {
      const c = this.#d.delivery;
      d = new WebhookDelivery(
        {
          url,
          timeoutMs: c.timeoutMs,
          maxAttempts: c.maxAttempts,
          backoffMs: c.backoffMs,
          maxInFlight: c.maxInFlight,
          maxQueue: c.maxQueue,
          userAgent: 'toolgate-owner-notices',
          fetch: this.#d.outbound.fetch,
        },
        (o) => this.#d.sink?.ownerNoticeDelivery(o),
      );
      this.#deliveries.set(key, d);
    }
    return d;
  }

  #count(kind: OwnerNoticeKind, outcome: NoticeOutcome): NoticeOutcome {
    try {
      this.#d.sink?.ownerNotice(kind, outcome);
    } catch {
      // Counting must not break a notice.
    }
    return outcome;
  }

  /** Resolves when every notice decided so far is recorded and its deliveries done or given up. */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
    await Promise.all([...this.#deliveries.values()].map((d) => d.settled()));
  }

  async close(graceMs?: number): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#checking?.catch(() => {});
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
    this.#closed = true;
    await Promise.all([...this.#deliveries.values()].map((d) => d.close(graceMs)));
  }
}
