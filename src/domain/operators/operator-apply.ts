/**
 * @module Operator accounts as configuration (`kind: Operator`, docs/configuration.md): what an
 * account is without a secret (id, name, roles, teams, disabled), its JSON Schema, and its write
 * inside an apply's transaction through the very writes of `operators create` and `operators
 * update` (operator-writes.ts), so a file is held to every rule they keep. A document never
 * carries a password, a hash, a second factor, a passkey or a token: such a field is refused by
 * name (never by value), and those are set the ways made for them, each handed over and audited.
 */
import type { Transaction } from 'kysely';
import { type Actor, type Problem, problem, ToolgateError } from '../../core/index.js';
import type { Database } from '../../records/store/index.js';
import { isBootstrap, OPERATOR_ROLES, type Operator, type OperatorRole } from './operator.js';
import {
  decides,
  forbidden,
  jsonList,
  type OperatorUpdate,
  refuseBootstrapOnDecider,
  requireAdmin,
  rolesOf,
  selectOperator,
} from './operator-records.js';
import {
  checkLocalId,
  localIdProblems,
  MAX_NAME_LENGTH,
  MAX_TEAMS,
  OPERATOR_ID_PATTERN,
  parseName,
  parseRoles,
  parseTeams,
  TEAM_PATTERN,
} from './operator-spec.js';
import {
  checkUpdate,
  insertOperatorIn,
  OWN_ACCOUNT_DISABLED,
  updateOperatorIn,
} from './operator-writes.js';
import { FourEyesRefused } from './refusal-audit.js';

/** An account as a configuration document declares it: nothing in it is a secret. */
export interface OperatorDocument {
  readonly id: string;
  /** Default: the id. */
  readonly name?: string;
  readonly roles: readonly OperatorRole[];
  /** Default: none. */
  readonly teams?: readonly string[];
  /** Default: false (declaring a disabled account again enables it). */
  readonly disabled?: boolean;
}

export const operatorDocumentSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'roles'],
  description:
    'An operator account without secrets: a password, second factor or token is never part of a document.',
  properties: {
    id: { type: 'string', pattern: OPERATOR_ID_PATTERN.source },
    name: { type: 'string', minLength: 1, maxLength: MAX_NAME_LENGTH },
    roles: {
      type: 'array',
      minItems: 1,
      uniqueItems: true,
      items: { enum: [...OPERATOR_ROLES] },
    },
    teams: {
      type: 'array',
      maxItems: MAX_TEAMS,
      items: { type: 'string', pattern: TEAM_PATTERN.source },
    },
    disabled: { type: 'boolean' },
  },
} as const;

/**
 * Field names that carry or stand for a credential: refused with a message that says how the
 * credential is set instead. Matched on the lower-cased name with `_` and `-` dropped, as a part
 * of it, so `password_hash`, `totpSecret` and `api-key` are all caught; the schema refuses every
 * other unknown field.
 */
const CREDENTIAL_WORDS = [
  'password',
  'passwd',
  'passphrase',
  'hash',
  'secret',
  'totp',
  'otp',
  'secondfactor',
  'mfa',
  'passkey',
  'webauthn',
  'token',
  'apikey',
  'credential',
  'recovery',
  'privatekey',
] as const;

/**
 * The credential-like fields of a spec, as problems that name the field and never its value
 * (rule `operator.credential`). Empty for anything that is not an object.
 */
export function operatorCredentialProblems(spec: unknown): Problem[] {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) return [];
  return Object.keys(spec)
    .filter((key) => {
      const folded = key.toLowerCase().replace(/[_-]/g, '');
      return CREDENTIAL_WORDS.some((w) => folded.includes(w));
    })
    .map((key) =>
      problem(
        `/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`,
        `an Operator document carries no credential, so field ${JSON.stringify(key.slice(0, 64))} is refused: set a password with \`toolgate operators set-password ID\` (value on stdin), a second factor with \`toolgate approvers enroll ID\`, a personal token with \`toolgate operators token issue\``,
        'operator.credential',
      ),
    );
}

/** What a document cannot be beyond its schema: a reserved or single sign-on id. */
export function operatorDocumentProblems(spec: OperatorDocument): Problem[] {
  return localIdProblems(spec.id);
}

/** What applying one document did: its outcome and, for people, what changed. */
export interface OperatorApplied {
  readonly outcome: 'created' | 'updated' | 'unchanged';
  readonly said: readonly string[];
}

/**
 * Makes local account `doc.id` what the document declares, as `by` (an admin), inside the apply's
 * transaction: created with `operators create`'s write, or changed with `operators update`'s,
 * only in what differs (an admin's own account declared as it is stays untouched, while a change
 * of one's own roles or disabling oneself is refused as it is there). INPUT_INVALID with pointers
 * relative to the spec; FORBIDDEN (FourEyesRefused, HandOverRefused) for a rule of four eyes.
 */
export async function applyOperatorIn(
  trx: Transaction<Database>,
  by: Operator,
  doc: OperatorDocument,
  via: Actor['via'],
  now: Date,
): Promise<OperatorApplied> {
  requireAdmin(by);
  checkLocalId(doc.id);
  const roles = parseRoles(doc.roles);
  const teams = parseTeams(doc.teams ?? []);
  const name = parseName(doc.name, doc.id);
  const disabled = doc.disabled ?? false;
  const row = await selectOperator(trx, doc.id);
  if (!row) {
    await insertOperatorIn(
      trx,
      by,
      { id: doc.id, name, roles, teams, passwordHash: null },
      via,
      now,
    );
    if (disabled) {
      await updateOperatorIn(trx, by, doc.id, checkUpdate(doc.id, { disabled }), via, now);
    }
    const said = [
      `created (${roles.join(', ')}${teams.length > 0 ? `; teams ${teams.join(', ')}` : ''}${disabled ? '; disabled' : ''}): no password or second factor yet`,
    ];
    return { outcome: 'created', said: [...said, ...(await unconfirmed(trx, doc.id, roles))] };
  }
  if (row.kind !== 'local') {
    throw new ToolgateError('INPUT_INVALID', 'not a local account', {
      problems: [
        problem('/id', `operator ${doc.id} signs in with single sign-on`, 'operator.kind'),
      ],
    });
  }
  const change: { -readonly [K in keyof OperatorUpdate]: OperatorUpdate[K] } = {};
  if (row.name !== name) change.name = name;
  if (rolesOf(row.roles).join(',') !== roles.join(',')) change.roles = roles;
  if (jsonList(row.teams).join(',') !== teams.join(',')) change.teams = teams;
  if ((row.disabled === 1) !== disabled) change.disabled = disabled;
  if (Object.keys(change).length === 0) return { outcome: 'unchanged', said: [] };
  await updateOperatorIn(trx, by, doc.id, checkUpdate(doc.id, change), via, now);
  const said = Object.entries(change).map(([k, v]) =>
    k === 'disabled'
      ? v
        ? 'disabled'
        : 'enabled'
      : `${k} ${Array.isArray(v) ? v.join(', ') || 'none' : String(v)}`,
  );
  return { outcome: 'updated', said: [...said, ...(await unconfirmed(trx, doc.id, roles))] };
}

/** A note when the account decides but is not confirmed (now, after the write). */
async function unconfirmed(
  trx: Transaction<Database>,
  id: string,
  roles: readonly OperatorRole[],
): Promise<string[]> {
  if (!decides(roles)) return [];
  const row = await selectOperator(trx, id);
  if (!row || row.confirmed_by !== null) return [];
  return [
    `unconfirmed: counts in no two-person decision until another confirmed approver or admin confirms it (toolgate operators confirm ${id})`,
  ];
}

/**
 * Disables account `id` as `by` with `operators update`'s write and every rule of it (never one's
 * own account; the bootstrap token, once the first admin is set up, never a decider's); false
 * when there is no such account or it is disabled already. Never deletes an account: its records
 * keep naming it.
 */
export async function disableOperatorIn(
  trx: Transaction<Database>,
  by: Operator,
  id: string,
  via: Actor['via'],
  now: Date,
  reason: string,
): Promise<boolean> {
  requireAdmin(by);
  const row = await selectOperator(trx, id);
  if (!row || row.disabled === 1) return false;
  const checked = checkUpdate(id, { disabled: true });
  await updateOperatorIn(
    trx,
    by,
    id,
    { ...checked, details: { ...checked.details, reason } },
    via,
    now,
  );
  return true;
}

/**
 * Why a rule of four eyes would refuse `by` disabling account `id` now — the message
 * `disableOperatorIn` would refuse with — or null (also when there is nothing to disable). Reads
 * only, so a plan without `--prune` says what a prune would do (attack round 22, Y3).
 */
export async function disableRefusalIn(
  trx: Transaction<Database>,
  by: Operator,
  id: string,
): Promise<string | null> {
  const row = await selectOperator(trx, id);
  if (!row || row.disabled === 1) return null;
  if (!isBootstrap(by) && by.id === id) return OWN_ACCOUNT_DISABLED;
  try {
    await refuseBootstrapOnDecider(trx, by, row, undefined, 'change the account');
  } catch (err) {
    if (err instanceof FourEyesRefused) return err.message;
    throw err;
  }
  return null;
}

/** FORBIDDEN naming who may apply operator documents: admins only. */
export function applyOperatorsForbidden(by: Operator | undefined): ToolgateError<'FORBIDDEN'> {
  return forbidden(
    by
      ? `operator ${by.id} is not an admin: only an admin applies Operator documents`
      : 'Operator documents are applied as an admin account: over REST, with the CLI, or with the library option `operator`',
    ['admin'],
  );
}
