/**
 * @module What each named configuration set last declared (C18, docs/architecture.md §2): one row
 * per object a set's `apply` declared, so `apply --prune` narrows or removes exactly what that set
 * declared before and no longer does, and never an object made by other means or by another set.
 */
import type { Kysely, Migration } from 'kysely';

export const appliedObjects: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('applied_objects')
      .addColumn('set_name', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('applied_at', 'text', (c) => c.notNull())
      .addColumn('applied_by', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('applied_objects_pk', ['set_name', 'kind', 'subject'])
      .execute();
  },
};
