/**
 * @module The files a gateway keeps beside its database, shared by `serve` and the admin CLI so
 * that an approval given on the command line is honoured by the running gateway: the approval
 * and audit signing keys, created 0600 and refused when others can read them. Operators' second
 * factors are not files: they are sealed in the database (docs/architecture.md §6).
 */

import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type KeyFile, uidRangeFromEnv } from '../../api/index.js';
import {
  foreignOwner,
  MAX_SECRET_FILE_BYTES,
  makePrivateDirs,
  parseFileText,
  problem,
  readBoundedFile,
  regularFileStats,
  ToolgateError,
} from '../../core/index.js';
import {
  loadMasterKey,
  MASTER_KEY_FILE_NAME,
  type MasterKey,
} from '../../domain/credentials/index.js';
import { ApprovalSigner } from '../../domain/decisions/index.js';
import {
  type JwtConfig,
  type OAuthResourceServerConfig,
  parseOAuthConfig,
} from '../../domain/identity/index.js';
import { generateNoteSigner, NoteSigner } from '../../records/audit/index.js';

function privateFile(path: string): string | null {
  if (!existsSync(path)) return null;
  const stats = regularFileStats(path, 'key file');
  const foreign = foreignOwner(stats, path);
  if (foreign !== null) throw new ToolgateError('INPUT_INVALID', foreign, { problems: [] });
  if ((stats.mode & 0o077) !== 0) {
    throw new ToolgateError(
      'INPUT_INVALID',
      `${path} is readable by group or others: chmod 600 ${path}`,
      { problems: [] },
    );
  }
  return readBoundedFile(path, { option: 'key file', maxBytes: MAX_SECRET_FILE_BYTES });
}

const APPROVAL_KEY_FILE = 'approval-signing-key.pem';
export const AUDIT_KEY_FILE = 'audit-signing-key.pem';
export const ADMIN_TOKEN_FILE = 'admin-token';

/**
 * Every key file a data folder may hold, where each is read from now: the secrets' master key
 * (TOOLGATE_MASTER_KEY_FILE, else the data folder's), the approval and audit signing keys, the
 * bootstrap admin token (its file, when serve keeps it elsewhere). What `toolgate backup` keeps,
 * under these names, and `restore` writes back into a new data folder.
 */
export function dataFolderKeys(
  dataDir: string,
  adminTokenFile: string = join(dataDir, ADMIN_TOKEN_FILE),
  env: NodeJS.ProcessEnv = process.env,
): KeyFile[] {
  const masterKeyFile = env.TOOLGATE_MASTER_KEY_FILE;
  return [
    { name: MASTER_KEY_FILE_NAME, path: masterKeyFile || join(dataDir, MASTER_KEY_FILE_NAME) },
    { name: APPROVAL_KEY_FILE, path: join(dataDir, APPROVAL_KEY_FILE) },
    { name: AUDIT_KEY_FILE, path: join(dataDir, AUDIT_KEY_FILE) },
    { name: ADMIN_TOKEN_FILE, path: adminTokenFile },
  ];
}

/** A key file's key; a file that holds no such key (damaged, or another file) is refused by path. */
function keyOf<K>(path: string, pem: string, parse: (pem: string) => K): K {
  try {
    return parse(pem);
  } catch (err) {
    const why = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new ToolgateError(
      'INPUT_INVALID',
      `${path} holds no usable private key (${why}): restore it from a backup`,
      { problems: [] },
    );
  }
}

export function approvalSigner(dataDir: string): ApprovalSigner {
  const path = join(dataDir, APPROVAL_KEY_FILE);
  const pem = privateFile(path);
  if (pem) return keyOf(path, pem, (text) => ApprovalSigner.fromPem(text));
  makePrivateDirs(dataDir);
  const signer = ApprovalSigner.generate();
  try {
    // 'wx': if the server and the CLI create it at once, one wins and the other reads it.
    writeFileSync(path, signer.toPem(), { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as { code?: string }).code !== 'EEXIST') throw err;
    return keyOf(path, privateFile(path) ?? '', (text) => ApprovalSigner.fromPem(text));
  }
  return signer;
}

/** The audit log's Ed25519 checkpoint key, created on first use like the approval key. */
export function auditSigner(dataDir: string, name: string): NoteSigner {
  const path = join(dataDir, AUDIT_KEY_FILE);
  const pem = privateFile(path);
  if (pem) return keyOf(path, pem, (text) => NoteSigner.fromPem(name, text));
  makePrivateDirs(dataDir);
  const fresh = generateNoteSigner(name);
  try {
    writeFileSync(path, fresh.pem, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as { code?: string }).code !== 'EEXIST') throw err;
    return keyOf(path, privateFile(path) ?? '', (text) => NoteSigner.fromPem(name, text));
  }
  return fresh.signer;
}

/** JWT verification for agents, from TOOLGATE_JWT_* variables; null when not configured. */
/** Teams known to own tools (TOOLGATE_TEAMS, comma-separated), for the orphaned-tools report. */
export function teamsFromEnv(): string[] {
  return (process.env.TOOLGATE_TEAMS ?? '')
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t.length > 0);
}

/**
 * The admin's gateway-wide permission for loopback receivers of outbound URLs people configure
 * (owner channels, webhooks): TOOLGATE_OUTBOUND_ALLOW_LOOPBACK=1 (or `true`); `0`, `false` or
 * unset: not allowed. Any other value is refused: a security switch does not guess what `yes`
 * meant (attack round 22, Y6).
 */
export function outboundFromEnv(env: NodeJS.ProcessEnv = process.env): { allowLoopback: boolean } {
  const value = env.TOOLGATE_OUTBOUND_ALLOW_LOOPBACK?.trim() ?? '';
  if (value === '1' || value === 'true') return { allowLoopback: true };
  if (value === '' || value === '0' || value === 'false') return { allowLoopback: false };
  throw new ToolgateError(
    'INPUT_INVALID',
    'TOOLGATE_OUTBOUND_ALLOW_LOOPBACK must be 1 (allow loopback receivers) or 0 (refuse them)',
    {
      problems: [
        problem(
          '/TOOLGATE_OUTBOUND_ALLOW_LOOPBACK',
          'must be 1 (allow loopback receivers) or 0 (refuse them)',
          'settings.value',
        ),
      ],
    },
  );
}

/** The levels of the server's log (pino's), least to most verbose, and `silent`. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** TOOLGATE_LOG_LEVEL: one of LOG_LEVELS, default `warn`; another value refuses the start. */
export function logLevelFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  const value = env.TOOLGATE_LOG_LEVEL?.trim() ?? '';
  if (value === '') return 'warn';
  if ((LOG_LEVELS as readonly string[]).includes(value)) return value;
  throw new ToolgateError(
    'INPUT_INVALID',
    `TOOLGATE_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`,
    {
      problems: [
        problem('/TOOLGATE_LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`, 'settings.value'),
      ],
    },
  );
}

/** TOOLGATE_SANDBOX_UIDS checked now (`FIRST-LAST`), not at the first sandboxed run. */
export function sandboxUidsFromEnv(env: NodeJS.ProcessEnv = process.env): void {
  try {
    uidRangeFromEnv(env);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new ToolgateError('INPUT_INVALID', why, {
      problems: [problem('/TOOLGATE_SANDBOX_UIDS', why, 'settings.value')],
    });
  }
}

export function jwtConfigFromEnv(env: NodeJS.ProcessEnv = process.env): JwtConfig | null {
  const issuer = env.TOOLGATE_JWT_ISSUER;
  const audience = env.TOOLGATE_JWT_AUDIENCE;
  if (!issuer && !audience) return null;
  if (!issuer || !audience || (!env.TOOLGATE_JWKS_URL && !env.TOOLGATE_JWKS_FILE)) {
    throw new ToolgateError(
      'INPUT_INVALID',
      'JWT needs TOOLGATE_JWT_ISSUER, TOOLGATE_JWT_AUDIENCE and TOOLGATE_JWKS_URL or TOOLGATE_JWKS_FILE',
      { problems: [] },
    );
  }
  return {
    issuer,
    audience,
    ...(env.TOOLGATE_JWKS_URL ? { jwksUrl: env.TOOLGATE_JWKS_URL } : {}),
    ...(env.TOOLGATE_JWKS_FILE ? { jwksFile: env.TOOLGATE_JWKS_FILE } : {}),
    ...(env.TOOLGATE_JWT_AGENT_CLAIM ? { agentClaim: env.TOOLGATE_JWT_AGENT_CLAIM } : {}),
    ...(env.TOOLGATE_JWT_USER_CLAIM ? { userClaim: env.TOOLGATE_JWT_USER_CLAIM } : {}),
    ...(env.TOOLGATE_JWT_PERMISSIONS_CLAIM
      ? { permissionsClaim: env.TOOLGATE_JWT_PERMISSIONS_CLAIM }
      : {}),
  };
}

/**
 * The OAuth resource-server configuration named by TOOLGATE_OAUTH_CONFIG (a JSON or YAML file),
 * or null when unset. Checked whole at start: a wrong file stops the gateway with every problem.
 */
export function oauthConfigFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): OAuthResourceServerConfig | null {
  const file = env.TOOLGATE_OAUTH_CONFIG;
  if (!file) return null;
  const text = readBoundedFile(file, {
    option: 'TOOLGATE_OAUTH_CONFIG',
    maxBytes: MAX_SECRET_FILE_BYTES,
  });
  return parseOAuthConfig(parseFileText(text, `TOOLGATE_OAUTH_CONFIG ${file}`));
}

/**
 * The master key when one is configured (TOOLGATE_MASTER_KEY, TOOLGATE_MASTER_KEY_FILE) or kept
 * in the data folder, read and checked now: a start refuses a key it could not use, instead of
 * listening and failing every call that needs it. Null when none exists yet: the gateway makes
 * `master.key` on first use.
 */
export function existingMasterKey(env: NodeJS.ProcessEnv, dataDir: string): MasterKey | null {
  const configured = Boolean(env.TOOLGATE_MASTER_KEY || env.TOOLGATE_MASTER_KEY_FILE);
  if (!configured && !existsSync(join(dataDir, MASTER_KEY_FILE_NAME))) return null;
  return loadMasterKey({ dataDir, env });
}
