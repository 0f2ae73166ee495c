/**
 * @module Where instruction-like text entered a run, for the reviewer (docs/architecture.md §3,
 * step `approval`): one row per flagged result — its call, tool, time, the scan's rules and a
 * short bounded excerpt of the flagged string. The injection marks of `destination_literals`
 * say which runs and principals it reached (by call id); this says what it was.
 */
import type { Kysely, Migration } from 'kysely';

export const injectionTexts: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('injection_texts')
      .addColumn('call_id', 'text', (c) => c.primaryKey())
      .addColumn('tool_id', 'text', (c) => c.notNull())
      .addColumn('at', 'text', (c) => c.notNull())
      .addColumn('rules', 'text', (c) => c.notNull())
      .addColumn('excerpt', 'text')
      .execute();
  },
};
