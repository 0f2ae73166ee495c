/**
 * @module From an ID token's verified claims to an operator's roles and teams, by the configured
 * claim paths. Deny by default: a value that is not mapped gives nothing.
 */
import { OPERATOR_ROLES, type OperatorRole } from '../operator.js';

const MAX_VALUES = 200;
const MAX_VALUE_LENGTH = 256;

/** The strings at a dotted path (`realm_access.roles`): a string, or the strings of an array. */
export function claimValues(claims: Readonly<Record<string, unknown>>, path: string): string[] {
  let at: unknown = claims;
  for (const key of path.split('.')) {
    if (typeof at !== 'object' || at === null || Array.isArray(at)) return [];
    // Own properties only: a claim named `__proto__` or `constructor` reaches nothing inherited.
    if (!Object.hasOwn(at, key)) return [];
    at = (at as Record<string, unknown>)[key];
  }
  const values = typeof at === 'string' ? [at] : Array.isArray(at) ? at : [];
  return values
    .filter(
      (v): v is string => typeof v === 'string' && v.length > 0 && v.length <= MAX_VALUE_LENGTH,
    )
    .slice(0, MAX_VALUES);
}

export function mapRoles(
  values: readonly string[],
  roleMap: Readonly<Record<string, OperatorRole>> | undefined,
): OperatorRole[] {
  const roles = new Set<OperatorRole>();
  for (const v of values) {
    if (roleMap) {
      if (Object.hasOwn(roleMap, v)) {
        const role = roleMap[v];
        if (role) roles.add(role);
      }
    } else if ((OPERATOR_ROLES as readonly string[]).includes(v)) {
      roles.add(v as OperatorRole);
    }
  }
  // In the catalogue's order, so the same claims always give the same list.
  return OPERATOR_ROLES.filter((r) => roles.has(r));
}

export function mapTeams(values: readonly string[]): string[] {
  return [...new Set(values)].sort();
}
