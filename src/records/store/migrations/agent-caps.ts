/**
 * @module Per-agent caps count an agent's open sessions and pending approvals on every open and every
 * approval request; list pages walk approvals by (created_at, id). Indexes keep those off a scan.
 */
import type { Kysely, Migration } from 'kysely';

export const agentCaps: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createIndex('sessions_agent_status')
      .on('sessions')
      .columns(['agent_id', 'status'])
      .execute();
    await db.schema
      .createIndex('approvals_agent_status')
      .on('approvals')
      .columns(['agent_id', 'status'])
      .execute();
    await db.schema
      .createIndex('approvals_page')
      .on('approvals')
      .columns(['created_at', 'id'])
      .execute();
  },
};
