/**
 * @module Scoped approvals (C8, docs/operators-and-approvals.md "Scoped approvals"): a reviewer
 * approves one call with an explicit, bounded scope — the same principal, the same run, the same
 * tool version and the same destination values, up to N calls (the approved one is the first), an
 * amount in cents and a time. A later call is covered only if all of that holds; its use is counted
 * by one conditional update, so concurrent calls never pass a bound on either database. Never for
 * irreversible or permission-changing calls, nor out of band, nor for a call that waits because
 * injection text or an untrusted destination reached its run. Granting, each use (the covered
 * call's pre record), exhaustion and revocation are audited.
 */
import type { Kysely, Transaction } from 'kysely';
import {
  type Actor,
  canonicalHash,
  problem,
  type RenderedCall,
  systemActor,
  ToolgateError,
  visibleEscapes,
} from '../../core/index.js';
import {
  type ApprovalRow,
  type ApprovalScopeRow,
  appendEvent,
  type Database,
} from '../../records/store/index.js';

type Db = Kysely<Database> | Transaction<Database>;

/** At most this many calls under one scope (the approved one included). */
export const MAX_SCOPE_CALLS = 100;
/** A scope ends at most this long after it is granted. */
export const MAX_SCOPE_MS = 24 * 3600 * 1000;

/**
 * What a reviewer asks for: N calls, an optional amount in cents, until a time (ISO 8601) — or
 * for `minutes` from the decision (the console's form; the desk's clock turns it into `until`).
 */
export interface ScopeRequest {
  readonly calls: number;
  readonly amount_cents?: number | null;
  readonly until?: string;
  readonly minutes?: number;
}

/** The checked terms, as stored and as a passkey signs them (their canonical hash). */
export interface ScopeTerms {
  readonly calls: number;
  readonly amount_cents: number | null;
  /** ISO 8601 UTC, normalised. */
  readonly until: string;
}

/** One destination value a scope binds: the argument's pointer and its checked value. */
export interface ScopeDestination {
  readonly argument: string;
  readonly value: string;
}

/** A scope as every view shows it. */
export interface ApprovalScopeView {
  readonly approval_id: string;
  /** `expired` is an active scope past its time. */
  readonly status: 'active' | 'exhausted' | 'expired' | 'revoked';
  readonly run_id: string;
  readonly tool_id: string;
  readonly tool_version: string;
  readonly destinations: readonly ScopeDestination[];
  readonly calls: number;
  readonly calls_used: number;
  readonly amount_cents: number | null;
  readonly amount_used_cents: number;
  readonly until: string;
  readonly granted_by: string;
  readonly granted_at: string;
  readonly revoked_by: string | null;
  readonly revoked_at: string | null;
  readonly revoke_reason: string | null;
}

/** A later call, as the approval step asks whether a scope covers it. */
export interface ScopeCall {
  readonly agentId: string;
  readonly userId: string | null;
  readonly credential: string | null;
  readonly runId: string;
  readonly toolId: string;
  readonly toolVersion: string;
  readonly destinationsHash: string;
  readonly cents: number;
}

/** A use of a scope: the approval it was given with, its grantor, and which use this is. */
export interface ScopeUse {
  readonly approvalId: string;
  readonly approver: string;
  readonly use: number;
  readonly calls: number;
}

/** The hash of the destination values a call carries: what a scope compares. */
export function destinationsHash(destinations: readonly ScopeDestination[]): string {
  return canonicalHash(destinations.map((d) => [d.argument, d.value]));
}

/** The hash of a scope's terms: what a passkey's commitment names (core/decision-commitment.ts). */
export function scopeHash(terms: ScopeTerms): string {
  return canonicalHash({
    calls: terms.calls,
    amount_cents: terms.amount_cents,
    until: terms.until,
  });
}

function invalid(pointer: string, message: string): ToolgateError<'INPUT_INVALID'> {
  return new ToolgateError('INPUT_INVALID', `scope: ${message}`, {
    problems: [problem(`/scope${pointer}`, message, 'approval.scope')],
  });
}

/** Parses and bounds a reviewer's scope; throws INPUT_INVALID naming the field. */
export function scopeTerms(input: ScopeRequest, now: Date): ScopeTerms {
  const { calls } = input;
  if ((input.until === undefined) === (input.minutes === undefined))
    throw invalid('/until', 'give either until or minutes');
  const until = input.until ?? untilIn(input.minutes ?? 0, now);
  const amount = input.amount_cents ?? null;
  if (!Number.isSafeInteger(calls) || calls < 2 || calls > MAX_SCOPE_CALLS)
    throw invalid('/calls', `calls must be an integer from 2 to ${MAX_SCOPE_CALLS}`);
  if (amount !== null && (!Number.isSafeInteger(amount) || amount < 0))
    throw invalid('/amount_cents', 'amount_cents must be a whole number of cents, 0 or more');
  const at = typeof until === 'string' ? Date.parse(until) : Number.NaN;
  if (!Number.isFinite(at) || !/^\d{4}-\d\d-\d\dT/.test(until))
    throw invalid('/until', 'until must be an ISO 8601 time');
  if (at <= now.getTime()) throw invalid('/until', 'until must be in the future');
  if (at - now.getTime() > MAX_SCOPE_MS)
    throw invalid('/until', 'until must be within 24 hours of the decision');
  return { calls, amount_cents: amount, until: new Date(at).toISOString() };
}

/** The scope of `minutes` from `now` (the console and the CLI's relative form). */
export function untilIn(minutes: number, now: Date): string {
  if (!Number.isSafeInteger(minutes) || minutes < 1)
    throw invalid('/until', 'minutes must be a whole number, 1 or more');
  return new Date(now.getTime() + minutes * 60_000).toISOString();
}

function refused(row: ApprovalRow, reason: string, message: string) {
  return new ToolgateError('APPROVAL_SCOPE_REFUSED', `approval ${row.id}: ${message}`, {
    approvalId: row.id,
    reason,
    action_class: row.action_class,
  });
}

/** Why an approval cannot carry a scope (null: it can). What the page also checks to offer one. */
export function scopeRefusalOf(
  row: Pick<ApprovalRow, 'action_class' | 'out_of_band'>,
  rendered: RenderedCall,
): 'action_class' | 'out_of_band' | 'escalated' | 'not_bindable' | null {
  if (row.action_class === 'irreversible' || row.action_class === 'permission_change')
    return 'action_class';
  if (row.out_of_band === 1) return 'out_of_band';
  if (rendered.after_injection || (rendered.untrusted_destinations?.length ?? 0) > 0)
    return 'escalated';
  if (rendered.destination_values === undefined) return 'not_bindable';
  // An external send that names no destination would be covered whoever it is sent to.
  if (row.action_class === 'external_send' && rendered.destination_values.length === 0)
    return 'not_bindable';
  return null;
}

/** The stored scope a grant writes, after every refusal; throws APPROVAL_SCOPE_REFUSED. */
export async function scopeGrant(
  db: Db,
  row: ApprovalRow,
  terms: ScopeTerms,
  grantedBy: string,
  now: Date,
): Promise<ApprovalScopeRow> {
  const rendered = JSON.parse(row.rendered) as RenderedCall;
  const why = scopeRefusalOf(row, rendered);
  if (why === 'action_class')
    throw refused(
      row,
      why,
      `a ${row.action_class} call is approved one call at a time, never with a scope`,
    );
  if (why === 'out_of_band')
    throw refused(row, why, 'a call approved out of band is never given a scope');
  if (why === 'escalated')
    throw refused(
      row,
      why,
      'this call waits because untrusted content reached its run: approve it alone',
    );
  const run = await db
    .selectFrom('sessions')
    .select(['run_id', 'user_id', 'credential', 'agent_id'])
    .where('id', '=', row.session_id)
    .executeTakeFirst();
  if (why === 'not_bindable' || !run || run.agent_id !== row.agent_id)
    throw refused(
      row,
      'not_bindable',
      'this request records no run or destinations to bind a scope to (an external send is scoped only to the destinations its tool declares)',
    );
  const first = rendered.cost?.cents ?? 0;
  if (terms.amount_cents !== null && terms.amount_cents < first)
    throw invalid('/amount_cents', `the amount is less than this call's own cost (${first} cents)`);
  return {
    approval_id: row.id,
    agent_id: row.agent_id,
    user_id: run.user_id,
    credential: run.credential,
    run_id: run.run_id,
    tool_id: row.tool_id,
    tool_version: row.tool_version,
    destinations_hash: destinationsHash(rendered.destination_values ?? []),
    max_calls: terms.calls,
    // The approved call itself is the first use of its scope.
    used_calls: 1,
    max_cents: terms.amount_cents,
    used_cents: first,
    expires_at: terms.until,
    status: 'active',
    granted_by: grantedBy,
    granted_at: now.toISOString(),
    revoked_by: null,
    revoked_at: null,
    revoke_reason: null,
  };
}

/** What the grant's audit record says of the scope. */
export function scopeDetails(scope: ApprovalScopeRow): Record<string, unknown> {
  return {
    calls: scope.max_calls,
    amount_cents: scope.max_cents,
    until: scope.expires_at,
    run_id: scope.run_id,
    destinations_hash: scope.destinations_hash,
  };
}

/**
 * Takes one use of a live scope that covers `call`, or returns null (the call then waits as any).
 * The bounds are checked in the one UPDATE that counts the use, so two calls racing for the last
 * use cannot both get it (SQLite's writes run alone; PostgreSQL re-reads the row it waited for).
 * A use that spends the last call or the whole amount marks the scope exhausted and audits it.
 */
export async function useScope(
  db: Kysely<Database>,
  call: ScopeCall,
  now: Date,
): Promise<ScopeUse | null> {
  const at = now.toISOString();
  const candidates = await db
    .selectFrom('approval_scopes')
    .select(['approval_id', 'user_id', 'credential'])
    .where('agent_id', '=', call.agentId)
    .where('run_id', '=', call.runId)
    .where('tool_id', '=', call.toolId)
    .where('tool_version', '=', call.toolVersion)
    .where('destinations_hash', '=', call.destinationsHash)
    .where('status', '=', 'active')
    .where('expires_at', '>', at)
    .orderBy('granted_at')
    .execute();
  for (const c of candidates) {
    // The whole principal, compared exactly, nulls included (approval-owner.ts).
    if (c.user_id !== call.userId || c.credential !== call.credential) continue;
    const used = await db
      .updateTable('approval_scopes')
      .set((eb) => ({
        used_calls: eb('used_calls', '+', 1),
        used_cents: eb('used_cents', '+', call.cents),
      }))
      .where('approval_id', '=', c.approval_id)
      .where('status', '=', 'active')
      .where('expires_at', '>', at)
      .where((eb) => eb('used_calls', '<', eb.ref('max_calls')))
      .where((eb) =>
        eb.or([
          eb('max_cents', 'is', null),
          eb(eb('used_cents', '+', call.cents), '<=', eb.ref('max_cents')),
        ]),
      )
      .returning(['used_calls', 'max_calls', 'used_cents', 'max_cents', 'granted_by'])
      .executeTakeFirst();
    if (!used) continue;
    const spent =
      used.used_calls >= used.max_calls ||
      (used.max_cents !== null && used.used_cents >= used.max_cents);
    if (spent) await exhaust(db, c.approval_id, used, now);
    return {
      approvalId: c.approval_id,
      approver: used.granted_by,
      use: used.used_calls,
      calls: used.max_calls,
    };
  }
  return null;
}

async function exhaust(
  db: Kysely<Database>,
  approvalId: string,
  used: { used_calls: number; used_cents: number },
  now: Date,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const done = await trx
      .updateTable('approval_scopes')
      .set({ status: 'exhausted' })
      .where('approval_id', '=', approvalId)
      .where('status', '=', 'active')
      .executeTakeFirst();
    if (Number(done.numUpdatedRows) !== 1) return;
    await appendEvent(trx, systemActor('approval-scope'), now, {
      action: 'approval.scope_exhausted',
      subject: `approval:${approvalId}`,
      details: { calls_used: used.used_calls, amount_used_cents: used.used_cents },
    });
  });
}

/** Revokes the live scope of approval `id` (audited); the next call it would cover waits again. */
export async function revokeScope(
  db: Kysely<Database>,
  id: string,
  actor: Actor,
  reason: string,
  now: Date,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const done = await trx
      .updateTable('approval_scopes')
      .set({
        status: 'revoked',
        revoked_by: actor.id,
        revoked_at: now.toISOString(),
        revoke_reason: reason,
      })
      .where('approval_id', '=', id)
      .where('status', '=', 'active')
      .executeTakeFirst();
    if (Number(done.numUpdatedRows) !== 1) {
      const exists = await trx
        .selectFrom('approval_scopes')
        .select('status')
        .where('approval_id', '=', id)
        .executeTakeFirst();
      if (!exists) throw new ToolgateError('NOT_FOUND', `approval ${id} has no scope`, {});
      throw new ToolgateError('APPROVAL_STATE', `the scope of approval ${id} is not active`, {
        approvalId: id,
      });
    }
    await appendEvent(trx, actor, now, {
      action: 'approval.scope_revoked',
      subject: `approval:${id}`,
      details: { reason },
    });
  });
}

/** The scope of approval `id` as shown, or null when it was approved for one call. */
export async function scopeOf(
  db: Db,
  id: string,
  rendered: RenderedCall,
  now: Date,
): Promise<ApprovalScopeView | null> {
  const row = await db
    .selectFrom('approval_scopes')
    .selectAll()
    .where('approval_id', '=', id)
    .executeTakeFirst();
  if (!row) return null;
  const expired = row.status === 'active' && Date.parse(row.expires_at) <= now.getTime();
  return {
    approval_id: row.approval_id,
    status: expired ? 'expired' : (row.status as ApprovalScopeView['status']),
    run_id: row.run_id,
    tool_id: row.tool_id,
    tool_version: row.tool_version,
    destinations: rendered.destination_values ?? [],
    calls: row.max_calls,
    calls_used: row.used_calls,
    amount_cents: row.max_cents,
    amount_used_cents: row.used_cents,
    until: row.expires_at,
    granted_by: row.granted_by,
    granted_at: row.granted_at,
    revoked_by: row.revoked_by,
    revoked_at: row.revoked_at,
    revoke_reason: row.revoke_reason,
  };
}

/** The scope's terms as stored, for the offline check of a passkey-signed scope. */
export async function storedScopeTerms(db: Db, id: string): Promise<ScopeTerms | null> {
  const row = await db
    .selectFrom('approval_scopes')
    .select(['max_calls', 'max_cents', 'expires_at'])
    .where('approval_id', '=', id)
    .executeTakeFirst();
  return row ? { calls: row.max_calls, amount_cents: row.max_cents, until: row.expires_at } : null;
}

/** A scope in plain words: what every page and the CLI print. */
export function scopeWords(
  s: Pick<ApprovalScopeView, 'calls' | 'amount_cents' | 'until' | 'destinations'> & {
    tool?: string;
  },
): string {
  const dest =
    s.destinations.length === 0
      ? 'any arguments (the tool declares no destination arguments)'
      : `the same destinations (${s.destinations.map((d) => `${visibleEscapes(d.argument)} = ${visibleEscapes(d.value)}`).join(', ')})`;
  const amount = s.amount_cents === null ? '' : `, spending at most ${s.amount_cents} cents`;
  return `up to ${s.calls} calls (this one included) of the same tool version in this run, with ${dest}${amount}, until ${s.until}`;
}
