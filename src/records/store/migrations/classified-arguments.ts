/**
 * @module Migration 0034: the classified store (`call_arguments`) learns whose call each row is
 * (agent, user, tool), so an erasure can find a user's calls, and gets indexes for the retention
 * sweep (by time) and for erasure by user. The audit log itself is not touched — its records are
 * chained and cannot be rewritten — but the first sequence number written under the masked rule is
 * kept in `meta` (`audit_masked_from`): records before it may hold argument values as they were
 * recorded then (docs/security-model.md, "Personal data and the audit log"). The same statements
 * serve both dialects (`cast(… as text)` and `coalesce` are common to SQLite and PostgreSQL).
 */
import { type Kysely, type Migration, sql } from 'kysely';

export const classifiedArguments: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    for (const column of ['agent_id', 'user_id', 'tool_id']) {
      await db.schema.alterTable('call_arguments').addColumn(column, 'text').execute();
    }
    await db.schema.createIndex('call_arguments_at').on('call_arguments').column('at').execute();
    await db.schema
      .createIndex('call_arguments_user')
      .on('call_arguments')
      .columns(['user_id', 'at'])
      .execute();
    await sql`insert into meta (key, value)
      select 'audit_masked_from', cast(coalesce(max(seq), 0) + 1 as text) from audit_log`.execute(
      db,
    );
  },
};
