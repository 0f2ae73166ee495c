/**
 * @module The one encoding of a user's identity. A user is (issuer, subject): a user toolgate
 * holds itself (configured, named by an API-key agent's `on_behalf_of` or by the configured agent
 * JWT issuer) has a local id matching USER_ID_PATTERN; a user an OAuth authorization server
 * vouches for is `oauth:` followed by the JSON array `[issuer, subject]`. The two forms cannot
 * meet — a local id holds no `:`, `[` or `"` — and JSON keeps issuer and subject apart whatever
 * characters they hold, so two issuers' `alice` are two users everywhere the id is a key:
 * sessions and runs, idempotency records, rate and ceiling counters, flow marks, approvals and
 * audit records.
 */
import { isPrintableName } from '../../core/index.js';

/** A user toolgate holds itself: a letter or digit, then up to 199 of `A-Za-z0-9_.@+-`. */
export const USER_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.@+-]{0,199}$';

const localRe = new RegExp(USER_ID_PATTERN);
const OAUTH_PREFIX = 'oauth:';
/** An issuer is an https URL (resource-server-config.ts); a subject at most 200 characters. */
const MAX_ISSUER = 2000;
const MAX_SUBJECT = 200;

/** Whether `id` is a local user id (never an OAuth user's). */
export function isLocalUserId(id: string): boolean {
  return localRe.test(id);
}

/** The user id of `subject` at the authorization server `issuer`. Never a bare subject. */
export function oauthUserId(issuer: string, subject: string): string {
  return `${OAUTH_PREFIX}${JSON.stringify([issuer, subject])}`;
}

/**
 * The issuer and subject of an OAuth user id, or null for anything that is not exactly the
 * encoding oauthUserId makes (parse, then compare the re-encoding: one spelling per user).
 */
export function parseOAuthUserId(id: string): { issuer: string; subject: string } | null {
  if (!id.startsWith(OAUTH_PREFIX)) return null;
  let parts: unknown;
  try {
    parts = JSON.parse(id.slice(OAUTH_PREFIX.length));
  } catch {
    return null;
  }
  if (!Array.isArray(parts) || parts.length !== 2) return null;
  const [issuer, subject] = parts as unknown[];
  if (typeof issuer !== 'string' || typeof subject !== 'string') return null;
  if (issuer.length === 0 || issuer.length > MAX_ISSUER) return null;
  if (subject.length === 0 || subject.length > MAX_SUBJECT) return null;
  // As the access-token verifier takes it: a subject (or an issuer, attack round 16, S2) that
  // would read as something else is no one.
  if (!isPrintableName(subject) || !isPrintableName(issuer)) return null;
  return oauthUserId(issuer, subject) === id ? { issuer, subject } : null;
}

/** Whether `id` is a user id in one of the two forms. */
export function isUserId(id: string): boolean {
  return isLocalUserId(id) || parseOAuthUserId(id) !== null;
}
