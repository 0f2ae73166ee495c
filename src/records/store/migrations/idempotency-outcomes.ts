/**
 * @module Migration 0036: an idempotency record keeps how its call ended when it failed (code,
 * rule and message, so a retry is answered with the same failure and never runs it again) and the
 * time by which a claimed call must have ended (claim time + the tool's wall time + a grace): a
 * claim past it with no outcome is "outcome unknown", never "still running" (docs/security-model.md,
 * "Idempotency and the client SDK").
 */
import type { Kysely, Migration } from 'kysely';

export const idempotencyOutcomes: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('idempotency').addColumn('failure', 'text').execute();
    await db.schema.alterTable('idempotency').addColumn('run_by', 'text').execute();
    await db.schema.alterTable('idempotency').addColumn('trust', 'text').execute();
  },
};
