/**
 * @module The administrative event record (who, what, when), appended inside the change's own
 * transaction. Each event is also appended to the chained audit log in that same transaction
 * (kind `event.<action>`) through the store's audit slot, so grants, registrations, quarantine,
 * approvals and configuration changes are covered by the audit log's hashes and signed
 * checkpoints: docs/architecture.md §5.
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import { type Actor, checkActor } from '../../core/index.js';
import { auditSlotOf, rowWithoutCall, type UnchainedRow } from './audit-append.js';
import type { Database, EventRow } from './database.js';
import { FLEET_CHANNELS, notifyIn } from './fleet.js';

export interface NewEvent {
  readonly action: string;
  readonly subject: string;
  readonly details: Readonly<Record<string, unknown>>;
}

export async function appendEvent(
  db: Transaction<Database> | Kysely<Database>,
  actor: Actor,
  at: Date,
  event: NewEvent,
): Promise<void> {
  checkActor(actor);
  const write = async (trx: Transaction<Database>) => {
    const values = {
      at: at.toISOString(),
      actor: actor.id,
      via: actor.via,
      action: event.action,
      subject: event.subject,
      details: JSON.stringify(event.details),
    };
    const { seq } = await trx
      .insertInto('events')
      .values(values)
      .returning('seq')
      .executeTakeFirstOrThrow();
    await auditSlotOf(trx).appendIn(trx, [eventAuditRow({ ...values, seq: Number(seq) })]);
  };
  // The event and its audit record commit together.
  if (db.isTransaction) await write(db as Transaction<Database>);
  else await db.transaction().execute(write);
}

/** Events per INSERT: under SQLite's and PostgreSQL's bound-parameter limits (6 columns each). */
const EVENT_CHUNK = 500;

/**
 * Events gathered within one transaction and appended together, in the order they were gathered:
 * one INSERT for the events and one chained audit append for their records, instead of four
 * statements each (docs/architecture.md §8, C3, "Bulk registration"). The owner flushes it before
 * anything else in the transaction appends an event, so the log's order is the order the events
 * happened in; what is still gathered when the transaction rolls back is gone with it.
 */
export class EventBatch {
  readonly #pending: { readonly actor: Actor; readonly at: Date; readonly event: NewEvent }[] = [];

  push(actor: Actor, at: Date, event: NewEvent): void {
    checkActor(actor);
    this.#pending.push({ actor, at, event });
  }

  /** Appends every gathered event inside `trx` (a no-op when none is gathered). */
  async flush(trx: Transaction<Database>): Promise<void> {
    const gathered = this.#pending.splice(0);
    for (let i = 0; i < gathered.length; i += EVENT_CHUNK) {
      const values = gathered.slice(i, i + EVENT_CHUNK).map(({ actor, at, event }) => ({
        at: at.toISOString(),
        actor: actor.id,
        via: actor.via,
        action: event.action,
        subject: event.subject,
        details: JSON.stringify(event.details),
      }));
      const inserted = await trx.insertInto('events').values(values).returning('seq').execute();
      // The rows of one INSERT take increasing sequence numbers in the order they are listed.
      const seqs = inserted.map((r) => Number(r.seq)).sort((a, b) => a - b);
      if (seqs.length !== values.length) throw new Error('an event got no sequence number');
      const rows = values.map((v, k) => eventAuditRow({ ...v, seq: seqs[k] as number }));
      await auditSlotOf(trx).appendIn(trx, rows);
    }
  }
}

/** Appends each event at once, or gathers it into `batch` when there is one. */
export function eventSink(
  trx: Transaction<Database>,
  actor: Actor,
  at: Date,
  batch: EventBatch | undefined,
): (event: NewEvent) => Promise<void> {
  return async (event) =>
    batch ? batch.push(actor, at, event) : appendEvent(trx, actor, at, event);
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
  return rowWithoutCall({
    at: event.at,
    kind: `event.${event.action}`,
    details: JSON.stringify({
      event_seq: event.seq,
      actor: event.actor,
      via: event.via,
      subject: event.subject,
      details: JSON.parse(event.details) as unknown,
    }),
  });
}

export async function listEvents(
  db: Kysely<Database>,
  filter: { subject?: string; afterSeq?: number; limit: number },
): Promise<EventRow[]> {
  let q = db.selectFrom('events').selectAll().orderBy('seq', 'asc').limit(filter.limit);
  if (filter.subject !== undefined) q = q.where('subject', '=', filter.subject);
  if (filter.afterSeq !== undefined) q = q.where('seq', '>', filter.afterSeq);
  return q.execute();
}

/** The administrative event record, read side (the admin API's `events`). */
export function eventRecord(db: Kysely<Database>): {
  list(filter: { subject?: string; afterSeq?: number; limit: number }): Promise<EventRow[]>;
} {
  return { list: (filter) => listEvents(db, filter) };
}

/**
 * Bumped in every transaction that changes what the catalog offers; caches compare against it.
 * Returns the new revision as this transaction sees it.
 */
export async function bumpCatalogRevision(trx: Transaction<Database>): Promise<number> {
  await sql`update meta set value = cast(cast(value as integer) + 1 as text) where key = 'catalog_revision'`.execute(
    trx,
  );
  // Every replica hears of it once this transaction commits (fleet.ts), not before.
  await notifyIn(trx, FLEET_CHANNELS.revisions, 'catalog');
  return readCatalogRevision(trx);
}

/** Identity changes made by this process, counted as they happen: caches here drop at once. */
let localIdentityChanges = 0;

export function localIdentityChangeCount(): number {
  return localIdentityChanges;
}

/**
 * Bumped in every transaction that changes who may call what: agents, grants, users, a closed
 * session. Gates cache identities per revision; this process sees the change at once, other
 * replicas when the fleet's notification arrives (or, without one, when they next poll).
 */
export async function bumpIdentityRevision(
  db: Kysely<Database> | Transaction<Database>,
): Promise<void> {
  localIdentityChanges += 1;
  await sql`insert into meta (key, value) values ('identity_revision', '1')
    on conflict (key) do update set value = cast(cast(meta.value as integer) + 1 as text)`.execute(
    db,
  );
  // On a transaction, delivered when it commits; on the database handle, right after the bump.
  await notifyIn(db, FLEET_CHANNELS.revisions, 'identity');
}

/** Both revisions in one read (the gate polls them). A missing identity row reads as 0. */
export async function readRevisions(
  db: Kysely<Database>,
): Promise<{ catalog: number; identity: number }> {
  const rows = await db
    .selectFrom('meta')
    .select(['key', 'value'])
    .where('key', 'in', ['catalog_revision', 'identity_revision'])
    .execute();
  const value = (key: string) => Number(rows.find((r) => r.key === key)?.value ?? 0);
  return { catalog: value('catalog_revision'), identity: value('identity_revision') };
}

export async function readCatalogRevision(
  db: Kysely<Database> | Transaction<Database>,
): Promise<number> {
  const row = await db
    .selectFrom('meta')
    .select('value')
    .where('key', '=', 'catalog_revision')
    .executeTakeFirst();
  return row ? Number(row.value) : 0;
}

/**
 * The last TOTP step an approver used, across call approvals and change approvals: a code is
 * good for one approval of either kind.
 */
export async function lastTotpStep(
  db: Kysely<Database> | Transaction<Database>,
  approverId: string,
): Promise<number | undefined> {
  const calls = await db
    .selectFrom('approvals')
    .select((eb) => eb.fn.max('totp_step').as('step'))
    .where('decided_by', '=', approverId)
    .executeTakeFirst();
  const changes = await db
    .selectFrom('change_approvals')
    .select((eb) => eb.fn.max('totp_step').as('step'))
    .where('approver_id', '=', approverId)
    .executeTakeFirst();
  const steps = [calls?.step, changes?.step]
    .filter((s) => s !== null && s !== undefined)
    .map(Number);
  return steps.length > 0 ? Math.max(...steps) : undefined;
}
