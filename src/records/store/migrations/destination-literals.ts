/**
 * @module Destination-like literals first seen in a run's untrusted results, by hash (docs/architecture.md
 * §3): a later sending or state-changing call carrying one is escalated. Keyed by run and hash, so
 * the lookup of a call's candidates is one index range and a repeated sighting is ignored.
 */
import type { Kysely, Migration } from 'kysely';

export const destinationLiterals: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('destination_literals')
      .addColumn('run_id', 'text', (c) => c.notNull())
      .addColumn('hash', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('tool_id', 'text', (c) => c.notNull())
      .addColumn('call_id', 'text', (c) => c.notNull())
      .addColumn('first_seen_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('destination_literals_pk', ['run_id', 'hash'])
      .execute();
  },
};
