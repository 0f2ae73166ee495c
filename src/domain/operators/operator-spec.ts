/**
 * @module What an operator account may be: the id's shape and the reserved ids, roles (a
 * non-empty subset of OPERATOR_ROLES), teams, and the id a single sign-on identity maps to.
 * Everything an admin sends is checked here before it reaches a row.
 */
import { createHash } from 'node:crypto';
import { isPrintableName, type Problem, problem, ToolgateError } from '../../core/index.js';
import {
  BOOTSTRAP_ACTOR_ID,
  DEMO_SEED_OPERATOR_ID,
  OPERATOR_ROLES,
  type OperatorRole,
} from './operator.js';

export const OPERATOR_ID_PATTERN = /^[a-z][a-z0-9._-]{1,62}$/;
/**
 * Ids that name something other than a person: the bootstrap token, the gateway itself, the demo
 * seed's reviewer. Every actor the gateway records for itself is `system:*` (a colon no id holds)
 * or one of these.
 */
export const RESERVED_OPERATOR_IDS: readonly string[] = [
  BOOTSTRAP_ACTOR_ID,
  'bootstrap',
  'system',
  DEMO_SEED_OPERATOR_ID,
  // `/v1/operators/me` is the caller's own account.
  'me',
];
/** Single sign-on accounts are `oidc.<hash>`; a local account may not take such an id first. */
export const OIDC_ID_PREFIX = 'oidc.';
export const TEAM_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
export const MAX_TEAMS = 64;
export const MAX_NAME_LENGTH = 200;

function invalid(problems: Problem[]): ToolgateError<'INPUT_INVALID'> {
  return new ToolgateError('INPUT_INVALID', problems.map((p) => p.message).join('; '), {
    problems,
  });
}

/** Problems with an id a local account is to be created under (empty when it is fine). */
export function localIdProblems(id: unknown): Problem[] {
  if (typeof id !== 'string' || !OPERATOR_ID_PATTERN.test(id)) {
    return [
      problem(
        '/id',
        'an operator id is 2–63 characters: a lower-case letter, then a-z 0-9 . _ -',
        'pattern',
      ),
    ];
  }
  if (RESERVED_OPERATOR_IDS.includes(id) || id.startsWith(OIDC_ID_PREFIX)) {
    return [problem('/id', `operator id ${id} is reserved`, 'reserved')];
  }
  return [];
}

export function checkLocalId(id: unknown): asserts id is string {
  const problems = localIdProblems(id);
  if (problems.length > 0) throw invalid(problems);
}

/** A non-empty set of known roles, in catalogue order (so equal sets compare equal). */
export function parseRoles(roles: unknown, pointer = '/roles'): OperatorRole[] {
  if (!Array.isArray(roles) || roles.length === 0) {
    throw invalid([problem(pointer, 'at least one role', 'minItems')]);
  }
  const unknown = roles.filter((r) => !OPERATOR_ROLES.includes(r as OperatorRole));
  if (unknown.length > 0) {
    throw invalid([
      problem(
        pointer,
        `unknown role ${unknown.map(String).join(', ')}; roles are ${OPERATOR_ROLES.join(', ')}`,
        'enum',
      ),
    ]);
  }
  return OPERATOR_ROLES.filter((r) => roles.includes(r));
}

export function parseTeams(teams: unknown, pointer = '/teams'): string[] {
  if (!Array.isArray(teams) || teams.length > MAX_TEAMS) {
    throw invalid([problem(pointer, `a list of at most ${MAX_TEAMS} team names`, 'type')]);
  }
  const bad = teams.filter((t) => typeof t !== 'string' || !TEAM_PATTERN.test(t));
  if (bad.length > 0) {
    throw invalid([
      problem(pointer, 'a team name is 1–63 characters: a-z A-Z 0-9 . _ - (not first)', 'pattern'),
    ]);
  }
  return [...new Set(teams as string[])].sort();
}

/**
 * A display name as given, trimmed: 1–MAX_NAME_LENGTH characters that read as what they are, the
 * actor-id rule (isPrintableName: no bidi override, zero-width, default-ignorable, control or
 * private-use character, a visible one; attack round 13, P2). It is read beside the account's id
 * and recorded raw in the signed log.
 */
export function parseName(name: unknown, fallback: string): string {
  if (name === undefined) return fallback;
  if (typeof name !== 'string' || name.trim() === '' || name.length > MAX_NAME_LENGTH) {
    throw invalid([
      problem('/name', `a display name of 1–${MAX_NAME_LENGTH} characters`, 'maxLength'),
    ]);
  }
  return printableName(name, 'display name');
}

/**
 * `name` with ASCII spaces trimmed, when what is left reads as what it is (isPrintableName);
 * else INPUT_INVALID on `/name` (rule `name.printable`). Only ASCII spaces are trimmed: a byte
 * order mark or another blank at an end is refused, not silently dropped. The rule of every name
 * a person reads beside an operator's id: its display name, its tokens' names.
 */
export function printableName(name: string, what: string): string {
  const trimmed = name.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, '');
  if (!isPrintableName(trimmed)) {
    throw invalid([
      problem(
        '/name',
        `a ${what} of printable characters (no bidi controls, zero-width, blank-rendering or control characters)`,
        'name.printable',
      ),
    ]);
  }
  return trimmed;
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** RFC 4648 base32 (lower case, no padding). */
function base32(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/**
 * The account id of a single sign-on identity: `oidc.` and the first 16 characters of
 * base32(sha256(issuer + "\n" + subject)). Stable for the identity, the same on every replica,
 * and it says nothing about the person.
 */
export function oidcOperatorId(issuer: string, subject: string): string {
  const digest = createHash('sha256').update(`${issuer}\n${subject}`, 'utf8').digest();
  return `${OIDC_ID_PREFIX}${base32(digest).slice(0, 16)}`;
}
