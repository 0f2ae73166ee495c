/**
 * @module The keyset condition of a newest-first page by `(created_at, id)`: the rows strictly
 * after the last one shown. One row-value comparison, which SQLite and PostgreSQL both evaluate
 * (and both use a `(created_at, id)` index for), so every such list pages the same way.
 */
import { type RawBuilder, type SqlBool, sql } from 'kysely';

/** Rows older than the entry `(createdAt, id)`, in the table the query selects from. */
export function olderThan(createdAt: string, id: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`(created_at, id) < (${createdAt}, ${id})`;
}
