/**
 * @module The operator accounts' one lock (attack round 22, Y9; docs/operators-and-approvals.md
 * "Two admins at the same moment"): every write of an account, and every apply as an operator,
 * takes it first in its transaction (Store.lockKey: a PostgreSQL advisory lock; SQLite's writes
 * run alone anyway), then reads its author's own account again (INVARIANTS 2: authority is read
 * when it is used, not when the request began) and, after the write, whether an enabled admin
 * remains. Two admins disabling or demoting each other at once thus run one after the other: the
 * second reads that its author was disabled or lost `admin` and is refused, and no change leaves
 * the install without an enabled admin.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Actor } from '../../core/index.js';
import { type Database, LOCK_CLASSES, lockKeyIn } from '../../records/store/index.js';
import { isBootstrap, type Operator } from './operator.js';
import { jsonList, rolesOf, selectOperator } from './operator-records.js';
import { FourEyesRefused } from './refusal-audit.js';

type Trx = Transaction<Database>;

/**
 * Takes the accounts' lock for the rest of `trx` (first, before any other lock of it: an
 * `appendEvent` takes the audit chain's), then refuses an author who, since the request was
 * authenticated, was disabled or lost a role or team it was authenticated with: FORBIDDEN,
 * audited as `operator.four_eyes_refused` with reason `actor_disabled` or
 * `actor_changed` (subject: the author's account). The bootstrap token has no account to read;
 * nor does a library caller, who names the operator it acts as and holds the data folder anyway
 * (the documented way back when no admin can act), nor an operator with no account at all (every
 * authenticated one has its row, and accounts are never deleted: a caller in-process named it).
 */
export async function holdAccountsIn(trx: Trx, by: Operator, via: Actor['via']): Promise<void> {
  await lockKeyIn(trx, LOCK_CLASSES.operators, 'accounts');
  if (isBootstrap(by) || via === 'library') return;
  const row = await selectOperator(trx, by.id);
  if (!row) return;
  if (row.disabled === 1) {
    throw new FourEyesRefused(
      `operator ${by.id} was disabled before this change could be made; nothing was changed`,
      by.id,
      'actor_disabled',
    );
  }
  const roles = rolesOf(row.roles);
  const teams = jsonList(row.teams);
  const lost = [
    ...by.roles.filter((r) => !roles.includes(r)),
    ...by.teams.filter((t) => !teams.includes(t)).map((t) => `team ${t}`),
  ];
  if (lost.length > 0) {
    throw new FourEyesRefused(
      `operator ${by.id} no longer holds ${lost.join(', ')}: the account changed before this change could be made; nothing was changed`,
      by.id,
      'actor_changed',
    );
  }
}

/** The enabled accounts holding `admin`, by id, read in the caller's transaction. */
export async function enabledAdmins(trx: Trx): Promise<string[]> {
  const rows = await trx
    .selectFrom('operators')
    .select(['id', 'roles'])
    .where('disabled', '=', 0)
    .where('roles', 'like', '%"admin"%')
    .orderBy('id')
    .execute();
  return rows.filter((r) => rolesOf(r.roles).includes('admin')).map((r) => r.id);
}

/**
 * Refuses a write that leaves no enabled admin account where there was one (`before`, read under
 * the accounts' lock before it): FORBIDDEN, audited as a four-eyes refusal `last_admin`. `what`
 * names the write in the message: an apply (one file can change many accounts, so it is checked
 * on the result) or one account's change.
 */
export async function keepAnAdminIn(
  trx: Trx,
  before: readonly string[],
  what: 'apply' | 'change',
): Promise<void> {
  if (before.length === 0 || (await enabledAdmins(trx)).length > 0) return;
  throw new FourEyesRefused(
    `this ${what} would leave no enabled admin account (it disables or demotes ${before.join(', ')}); keep at least one`,
    before[0] ?? '',
    'last_admin',
  );
}

/**
 * Runs `work` in one transaction that holds the accounts' lock, its author read again first
 * (`holdAccountsIn`): how every write of an operator account begins.
 */
export function writeAccounts<T>(
  db: Kysely<Database>,
  by: Operator,
  via: Actor['via'],
  work: (trx: Trx) => Promise<T>,
): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await holdAccountsIn(trx, by, via);
    return work(trx);
  });
}
