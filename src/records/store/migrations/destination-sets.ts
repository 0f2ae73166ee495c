/**
 * @module Live destination sets and their members (docs/architecture.md §5): a tool's `destinations`
 * rule may name one; keyed by set and normalised value, so a membership test is one primary-key
 * read and a repeated add is ignored.
 */
import { type Kysely, type Migration, sql } from 'kysely';

export const destinationSets: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('destination_sets')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('source', 'text', (c) => c.notNull().check(sql`source in ('admin','directory')`))
      .addColumn('directory', 'text')
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('refreshed_at', 'text')
      .execute();
    await db.schema
      .createTable('destination_set_members')
      .addColumn('set_name', 'text', (c) =>
        c.notNull().references('destination_sets.name').onDelete('cascade'),
      )
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('added_at', 'text', (c) => c.notNull())
      .addColumn('added_by', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('destination_set_members_pk', ['set_name', 'value'])
      .execute();
  },
};
