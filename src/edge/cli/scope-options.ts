/**
 * @module The CLI's words for a scoped approval (docs/operators-and-approvals.md, "Scoped
 * approvals"): `--scope-calls`, `--scope-amount` (major units, at most two decimals, read
 * exactly) and `--scope-until` (an ISO 8601 time, or minutes or hours from now), and the lines
 * that show a scope. The bounds themselves are the approval desk's to check.
 */
import { type ApprovalScopeView, type ScopeRequest, scopeWords } from '../../api/index.js';
import { problem, ToolgateError } from '../../core/index.js';

export interface ScopeFlags {
  readonly scopeCalls?: number;
  readonly scopeAmount?: string;
  readonly scopeUntil?: string;
}

function usage(flag: string, message: string): ToolgateError<'INPUT_INVALID'> {
  return new ToolgateError('INPUT_INVALID', `${flag} ${message}`, {
    problems: [problem(`/${flag.replace(/^--/, '')}`, message, 'cli.scope')],
  });
}

/** `12.5` → 1250 cents, exactly; anything else (a third decimal, a sign, an exponent) refused. */
function cents(text: string): number {
  const [whole = '', fraction = '', ...rest] = text.trim().split('.');
  const digits = (d: string) => d.length > 0 && [...d].every((c) => c >= '0' && c <= '9');
  if (
    rest.length > 0 ||
    !digits(whole) ||
    (fraction !== '' && !digits(fraction)) ||
    fraction.length > 2
  )
    throw usage('--scope-amount', 'must be an amount in major units with at most two decimals');
  const value = BigInt(whole) * 100n + BigInt(fraction.padEnd(2, '0'));
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw usage('--scope-amount', 'is too large');
  return Number(value);
}

/** An ISO 8601 time, or `<n>m` / `<n>h` from `now`. */
function until(text: string, now: Date): string {
  const t = text.trim();
  const unit = t.at(-1);
  const n = t.slice(0, -1);
  if ((unit === 'm' || unit === 'h') && n.length > 0 && [...n].every((c) => c >= '0' && c <= '9'))
    return new Date(now.getTime() + Number(n) * (unit === 'h' ? 3_600_000 : 60_000)).toISOString();
  return t;
}

/** The scope the flags ask for, or undefined for an approval of one call. */
export function scopeOptions(flags: ScopeFlags, now: Date): ScopeRequest | undefined {
  const any =
    flags.scopeCalls !== undefined ||
    flags.scopeAmount !== undefined ||
    flags.scopeUntil !== undefined;
  if (!any) return undefined;
  if (flags.scopeCalls === undefined)
    throw usage('--scope-calls', 'is needed with any other --scope option');
  if (flags.scopeUntil === undefined)
    throw usage('--scope-until', 'is needed with any other --scope option');
  return {
    calls: flags.scopeCalls,
    until: until(flags.scopeUntil, now),
    ...(flags.scopeAmount !== undefined ? { amount_cents: cents(flags.scopeAmount) } : {}),
  };
}

/** The scope in plain words, with what is used of it; nothing for an approval of one call. */
export function scopeLines(scope: ApprovalScopeView | null | undefined): string[] {
  if (!scope) return [];
  const used = `${scope.calls_used} of ${scope.calls} calls used${scope.amount_cents === null ? '' : `, ${scope.amount_used_cents} of ${scope.amount_cents} cents`}`;
  return [
    `scope (${scope.status}): ${scopeWords(scope)}`,
    `  ${used}; granted by ${scope.granted_by} at ${scope.granted_at}${scope.revoked_by ? `; revoked by ${scope.revoked_by} at ${scope.revoked_at ?? ''}: ${scope.revoke_reason ?? ''}` : ''}`,
  ];
}
