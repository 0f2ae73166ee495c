/**
 * @module The console's audit explorer finds records by agent and tool, by time, and lists the alerts.
 * Each index keys on `(column, seq)` or on `at`, which grows with seq, so a group commit adds at
 * the right edge of each value's range (a few pages per distinct agent or tool in the batch, never
 * one random page per row); alerts have a partial index that call records never touch. Users,
 * decisions and rules narrow these (or a walk by seq): every index here costs each group commit.
 */
import { type Kysely, type Migration, sql } from 'kysely';

export const pagesAuditSearch: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    for (const column of ['agent_id', 'tool_id']) {
      await db.schema
        .createIndex(`audit_${column}_seq`)
        .on('audit_log')
        .columns([column, 'seq'])
        .execute();
    }
    await db.schema.createIndex('audit_at').on('audit_log').column('at').execute();
    await db.schema
      .createIndex('audit_alerts')
      .on('audit_log')
      .column('seq')
      .where(sql.ref('kind'), '=', 'alert')
      .execute();
  },
};
