/**
 * @module Migration `0016_second_factors`: operators' TOTP secrets as data. One row per enrolled
 * operator, the secret sealed with the gateway's master key (AES-256-GCM, as the secrets store
 * does) and read on every check, so every replica sees an enrolment at once; `last_step` is the
 * newest TOTP step accepted for that operator, so one code is good for one use anywhere.
 */
import type { Kysely, Migration } from 'kysely';

export const secondFactors: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('operator_second_factors')
      .addColumn('operator_id', 'text', (c) => c.primaryKey())
      // Bound into the ciphertext's associated data: an older row restored over a newer fails.
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('nonce', 'text', (c) => c.notNull())
      .addColumn('ciphertext', 'text', (c) => c.notNull())
      .addColumn('tag', 'text', (c) => c.notNull())
      .addColumn('last_step', 'bigint')
      .addColumn('enrolled_at', 'text', (c) => c.notNull())
      .addColumn('enrolled_by', 'text', (c) => c.notNull())
      .execute();
  },
};
