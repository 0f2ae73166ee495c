/**
 * @module What the migrations ask of the database they run on, where the two dialects differ: an
 * auto-increment key, append-only triggers, and the audit chain's conversion of the log. Each
 * dialect answers in its own folder (sqlite/migration-sql.ts, postgres/migration-sql.ts); the
 * migrations themselves (migrations/) are one text for both (docs/architecture.md §5).
 */
import type { ColumnDataType, ColumnDefinitionBuilder, Kysely } from 'kysely';

export type Dialect = 'sqlite' | 'postgres';

/** Every dialect, for a value read from outside (a backup's manifest) to be checked against. */
export const DIALECTS: readonly Dialect[] = ['sqlite', 'postgres'];

/** A table whose rows may be added and never changed or removed. */
export interface AppendOnlyTable {
  readonly table: string;
  /** The triggers' name prefix: `<prefix>_no_update`, … */
  readonly prefix: string;
  /** The refusal's message. */
  readonly message: string;
  /**
   * The refusing function, where the dialect needs one (PostgreSQL), and whether this table
   * creates it (the first table that uses it) or reuses it.
   */
  readonly guard: { readonly name: string; readonly create: boolean };
}

export interface MigrationSql {
  readonly dialect: Dialect;
  /** The column type of an auto-increment integer key. */
  readonly serialType: ColumnDataType;
  /** Makes a column of `serialType` the table's auto-increment primary key. */
  serialKey(column: ColumnDefinitionBuilder): ColumnDefinitionBuilder;
  /** Refuses every update and delete of the table's rows (and a truncate, where there is one). */
  appendOnly(db: Kysely<unknown>, spec: AppendOnlyTable): Promise<void>;
  /**
   * Before the audit chain rewrites the log's rows: the update guard goes (and durations become
   * exact where the column type would change them).
   */
  openAuditLogForChain(db: Kysely<unknown>): Promise<void>;
  /** After: the update guard comes back, and a row without its chain is refused from now on. */
  closeAuditLogAfterChain(db: Kysely<unknown>): Promise<void>;
  /**
   * What charging counters needs of the database (counter-charge.ts): PostgreSQL's server-side
   * function; nothing on SQLite, which charges in a transaction of plain statements.
   */
  counterCharge(db: Kysely<unknown>): Promise<void>;
  /**
   * Keeps vacuum from truncating the audit staging table (PostgreSQL: `vacuum_truncate = off`,
   * whose AccessExclusive lock every staging would wait on); nothing on SQLite.
   */
  keepStagingUntruncated(db: Kysely<unknown>): Promise<void>;
}
