/**
 * @module Confirmed deciders: four eyes means two people, not two accounts one person set up
 * (docs/security-model.md, "Four eyes: two people, not two accounts"). An account counts in a
 * decision that needs two people only while it is confirmed. Every act by someone else that hands
 * it credentials or a deciding role records who (`set_up_by`) and clears the confirmation, and only
 * a confirmed account may do it; another confirmed decider, who is neither the account nor anyone
 * in its set-up chain, confirms it again. The fresh
 * install's first admin, set up through the bootstrap token, is confirmed at once (the root of
 * trust) and, while it is the only confirmed decider, may confirm an account it set up itself.
 */
import type { Kysely, Transaction } from 'kysely';
import { type Actor, ToolgateError } from '../../core/index.js';
import { appendEvent, type Database } from '../../records/store/index.js';
import { BOOTSTRAP_ACTOR_ID, isBootstrap, type Operator, operatorActor } from './operator.js';

type Db = Kysely<Database> | Transaction<Database>;

/** `meta` key set once two confirmed deciders have existed: the fresh install's genesis is over. */
export const GENESIS_CLOSED_KEY = 'four_eyes_genesis_closed';
/** `meta` row every confirmation locks first, so two of them are decided one after the other. */
const CONFIRMATIONS_LOCK_KEY = 'four_eyes_confirmations';

/** Whether a JSON role list holds a role that decides (`approver`) or administers (`admin`). */
function decidesJson(roles: string): boolean {
  const value: unknown = JSON.parse(roles);
  return Array.isArray(value) && (value.includes('approver') || value.includes('admin'));
}

function holdsAdmin(roles: string): boolean {
  const value: unknown = JSON.parse(roles);
  return Array.isArray(value) && value.includes('admin');
}

/** Whether the genesis is still open (no two confirmed deciders have existed yet). */
export async function genesisOpen(db: Db): Promise<boolean> {
  const row = await db
    .selectFrom('meta')
    .select('key')
    .where('key', '=', GENESIS_CLOSED_KEY)
    .executeTakeFirst();
  return row === undefined;
}

/**
 * Whether operator account `operatorId` is a genesis admin: an account the bootstrap token
 * confirmed, which it does only at the genesis. The bootstrap token is that admin's secret (one
 * secret, one person), so what the token asks for is that admin's own request. Read on the
 * `operator.confirmed` events the token recorded as well as on the row, so an admin confirmed again
 * later by another person still counts as the token's holder. Never answers no for an account the
 * token confirmed.
 */
export async function isGenesisAdmin(db: Db, operatorId: string): Promise<boolean> {
  const row = await db
    .selectFrom('operators')
    .select('confirmed_by')
    .where('id', '=', operatorId)
    .executeTakeFirst();
  if (row?.confirmed_by === BOOTSTRAP_ACTOR_ID) return true;
  const event = await db
    .selectFrom('events')
    .select('seq')
    .where('actor', '=', BOOTSTRAP_ACTOR_ID)
    .where('action', '=', 'operator.confirmed')
    .where('subject', '=', `operator:${operatorId}`)
    .executeTakeFirst();
  return event !== undefined;
}

/** Ids of the confirmed accounts holding `approver` or `admin`, enabled or not. */
async function confirmedDeciders(db: Db): Promise<{ id: string; confirmed_by: string }[]> {
  const rows = await db
    .selectFrom('operators')
    .select(['id', 'roles', 'confirmed_by'])
    .where('confirmed_by', 'is not', null)
    .execute();
  return rows
    .filter((r) => decidesJson(r.roles))
    .map((r) => ({ id: r.id, confirmed_by: String(r.confirmed_by) }));
}

/**
 * FORBIDDEN: an account that is not confirmed handing another account credentials or a deciding
 * role; audited as `operator.hand_over_refused` (refusal-audit.ts).
 */
export class HandOverRefused extends ToolgateError<'FORBIDDEN'> {
  /** The account that was to be handed something. */
  readonly target: string;
  constructor(message: string, target: string) {
    super('FORBIDDEN', message, {});
    this.target = target;
  }
}

/**
 * Only a confirmed account hands another account credentials or a deciding role, so an account
 * one person set up and nobody else confirmed cannot launder a set-up (be the `set_up_by` of an
 * approver its creator then confirms). Read on the actor's row in the caller's transaction. An
 * actor with no account row is a library caller's own construction (every REST, console and CLI
 * operator is an authenticated account); it is not refused here. Throws HandOverRefused.
 */
async function requireConfirmedGiver(
  trx: Transaction<Database>,
  by: Operator,
  id: string,
  what: string,
): Promise<void> {
  const giver = await trx
    .selectFrom('operators')
    .select('confirmed_by')
    .where('id', '=', by.id)
    .executeTakeFirst();
  if (!giver || giver.confirmed_by !== null) return;
  throw new HandOverRefused(
    `operator ${by.id} is not confirmed and cannot ${what} ${id}: an unconfirmed account hands nobody credentials or a deciding role; another confirmed approver or admin confirms ${by.id} first (toolgate operators confirm ${by.id})`,
    id,
  );
}

/**
 * Records, inside the caller's transaction, that `by` handed account `id` credentials or a
 * deciding role (created or granted `approver`/`admin`, enrolled or replaced its second factor,
 * issued it a token, reset its password): `set_up_by` becomes `by` and the confirmation is cleared.
 * The account's own acts change nothing. An actor that is not confirmed itself is refused
 * (HandOverRefused; `what` names the act for the message). The one exception is the genesis: the bootstrap token
 * setting up an admin while no other account is a confirmed decider (and none ever was beside
 * another) confirms it, as the install's root of trust.
 */
export async function recordHandOver(
  trx: Transaction<Database>,
  by: Operator,
  id: string,
  via: Actor['via'],
  now: Date,
  what: string,
): Promise<void> {
  if (!isBootstrap(by) && by.id === id) return;
  if (!isBootstrap(by)) await requireConfirmedGiver(trx, by, id, what);
  const row = await trx
    .selectFrom('operators')
    .select(['roles', 'confirmed_by', 'confirmed_at'])
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) return;
  const actor = operatorActor(by, via);
  const genesis =
    isBootstrap(by) &&
    holdsAdmin(row.roles) &&
    (await genesisOpen(trx)) &&
    (await confirmedDeciders(trx)).every((d) => d.id === id);
  if (genesis) {
    const already = row.confirmed_by === BOOTSTRAP_ACTOR_ID;
    await trx
      .updateTable('operators')
      .set({
        set_up_by: actor.id,
        confirmed_by: BOOTSTRAP_ACTOR_ID,
        confirmed_at: already ? row.confirmed_at : now.toISOString(),
      })
      .where('id', '=', id)
      .execute();
    if (!already) {
      await appendEvent(trx, actor, now, {
        action: 'operator.confirmed',
        subject: `operator:${id}`,
        details: { confirmed_by: BOOTSTRAP_ACTOR_ID, set_up_by: actor.id, genesis: true },
      });
    }
    return;
  }
  await trx
    .updateTable('operators')
    .set({ set_up_by: actor.id, confirmed_by: null, confirmed_at: null })
    .where('id', '=', id)
    .execute();
  if (row.confirmed_by !== null) {
    await appendEvent(trx, actor, now, {
      action: 'operator.unconfirmed',
      subject: `operator:${id}`,
      details: { set_up_by: actor.id, was_confirmed_by: row.confirmed_by },
    });
  }
}

/** A structured refusal of a confirmation; the message says why. */
function refused(message: string): ToolgateError<'FORBIDDEN'> {
  return new ToolgateError('FORBIDDEN', message, {});
}

/**
 * Who may confirm: an operator account (never the bootstrap token) whose credential holds
 * `approver` or `admin`, not the account itself. Checked before a code is spent; the rest is
 * checked by `confirmIn`, on the rows. Never returns on refusal.
 */
export function mayConfirm(by: Operator, id: string): void {
  if (isBootstrap(by)) {
    throw refused(
      'the bootstrap admin token confirms nobody: a confirmed approver or admin does it as their own account',
    );
  }
  if (!by.roles.includes('approver') && !by.roles.includes('admin')) {
    throw new ToolgateError(
      'FORBIDDEN',
      `operator ${by.id} cannot confirm accounts: it needs the approver or admin role`,
      { roles: ['approver', 'admin'] },
    );
  }
  if (by.id === id) throw refused(`operator ${by.id} cannot confirm their own account`);
}

/**
 * Whether `by` may confirm account `id`, read on `db` (the caller's transaction when it writes):
 * `by` must be an enabled, confirmed account holding `approver` or `admin`, neither `id` nor anyone
 * in its set-up chain (`setUpChain`; an account the bootstrap token set up counts as set up by the
 * genesis admin: one secret, one person), unless the genesis is open, `by` is its only confirmed
 * decider and set `id` up itself. Returns
 * the account's `set_up_by` and whether it is confirmed already; throws FORBIDDEN naming why.
 */
export async function checkConfirmation(
  db: Db,
  by: Operator,
  id: string,
  via: Actor['via'],
): Promise<{ setUpBy: string | null; confirmed: boolean }> {
  mayConfirm(by, id);
  const confirmer = await db
    .selectFrom('operators')
    .select(['id', 'roles', 'disabled', 'confirmed_by'])
    .where('id', '=', by.id)
    .executeTakeFirst();
  if (!confirmer || confirmer.disabled === 1) {
    throw refused(`operator ${by.id} is not an enabled account and confirms nobody`);
  }
  if (!decidesJson(confirmer.roles)) {
    throw refused(`operator ${by.id} holds neither approver nor admin and confirms nobody`);
  }
  if (confirmer.confirmed_by === null) {
    throw refused(
      `operator ${by.id} is not confirmed itself; only a confirmed approver or admin confirms another account`,
    );
  }
  const target = await db
    .selectFrom('operators')
    .select(['id', 'roles', 'set_up_by', 'confirmed_by'])
    .where('id', '=', id)
    .executeTakeFirst();
  if (!target) {
    throw new ToolgateError('OPERATOR_NOT_FOUND', `no operator ${id}`, { operatorId: id });
  }
  if (!decidesJson(target.roles)) {
    throw refused(
      `operator ${id} holds neither approver nor admin: only a deciding account is confirmed`,
    );
  }
  const result = { setUpBy: target.set_up_by, confirmed: target.confirmed_by !== null };
  if (result.confirmed) return result;
  const actorId = operatorActor(by, via).id;
  // The bootstrap token is the genesis admin's secret: one secret, one person.
  const isConfirmer = (setUpBy: string | null) =>
    setUpBy === actorId ||
    (setUpBy === BOOTSTRAP_ACTOR_ID && confirmer.confirmed_by === BOOTSTRAP_ACTOR_ID);
  const chain = await setUpChain(db, target.set_up_by);
  const at = chain.findIndex(isConfirmer);
  if (at >= 0 || chain.length > MAX_SET_UP_CHAIN) {
    const others = (await confirmedDeciders(db)).filter((d) => d.id !== by.id);
    if (at !== 0 || !(await genesisOpen(db)) || others.length > 0) {
      throw refused(
        at < 0
          ? `the set-up chain of ${id} is longer than ${MAX_SET_UP_CHAIN} accounts and cannot be checked; ${id} cannot be confirmed until an admin other than those in it hands it its credentials again`
          : at === 0
            ? `operator ${by.id} set up ${id} (its credentials or deciding role came through them) and cannot confirm it; another confirmed approver or admin must`
            : `operator ${by.id} set up ${id} through ${chain.slice(0, at).join(' <- ')} (each handed the next its credentials or deciding role) and cannot confirm it; another confirmed approver or admin must`,
      );
    }
  }
  return result;
}

/** How many accounts `setUpChain` follows before it gives up (and the confirmation is refused). */
export const MAX_SET_UP_CHAIN = 32;

/**
 * The accounts that set an account up, nearest first: its `set_up_by`, then that account's
 * `set_up_by`, and so on, until an actor that is not an operator account (the bootstrap token),
 * an account nobody set up, a repeat, or one more than `MAX_SET_UP_CHAIN` entries (so a longer
 * chain is seen as too long).
 */
async function setUpChain(db: Db, first: string | null): Promise<string[]> {
  const chain: string[] = [];
  let next = first;
  while (next !== null && !chain.includes(next) && chain.length <= MAX_SET_UP_CHAIN) {
    chain.push(next);
    if (!next.startsWith('operator:')) break;
    const row = await db
      .selectFrom('operators')
      .select('set_up_by')
      .where('id', '=', next.slice('operator:'.length))
      .executeTakeFirst();
    next = row?.set_up_by ?? null;
  }
  return chain;
}

/**
 * Whether actor ids `a` and `b` are one person for four eyes: the same actor, or the bootstrap
 * token and a genesis admin, or two genesis admins (the token is the genesis admin's secret: one
 * secret, one person; `isGenesisAdmin`).
 */
export async function onePerson(db: Db, a: string, b: string): Promise<boolean> {
  if (a === b) return true;
  const tokens = async (actor: string) =>
    actor === BOOTSTRAP_ACTOR_ID ||
    (actor.startsWith('operator:') && (await isGenesisAdmin(db, actor.slice('operator:'.length))));
  return (await tokens(a)) && (await tokens(b));
}

/** Why account `id` is not a person apart from another actor (see `apartFrom`). */
export type NotApart =
  | { readonly why: 'same' }
  | {
      readonly why: 'set_up';
      readonly chain: readonly string[];
      readonly confirmedBy: string | null;
    }
  | { readonly why: 'chain_too_long'; readonly confirmedBy: string | null };

/**
 * Whether operator account `id` counts as a person apart from actor `other` (an actor id,
 * `operator:<id>` or the bootstrap token) in a decision that needs two people, by the rule a
 * confirmation uses: it is not `other`'s person (`onePerson`), and `other` is in none of its
 * set-up chain (`setUpChain`: who handed it its credentials or deciding role, and who them), or
 * it has since been confirmed by a decider who is not `other`'s person. Null when apart, else why
 * not (with the chain up to `other`). An actor with no account row (a library caller's own
 * construction) has no set-up chain. Read on `db`.
 */
export async function apartFrom(db: Db, id: string, other: string): Promise<NotApart | null> {
  if (await onePerson(db, `operator:${id}`, other)) return { why: 'same' };
  const row = await db
    .selectFrom('operators')
    .select(['set_up_by', 'confirmed_by'])
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) return null;
  const confirmedApart =
    row.confirmed_by !== null && !(await onePerson(db, row.confirmed_by, other));
  if (confirmedApart) return null;
  const chain = await setUpChain(db, row.set_up_by);
  for (let at = 0; at < chain.length && at < MAX_SET_UP_CHAIN; at++) {
    if (await onePerson(db, chain[at] ?? '', other)) {
      return { why: 'set_up', chain: chain.slice(0, at + 1), confirmedBy: row.confirmed_by };
    }
  }
  if (chain.length > MAX_SET_UP_CHAIN)
    return { why: 'chain_too_long', confirmedBy: row.confirmed_by };
  return null;
}

/**
 * Confirms account `id` as `by` inside `trx` (see `checkConfirmation`, read again here under a
 * lock), or refuses with FORBIDDEN naming why. Confirming an account that is already confirmed
 * changes nothing.
 */
export async function confirmIn(
  trx: Transaction<Database>,
  by: Operator,
  id: string,
  via: Actor['via'],
  now: Date,
): Promise<void> {
  mayConfirm(by, id);
  // Two confirmations are decided one after the other: at the genesis, two at once would each
  // see their confirmer as the only confirmed decider.
  await trx
    .updateTable('meta')
    .set((eb) => ({ value: eb.ref('value') }))
    .where('key', '=', CONFIRMATIONS_LOCK_KEY)
    .execute();
  const { setUpBy, confirmed } = await checkConfirmation(trx, by, id, via);
  if (confirmed) return;
  const actor = operatorActor(by, via);
  await trx
    .updateTable('operators')
    .set({ confirmed_by: actor.id, confirmed_at: now.toISOString() })
    .where('id', '=', id)
    .execute();
  // Two confirmed deciders exist now: from here on nobody confirms an account they set up.
  await trx
    .insertInto('meta')
    .values({ key: GENESIS_CLOSED_KEY, value: actor.id })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  await appendEvent(trx, actor, now, {
    action: 'operator.confirmed',
    subject: `operator:${id}`,
    details: { confirmed_by: actor.id, set_up_by: setUpBy },
  });
}
