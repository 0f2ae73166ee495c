/**
 * @module Console sessions (C19): a browser holds a random 32-byte id in a cookie; the database
 * every replica shares holds only its SHA-256, the operator it authenticated, an idle timeout and
 * an absolute end. Pending single sign-on logins are kept the same way and taken once. A session
 * remembers only who signed in and how: the account's enabled flag, roles, teams and name are
 * read from the operators table on every lookup, and disabling an account, changing its roles or
 * teams, or resetting its password or second factor ends its sessions (`endSessionsOf`).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { type Clock, systemClock } from '../../core/index.js';
import type { Database } from '../../records/store/index.js';
import { OPERATOR_ROLES, type Operator, type OperatorRole } from './operator.js';

export const DEFAULT_CONSOLE_IDLE_MS = 15 * 60 * 1000;
export const DEFAULT_CONSOLE_LIFETIME_MS = 8 * 3600 * 1000;
/** A session's last-seen time is written at most this often (not on every page view). */
const TOUCH_EVERY_MS = 5_000;

export interface ConsoleSessionGrant {
  /** The cookie's value: shown to the browser once, stored only hashed. */
  readonly secret: string;
  readonly expiresAt: string;
}

export interface ConsoleSessionView {
  readonly operator: Operator;
  /** A stable handle of the session that is not its secret (for CSRF tokens and logs). */
  readonly handle: string;
  readonly createdAt: string;
  readonly expiresAt: string;
}

function hashOf(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

function jsonList(text: string): string[] {
  const value: unknown = JSON.parse(text);
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/**
 * Ends every console session of `operatorId`, inside the transaction that disables the account,
 * changes its roles or teams, or resets a credential of it: for every replica at once.
 */
export async function endSessionsOf(
  trx: Kysely<Database> | Transaction<Database>,
  operatorId: string,
): Promise<void> {
  await trx.deleteFrom('console_sessions').where('operator_id', '=', operatorId).execute();
}

function parseOperator(text: string): Operator | null {
  const v = JSON.parse(text) as Partial<Operator>;
  if (typeof v.id !== 'string' || typeof v.name !== 'string') return null;
  const roles = (v.roles ?? []).filter((r): r is OperatorRole =>
    (OPERATOR_ROLES as readonly string[]).includes(r),
  );
  const auth = v.authenticatedBy;
  if (
    auth !== 'bootstrap' &&
    auth !== 'password+totp' &&
    auth !== 'password+passkey' &&
    auth !== 'oidc' &&
    auth !== 'personal-token'
  )
    return null;
  return Object.freeze({
    id: v.id,
    name: v.name,
    roles: Object.freeze(roles),
    teams: Object.freeze([...(v.teams ?? [])].map(String)),
    authenticatedBy: auth,
  });
}

export class ConsoleSessions {
  readonly #db: Kysely<Database>;
  readonly #clock: Clock;

  constructor(db: Kysely<Database>, clock: Clock = systemClock) {
    this.#db = db;
    this.#clock = clock;
  }

  /**
   * A new session for an operator who just authenticated. The caller revokes the browser's old
   * session first (rotation at login): an id planted before login never becomes a session.
   */
  async create(
    operator: Operator,
    options: { idleMs?: number; lifetimeMs?: number } = {},
  ): Promise<ConsoleSessionGrant> {
    const now = this.#clock();
    const secret = randomBytes(32).toString('base64url');
    const expiresAt = new Date(
      now.getTime() + (options.lifetimeMs ?? DEFAULT_CONSOLE_LIFETIME_MS),
    ).toISOString();
    await this.#db
      .insertInto('console_sessions')
      .values({
        id_hash: hashOf(secret),
        operator: JSON.stringify(operator),
        operator_id: operator.id,
        created_at: now.toISOString(),
        last_seen_at: now.toISOString(),
        idle_ms: Math.round(options.idleMs ?? DEFAULT_CONSOLE_IDLE_MS),
        expires_at: expiresAt,
      })
      .execute();
    return { secret, expiresAt };
  }

  /**
   * The live session a cookie names, its activity noted, with the operator as the store has the
   * account now (name, roles, teams); null when unknown, idle, over, or when the account is gone
   * or disabled (the session is then deleted). What was true at sign-in decides nothing.
   */
  async lookup(secret: string): Promise<ConsoleSessionView | null> {
    if (secret.length === 0 || secret.length > 128) return null;
    const idHash = hashOf(secret);
    const row = await this.#db
      .selectFrom('console_sessions as s')
      .leftJoin('operators as o', 'o.id', 's.operator_id')
      .selectAll('s')
      .select([
        'o.id as account_id',
        'o.name as account_name',
        'o.roles as account_roles',
        'o.teams as account_teams',
        'o.disabled as account_disabled',
      ])
      .where('s.id_hash', '=', idHash)
      .executeTakeFirst();
    if (!row) return null;
    const now = this.#clock().getTime();
    const lastSeen = Date.parse(row.last_seen_at);
    const signedIn = parseOperator(row.operator);
    if (
      now >= Date.parse(row.expires_at) ||
      now - lastSeen >= Number(row.idle_ms) ||
      !signedIn ||
      row.account_id === null ||
      Number(row.account_disabled) === 1
    ) {
      await this.#db.deleteFrom('console_sessions').where('id_hash', '=', idHash).execute();
      return null;
    }
    const roles = jsonList(row.account_roles ?? '[]').filter((r): r is OperatorRole =>
      (OPERATOR_ROLES as readonly string[]).includes(r),
    );
    const operator: Operator = Object.freeze({
      id: row.account_id,
      name: row.account_name ?? row.account_id,
      roles: Object.freeze(roles),
      teams: Object.freeze(jsonList(row.account_teams ?? '[]')),
      authenticatedBy: signedIn.authenticatedBy,
    });
    if (now - lastSeen >= TOUCH_EVERY_MS) {
      await this.#db
        .updateTable('console_sessions')
        .set({ last_seen_at: new Date(now).toISOString() })
        .where('id_hash', '=', idHash)
        .execute();
    }
    return { operator, handle: idHash, createdAt: row.created_at, expiresAt: row.expires_at };
  }

  /** Logout: the session is gone for every replica at once. */
  async revoke(secret: string): Promise<void> {
    await this.#db.deleteFrom('console_sessions').where('id_hash', '=', hashOf(secret)).execute();
  }

  /** Keeps a pending single sign-on login until its callback; returns the browser's handle. */
  async beginLogin(pending: unknown, ttlMs: number): Promise<string> {
    const secret = randomBytes(32).toString('base64url');
    await this.#db
      .insertInto('console_logins')
      .values({
        id_hash: hashOf(secret),
        pending: JSON.stringify(pending ?? null),
        expires_at: new Date(this.#clock().getTime() + ttlMs).toISOString(),
      })
      .execute();
    return secret;
  }

  /** The pending login of this handle, taken once (a replayed callback finds nothing). */
  async takeLogin(secret: string): Promise<{ pending: unknown } | null> {
    if (secret.length === 0 || secret.length > 128) return null;
    const idHash = hashOf(secret);
    const row = await this.#db
      .selectFrom('console_logins')
      .selectAll()
      .where('id_hash', '=', idHash)
      .executeTakeFirst();
    if (!row) return null;
    const taken = await this.#db
      .deleteFrom('console_logins')
      .where('id_hash', '=', idHash)
      .executeTakeFirst();
    if (Number(taken.numDeletedRows) !== 1) return null;
    if (this.#clock().getTime() >= Date.parse(row.expires_at)) return null;
    return { pending: JSON.parse(row.pending) as unknown };
  }

  /** Removes sessions and logins past their end (serve's housekeeping). */
  async sweep(): Promise<number> {
    const now = this.#clock().toISOString();
    const a = await this.#db
      .deleteFrom('console_sessions')
      .where('expires_at', '<=', now)
      .executeTakeFirst();
    const b = await this.#db
      .deleteFrom('console_logins')
      .where('expires_at', '<=', now)
      .executeTakeFirst();
    return Number(a.numDeletedRows) + Number(b.numDeletedRows);
  }
}
