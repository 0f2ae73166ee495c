/**
 * @module When a session was last used: the order in which an agent's full session cap ends one
 * for a smaller holder (least recently used first, agent-caps.ts); null: not since it opened.
 */
import type { Kysely, Migration } from 'kysely';

export const sessionLastUsed: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('sessions').addColumn('last_used_at', 'text').execute();
  },
};
