/**
 * @module The operator service's records and rules that need no service: the views and specs it
 * takes and returns, reading an account row, and the checks every operator act shares.
 */
import type { Kysely, Transaction } from 'kysely';
import { type Clock, problem, systemActor, ToolgateError } from '../../core/index.js';
import { appendEvent, type Database } from '../../records/store/index.js';
import { hasRole, isBootstrap, type Operator, type OperatorRole } from './operator.js';
import type { OperatorRefusals } from './operator-authority.js';
import { parseRoles, printableName } from './operator-spec.js';
import { type Argon2Params, hashPassword, needsRehash } from './password-hash.js';
import { MAX_TOKEN_DAYS, MIN_TOKEN_DAYS } from './personal-token.js';
import { FourEyesRefused } from './refusal-audit.js';

/** An account as admins see it; never the password hash. */
export interface OperatorView {
  readonly id: string;
  readonly name: string;
  readonly roles: OperatorRole[];
  readonly teams: string[];
  readonly kind: 'local' | 'oidc';
  readonly disabled: boolean;
  readonly has_password: boolean;
  readonly email: string | null;
  readonly created_at: string;
  readonly created_by: string;
  readonly updated_at: string;
  /** Who last handed the account credentials or a deciding role; null: nobody yet. */
  readonly set_up_by: string | null;
  /** Whether the account counts in a decision that needs two people (four-eyes changes). */
  readonly confirmed: boolean;
  /** Who confirmed it (`admin-token` at the genesis, `upgrade` for accounts from before). */
  readonly confirmed_by: string | null;
  readonly confirmed_at: string | null;
}

export interface OperatorSpec {
  readonly id: string;
  readonly name?: string;
  readonly roles: readonly OperatorRole[];
  readonly teams?: readonly string[];
  /** Optional here; without one the account cannot log in until `setPassword`. */
  readonly password?: string;
}

export interface OperatorUpdate {
  readonly name?: string;
  readonly roles?: readonly OperatorRole[];
  readonly teams?: readonly string[];
  readonly disabled?: boolean;
}

export interface OidcIdentity {
  readonly issuer: string;
  readonly subject: string;
  readonly name: string;
  readonly email?: string;
  readonly roles: readonly OperatorRole[];
  readonly teams: readonly string[];
}

export interface TokenSpec {
  readonly name: string;
  /** A subset of the operator's roles; default all of them. */
  readonly roles?: readonly OperatorRole[];
  /** 1 to 366; required, so no token lives forever. */
  readonly expiresInDays: number;
  /** Whose token: default the caller's own; another operator's only for an admin. */
  readonly operatorId?: string;
}

export interface IssuedToken {
  readonly id: string;
  /** The token; returned once, never stored. */
  readonly token: string;
  readonly operator_id: string;
  readonly roles: OperatorRole[];
  readonly expires_at: string;
}

export interface TokenView {
  readonly id: string;
  readonly operator_id: string;
  readonly name: string;
  readonly roles: OperatorRole[];
  readonly created_at: string;
  readonly created_by: string;
  readonly expires_at: string;
  readonly revoked_at: string | null;
}

export type OperatorRow = Awaited<ReturnType<typeof selectOperator>>;
export type Db = Kysely<Database> | Transaction<Database>;

export function selectOperator(db: Db, id: string) {
  return db.selectFrom('operators').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The one answer to every failed local login: which part failed is for the audit log only. */
/** A personal token's row (by its hash) joined with its account's, as read now; or undefined. */
export function selectTokenAccount(db: Db, tokenHash: string) {
  return db
    .selectFrom('operator_tokens')
    .innerJoin('operators', 'operators.id', 'operator_tokens.operator_id')
    .select([
      'operators.id',
      'operators.name',
      'operators.roles as account_roles',
      'operators.teams',
      'operators.disabled',
      'operator_tokens.roles as token_roles',
      'operator_tokens.expires_at',
      'operator_tokens.revoked_at',
    ])
    .where('operator_tokens.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

export function loginRefused(): ToolgateError<'UNAUTHENTICATED'> {
  return new ToolgateError('UNAUTHENTICATED', 'wrong operator, password or code', {});
}

export function forbidden(message: string, roles: OperatorRole[] = []): ToolgateError<'FORBIDDEN'> {
  return new ToolgateError('FORBIDDEN', message, roles.length > 0 ? { roles } : {});
}

export function requireAdmin(by: Operator): void {
  if (!hasRole(by, 'admin')) throw forbidden(`operator ${by.id} is not an admin`, ['admin']);
}

/**
 * `meta` key written, in the same transaction, when the first admin is set up (an enabled account
 * holding `admin` with a second factor enrolled), and never removed: the bootstrap token's
 * fresh-install powers end for good (attack round 10, F3), whatever later happens to the accounts.
 */
export const FIRST_ADMIN_SET_UP_KEY = 'first_admin_set_up';

/** Whether an enabled account holding `admin` has a second factor enrolled, now. */
async function adminArmedNow(db: Db): Promise<boolean> {
  const rows = await db
    .selectFrom('operators')
    .innerJoin('operator_second_factors', 'operator_second_factors.operator_id', 'operators.id')
    .select('operators.roles')
    .where('operators.disabled', '=', 0)
    .where('operators.roles', 'like', '%"admin"%')
    .execute();
  return rows.some((r) => rolesOf(r.roles).includes('admin'));
}

/**
 * Writes the set-up latch (`FIRST_ADMIN_SET_UP_KEY`) when the first admin is set up now; called
 * inside the transaction of every act that can set it up (a factor enrolled, a role granted, an
 * account enabled) and by the check itself. Answers whether the latch is set.
 */
export async function latchFirstAdminSetUp(db: Db): Promise<boolean> {
  if (!(await adminArmedNow(db))) return false;
  await db
    .insertInto('meta')
    .values({ key: FIRST_ADMIN_SET_UP_KEY, value: 'set_up' })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  return true;
}

/**
 * Writes the set-up latch at the first act of a person's own credential (attack round 11, F1): an
 * operator's sign-in (local or single sign-on) or a request a personal token authenticated. An
 * install whose admins hold no local second factor (single sign-on, or personal tokens only) is in
 * use all the same, and the shared bootstrap secret's fresh-install powers end. One-way; `how`
 * (`sign_in`, `personal_token`) is kept as the value for whoever reads the row.
 */
export async function latchPersonActed(db: Db, how: 'sign_in' | 'personal_token'): Promise<void> {
  await db
    .insertInto('meta')
    .values({ key: FIRST_ADMIN_SET_UP_KEY, value: how })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
}

/**
 * `latchPersonActed`, written once per process: after its first write the latch is known set (it
 * is never removed), so sign-ins and personal-token requests, a hot path, write nothing more.
 */
export class PersonActedLatch {
  #set = false;
  async close(db: Db, how: 'sign_in' | 'personal_token'): Promise<void> {
    if (this.#set) return;
    await latchPersonActed(db, how);
    this.#set = true;
  }
}

/**
 * Writes an operator row's changed columns inside the caller's transaction; a role granted or an
 * account enabled may set the first admin up, so the latch is written with it.
 */
export async function writeOperatorUpdate(
  trx: Transaction<Database>,
  id: string,
  set: { name?: string; roles?: string; teams?: string; disabled?: number; updated_at: string },
): Promise<void> {
  await trx.updateTable('operators').set(set).where('id', '=', id).execute();
  await latchFirstAdminSetUp(trx);
}

/**
 * Whether the install's first admin is set up: the latch is set, or an enabled account holding
 * `admin` has a second factor now (then the latch is written: an install from before the latch).
 * Once true, true forever. From then on the bootstrap token makes no more people who decide (see
 * `refuseBootstrapAfterSetup`).
 */
export async function firstAdminSetUp(db: Db): Promise<boolean> {
  const latch = await db
    .selectFrom('meta')
    .select('key')
    .where('key', '=', FIRST_ADMIN_SET_UP_KEY)
    .executeTakeFirst();
  return latch !== undefined || (await latchFirstAdminSetUp(db));
}

/**
 * Four eyes means two people: once the first admin is set up, the shared bootstrap secret can no
 * longer create, promote or arm anyone who decides or administers (grant `approver` or `admin`,
 * enrol or remove a second factor, issue a personal token). Never returns on refusal: throws
 * FourEyesRefused naming account `target`, which the act's `auditRefusal` records.
 */
export async function refuseBootstrapAfterSetup(
  db: Db,
  by: Operator,
  target: string,
  what: string,
): Promise<void> {
  if (!isBootstrap(by)) return;
  if (await firstAdminSetUp(db)) {
    throw new FourEyesRefused(
      `the bootstrap admin token cannot ${what} once the first admin is set up: an admin does it as their own account`,
      target,
      'bootstrap_after_setup',
    );
  }
}

/**
 * The bootstrap token never issues a personal token for, nor enrols or replaces the second factor
 * of, a single sign-on account (kind `oidc`), latch or no latch: its identity provider holds its
 * credentials, and a credential the token minted would bypass it (attack round 11, F1). Read on
 * `db` (the caller's transaction when it writes). Never returns on refusal: throws
 * FourEyesRefused (`bootstrap_on_sso`), which the act's `auditRefusal` records.
 */
export async function refuseBootstrapOnSso(
  db: Db,
  by: Operator,
  id: string,
  what: string,
): Promise<void> {
  if (!isBootstrap(by)) return;
  const row = await db
    .selectFrom('operators')
    .select('kind')
    .where('id', '=', id)
    .executeTakeFirst();
  if (row?.kind !== 'oidc') return;
  throw new FourEyesRefused(
    `the bootstrap admin token cannot ${what} operator ${id}, a single sign-on account: its identity provider holds its credentials; the account issues its own tokens after signing in`,
    id,
    'bootstrap_on_sso',
  );
}

/** Whether a role list holds a role that decides (`approver`) or administers (`admin`). */
export function decides(roles: readonly OperatorRole[]): boolean {
  return roles.includes('approver') || roles.includes('admin');
}

/**
 * Once the first admin is set up, the bootstrap token changes nothing about an account that holds
 * a deciding role, or would hold one after the change: no enable or disable, password, name, teams,
 * roles, second factor or token. Accounts that decide nothing (auditor, owner) it still manages.
 * Read inside the caller's transaction, on the row it is about to change. Never returns on refusal.
 */
export async function refuseBootstrapOnDecider(
  db: Db,
  by: Operator,
  row: { id: string; roles: string },
  after: readonly OperatorRole[] | undefined,
  what: string,
): Promise<void> {
  if (!isBootstrap(by)) return;
  if (!decides(rolesOf(row.roles)) && !(after !== undefined && decides(after))) return;
  await refuseBootstrapAfterSetup(db, by, row.id, `${what} of an approver or an admin`);
}

/** The record of a completed sign-in, local (`password+totp`) or single sign-on (`oidc`). */
export function loggedIn(op: Operator) {
  return {
    action: 'operator.logged_in',
    subject: `operator:${op.id}`,
    details: { method: op.authenticatedBy },
  };
}

export function notFound(id: string): ToolgateError<'OPERATOR_NOT_FOUND'> {
  return new ToolgateError('OPERATOR_NOT_FOUND', `no operator ${id}`, { operatorId: id });
}

export function jsonList(text: string): string[] {
  const value: unknown = JSON.parse(text);
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

export function rolesOf(text: string): OperatorRole[] {
  return parseRoles(jsonList(text));
}

export function toView(row: NonNullable<OperatorRow>): OperatorView {
  return {
    id: row.id,
    name: row.name,
    roles: rolesOf(row.roles),
    teams: jsonList(row.teams),
    kind: row.kind,
    disabled: row.disabled === 1,
    has_password: row.password_hash !== null,
    email: row.email,
    created_at: row.created_at,
    created_by: row.created_by,
    updated_at: row.updated_at,
    set_up_by: row.set_up_by,
    confirmed: row.confirmed_by !== null,
    confirmed_by: row.confirmed_by,
    confirmed_at: row.confirmed_at,
  };
}

/** The operator authority's refusals, written as security events (`operator.forbidden`). */
export function auditedRefusals(db: Kysely<Database>, clock: Clock): OperatorRefusals {
  return {
    refused: ({ actor, event, subject, details }) =>
      appendEvent(db, actor, clock(), {
        action: event ?? 'operator.forbidden',
        subject,
        details,
      }),
  };
}

/** The columns of `operator_tokens` a TokenView is made of. */
export const TOKEN_VIEW_COLUMNS = [
  'id',
  'operator_id',
  'name',
  'roles',
  'created_at',
  'created_by',
  'expires_at',
  'revoked_at',
] as const;

export function tokenView(row: {
  id: string;
  operator_id: string;
  name: string;
  roles: string;
  created_at: string;
  created_by: string;
  expires_at: string;
  revoked_at: string | null;
}): TokenView {
  return {
    id: row.id,
    operator_id: row.operator_id,
    name: row.name,
    roles: rolesOf(row.roles),
    created_at: row.created_at,
    created_by: row.created_by,
    expires_at: row.expires_at,
    revoked_at: row.revoked_at,
  };
}

/**
 * A token's name as given, trimmed: 1–100 characters that read as what they are, the operator
 * display-name rule (isPrintableName; attack round 14, Q3). It is set by the token's holder and
 * read by an admin deciding which token to revoke, so a newline or a bidi override could forge a
 * row of that listing.
 */
export function parseTokenName(name: unknown): string {
  if (typeof name !== 'string' || name.trim() === '' || name.length > 100) {
    throw new ToolgateError('INPUT_INVALID', 'a token name of 1–100 characters', {
      problems: [problem('/name', 'a token name of 1–100 characters', 'maxLength')],
    });
  }
  return printableName(name, 'token name');
}

export function parseDays(days: unknown): number {
  if (
    typeof days !== 'number' ||
    !Number.isInteger(days) ||
    days < MIN_TOKEN_DAYS ||
    days > MAX_TOKEN_DAYS
  ) {
    throw new ToolgateError(
      'INPUT_INVALID',
      `a token expires in ${MIN_TOKEN_DAYS} to ${MAX_TOKEN_DAYS} days`,
      {
        problems: [
          problem(
            '/expires_in_days',
            `an integer from ${MIN_TOKEN_DAYS} to ${MAX_TOKEN_DAYS}`,
            'range',
          ),
        ],
      },
    );
  }
  return days;
}

/**
 * After a successful sign-in only: a password hash of an earlier algorithm (scrypt) or cost is
 * replaced by an Argon2id hash at `params`, unless the hash changed meanwhile (a password set
 * between this sign-in's read and now stays).
 */
export async function rehashAfterSignIn(
  db: Kysely<Database>,
  row: { readonly id: string; readonly password_hash: string | null },
  password: string,
  params: Argon2Params,
): Promise<void> {
  const stored = row.password_hash;
  if (stored === null || !needsRehash(stored, params)) return;
  const hash = await hashPassword(password, params);
  await db
    .updateTable('operators')
    .set({ password_hash: hash })
    .where('id', '=', row.id)
    .where('password_hash', '=', stored)
    .execute();
}
