/**
 * @module Users: the people agents act for. A user's permissions bound what a session on their
 * behalf may do, whatever the agent's own grants (C4: at most what both may do). A user is held
 * by its id in one of the two forms of user-id.ts: a local id, or an OAuth user's
 * `oauth:["<issuer>","<subject>"]` (held so that an admin can disable that one person of that
 * one issuer; an OAuth user's permissions come from its token's scopes).
 */
import type { Kysely, Transaction } from 'kysely';
import {
  type Actor,
  CAPABILITY_PATTERN,
  type Clock,
  canonicalHash,
  type Problem,
  problem,
  systemClock,
  ToolgateError,
} from '../../core/index.js';
import { appendEvent, bumpIdentityRevision, type Database } from '../../records/store/index.js';
import { displayNameProblems, refuseUnreadable } from './readable-text.js';
import { isUserId } from './user-id.js';

export interface UserSpec {
  readonly id: string;
  readonly display_name?: string;
  /** Capabilities the user may exercise through any agent; `*` is not a wildcard. */
  readonly permissions: readonly string[];
  readonly enabled?: boolean;
}

export interface UserView {
  readonly id: string;
  readonly display_name: string;
  readonly permissions: readonly string[];
  readonly enabled: boolean;
}

export const userSpecSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'permissions'],
  properties: {
    // A local id, or an OAuth user's `oauth:[…]` (checked exactly by isUserId when applied).
    id: {
      type: 'string',
      minLength: 1,
      maxLength: 2500,
      pattern: '^(?:[A-Za-z0-9][A-Za-z0-9_.@+-]{0,199}|oauth:\\[.*\\])$',
    },
    display_name: { type: 'string', minLength: 1, maxLength: 200 },
    permissions: {
      type: 'array',
      maxItems: 200,
      uniqueItems: true,
      items: { type: 'string', pattern: CAPABILITY_PATTERN, maxLength: 100 },
    },
    enabled: { type: 'boolean' },
  },
} as const;

/** What userSpecSchema cannot say: the display name is printable (readable-text.ts). */
export function userSpecTextProblems(spec: UserSpec): Problem[] {
  return displayNameProblems(spec.display_name, '/display_name');
}

export class UserService {
  readonly #db: Kysely<Database>;
  readonly #clock: Clock;

  constructor(db: Kysely<Database>, clock: Clock = systemClock) {
    this.#db = db;
    this.#clock = clock;
  }

  async upsertIn(
    trx: Transaction<Database>,
    spec: UserSpec,
    actor: Actor,
  ): Promise<'created' | 'updated' | 'unchanged'> {
    if (!isUserId(spec.id)) {
      throw new ToolgateError(
        'INPUT_INVALID',
        'the user id is neither a local id nor an OAuth user',
        {
          problems: [
            problem(
              '/id',
              'must match ^[A-Za-z0-9][A-Za-z0-9_.@+-]{0,199}$ or be oauth:["<issuer>","<subject>"]',
              'pattern',
            ),
          ],
        },
      );
    }
    refuseUnreadable(userSpecTextProblems(spec));
    const now = this.#clock();
    const normalized = {
      id: spec.id,
      display_name: spec.display_name ?? spec.id,
      permissions: [...spec.permissions].sort(),
      enabled: spec.enabled ?? true,
    };
    const hash = canonicalHash(normalized);
    const before = await trx
      .selectFrom('users')
      .select('spec_hash')
      .where('id', '=', spec.id)
      .executeTakeFirst();
    if (before?.spec_hash === hash) return 'unchanged';
    const values = {
      display_name: normalized.display_name,
      permissions: JSON.stringify(normalized.permissions),
      enabled: normalized.enabled ? 1 : 0,
      spec_hash: hash,
      updated_at: now.toISOString(),
    };
    if (before) await trx.updateTable('users').set(values).where('id', '=', spec.id).execute();
    else
      await trx
        .insertInto('users')
        .values({ id: spec.id, created_at: now.toISOString(), ...values })
        .execute();
    await bumpIdentityRevision(trx);
    await appendEvent(trx, actor, now, {
      action: before ? 'user.updated' : 'user.created',
      subject: `user:${spec.id}`,
      details: { spec: normalized },
    });
    return before ? 'updated' : 'created';
  }

  /**
   * Disables a user (apply --prune); declaring the user again enables it (the spec hash is
   * cleared). False when the user is unknown or already disabled.
   */
  async disableIn(
    trx: Transaction<Database>,
    id: string,
    actor: Actor,
    reason: string,
  ): Promise<boolean> {
    const now = this.#clock();
    const done = await trx
      .updateTable('users')
      .set({ enabled: 0, spec_hash: '', updated_at: now.toISOString() })
      .where('id', '=', id)
      .where('enabled', '=', 1)
      .executeTakeFirst();
    if (Number(done.numUpdatedRows) === 0) return false;
    await bumpIdentityRevision(trx);
    await appendEvent(trx, actor, now, {
      action: 'user.disabled',
      subject: `user:${id}`,
      details: { reason },
    });
    return true;
  }

  /** An enabled user, or USER_NOT_FOUND (disabled users are not found either). */
  async get(id: string): Promise<UserView> {
    const row = await this.#db
      .selectFrom('users')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    if (row?.enabled !== 1)
      throw new ToolgateError('USER_NOT_FOUND', `no enabled user ${id}`, { userId: id });
    return {
      id: row.id,
      display_name: row.display_name,
      permissions: JSON.parse(row.permissions) as string[],
      enabled: true,
    };
  }

  /**
   * Whether toolgate holds this user and has disabled them. A user vouched for by a JWT need not
   * be in the users table, but one an admin disabled is refused on every path.
   */
  async disabled(id: string): Promise<boolean> {
    const row = await this.#db
      .selectFrom('users')
      .select('enabled')
      .where('id', '=', id)
      .executeTakeFirst();
    return row !== undefined && row.enabled !== 1;
  }

  async list(): Promise<UserView[]> {
    const rows = await this.#db.selectFrom('users').selectAll().orderBy('id').execute();
    return rows.map((r) => ({
      id: r.id,
      display_name: r.display_name,
      permissions: JSON.parse(r.permissions) as string[],
      enabled: r.enabled === 1,
    }));
  }
}
