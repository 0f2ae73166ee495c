/**
 * @module What replicas on one database share so that work done once for the fleet holds for all
 * of them (docs/architecture.md §5, "Replicas that agree"): the latest outcome of each tool
 * version's probe, written by the elected prober and read by every replica's health monitor; and
 * the owner notices sent per team, which the per-team hourly cap counts across replicas.
 */
import type { Kysely, Migration } from 'kysely';

export const fleetState: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('tool_probe_outcomes')
      .addColumn('tool_id', 'text', (c) => c.notNull())
      .addColumn('version', 'text', (c) => c.notNull())
      .addColumn('probed_at', 'text', (c) => c.notNull())
      .addColumn('ok', 'integer', (c) => c.notNull())
      .addColumn('latency_ms', 'integer', (c) => c.notNull())
      .addColumn('rule', 'text')
      .addPrimaryKeyConstraint('tool_probe_outcomes_pk', ['tool_id', 'version'])
      .execute();
    await db.schema
      .createIndex('tool_probe_outcomes_probed_at')
      .on('tool_probe_outcomes')
      .column('probed_at')
      .execute();
    await db.schema
      .createTable('owner_notice_sends')
      .addColumn('team', 'text', (c) => c.notNull())
      .addColumn('sent_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('owner_notice_sends_team')
      .on('owner_notice_sends')
      .columns(['team', 'sent_at'])
      .execute();
  },
};
