/**
 * @module The error the store throws when its data itself is damaged (an SQLite file that is not
 * a database or whose pages are malformed; PostgreSQL data or index corruption). Not a wire error:
 * the audit verifier reports it as a finding. It lives in core so that whoever reports it (the
 * audit log, the CLI) recognises it without importing the store: docs/architecture.md §7.
 */

export class StoreCorruptError extends Error {
  override readonly name = 'StoreCorruptError';
  /** The driver's code (`SQLITE_CORRUPT`, `SQLITE_NOTADB`, `XX001`…), kept for the report. */
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

export function isStoreCorrupt(err: unknown): err is StoreCorruptError {
  return err instanceof StoreCorruptError;
}
