/**
 * @module The audit log keeps only indexes whose keys grow in order (seq, and call_id now that call ids
 * sort by time): a group commit then touches the right edge of each B-tree, a few pages, instead
 * of one random page per row per index. Lookups by leaf hash go through the Merkle tree the audit
 * log keeps in memory (its leaves are these hashes, in seq order); nothing read by session.
 */
import type { Kysely, Migration } from 'kysely';

export const auditIndexes: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropIndex('audit_hash').ifExists().execute();
    await db.schema.dropIndex('audit_session').ifExists().execute();
  },
};
