/**
 * @module Personal API tokens of operators: `tgo_` and 256 random bits (43 base64url characters).
 * Only the token's SHA-256 is stored (a slow hash adds nothing for a random 256-bit secret); the
 * lookup by that hash is the one indexed read a REST request costs.
 */
import { createHash, randomBytes } from 'node:crypto';

const TOKEN_RE = /^tgo_[A-Za-z0-9_-]{43}$/;
export const MIN_TOKEN_DAYS = 1;
export const MAX_TOKEN_DAYS = 366;

export function generatePersonalToken(): { id: string; token: string; hash: string } {
  const token = `tgo_${randomBytes(32).toString('base64url')}`;
  return { id: `otk_${randomBytes(12).toString('base64url')}`, token, hash: hashToken(token) };
}

/** Whether a bearer credential has the shape of a personal token (else it is not looked up). */
export function isPersonalToken(token: string): boolean {
  return TOKEN_RE.test(token);
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
