/**
 * @module The bootstrap admin credential: a random bearer token kept in a file readable only by
 * its owner (or given by TOOLGATE_ADMIN_TOKEN). Compared in constant time; never logged.
 */

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  foreignOwner,
  MAX_SECRET_FILE_BYTES,
  makePrivateDirs,
  readBoundedFile,
  regularFileStats,
} from '../../core/index.js';

const MIN_TOKEN_LENGTH = 24;

export function generateAdminToken(): string {
  return `tga_${randomBytes(32).toString('base64url')}`;
}

/**
 * The token kept in `path`; null when there is no such file (a start creates it). Refuses a file
 * another user owns, others can read, or that holds a short token. Never creates anything: what
 * `toolgate config check` runs too.
 */
export function readAdminToken(path: string, option = 'admin token file'): string | null {
  if (!existsSync(path)) return null;
  // A token others can read is a token others have: refuse it rather than serve with it.
  const stats = regularFileStats(path, option);
  const foreign = foreignOwner(stats, `admin token file ${path}`);
  if (foreign !== null) throw new Error(foreign);
  if ((stats.mode & 0o077) !== 0) {
    throw new Error(`admin token file ${path} is readable by group or others: chmod 600 ${path}`);
  }
  const token = readBoundedFile(path, { option, maxBytes: MAX_SECRET_FILE_BYTES }).trim();
  if (token.length < MIN_TOKEN_LENGTH) {
    throw new Error(`admin token in ${path} is shorter than ${MIN_TOKEN_LENGTH} characters`);
  }
  return token;
}

/** Reads the token file, creating it (mode 0600) with a fresh token on first start. */
export function loadOrCreateAdminToken(
  path: string,
  option = 'admin token file',
): { token: string; created: boolean } {
  const kept = readAdminToken(path, option);
  if (kept !== null) return { token: kept, created: false };
  makePrivateDirs(dirname(path));
  const token = generateAdminToken();
  writeFileSync(path, `${token}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(path, 0o600);
  return { token, created: true };
}

export function checkAdminTokenStrength(token: string): void {
  if (token.length < MIN_TOKEN_LENGTH) {
    throw new Error(`the admin token must be at least ${MIN_TOKEN_LENGTH} characters`);
  }
}

/** Constant-time comparison of a presented bearer token with the expected one. */
export function adminTokenMatches(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}
