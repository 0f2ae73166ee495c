/**
 * @module What a staged audit record may hold on PostgreSQL (docs/architecture.md §5, "The audit
 * log across replicas", "Tampering"): the kind of each `audit_log` column as the migrations made
 * it (test/store/audit-staging-values.test.ts holds this against the migrated schema), and the
 * check that a staged record's JSON is one whose every value its column holds as given. A value
 * PostgreSQL refuses (an integer out of int4's range or a fraction there, NUL in text, a missing
 * NOT NULL column) would fail the integration's insert and so roll back every replica's records,
 * again at each try; one it would store as another value (a lone surrogate, which the driver's
 * UTF-8 makes U+FFFD; a number in a text column, stored as its digits) would be hashed as one
 * value and read back as another. Such a record is treated as content that is no audit record.
 */
import type { UnchainedRow } from '../audit-append.js';

/** A column's kind on PostgreSQL, and whether it is NOT NULL. */
export interface ColumnKind {
  readonly kind: 'text' | 'int4' | 'int8' | 'float8';
  readonly required: boolean;
}

const text = (required = false): ColumnKind => ({ kind: 'text', required });

/** Every `audit_log` column but the chain's own (seq, prev_hash, hash). */
export const AUDIT_COLUMN_KINDS: Readonly<Record<string, ColumnKind>> = {
  at: text(true),
  kind: text(true),
  call_id: text(),
  trace_id: text(),
  session_id: text(),
  run_id: text(),
  agent_id: text(),
  user_id: text(),
  tool_id: text(),
  tool_version: text(),
  args_hash: text(),
  args_redacted: text(),
  decision: text(true),
  code: text(),
  rule: text(),
  message: text(),
  approval_id: text(),
  approver: text(),
  egress_host: text(),
  // `integer` (migration 0001): PostgreSQL's int4.
  bytes_out: { kind: 'int4', required: false },
  // `real` made `double precision` by the audit chain (migration 0008).
  duration_ms: { kind: 'float8', required: false },
  outcome: text(),
  model: text(),
  details: text(true),
};

const REQUIRED = Object.entries(AUDIT_COLUMN_KINDS).filter(([, c]) => c.required);

/** No lone surrogate (ES2024's String.prototype.isWellFormed, native in every Node we run on). */
const wellFormed = (s: string): boolean =>
  (s as unknown as { isWellFormed(): boolean }).isWellFormed();

const INT4_MIN = -(2 ** 31);
const INT4_MAX = 2 ** 31 - 1;

/** Whether `value` is what a column of `column`'s kind holds and gives back as it is. */
function holds(column: ColumnKind, value: unknown): boolean {
  if (value === null) return !column.required;
  switch (column.kind) {
    case 'text':
      // NUL is no character in PostgreSQL's text; a lone surrogate is no UTF-8.
      return typeof value === 'string' && !value.includes('\u0000') && wellFormed(value);
    case 'int4':
      return (
        Number.isInteger(value) && (value as number) >= INT4_MIN && (value as number) <= INT4_MAX
      );
    case 'int8':
      return Number.isSafeInteger(value);
    case 'float8':
      // JSON's 1e400 parses to Infinity, which double precision would take and JSON cannot hash.
      return typeof value === 'number' && Number.isFinite(value);
  }
}

/**
 * A staged record's columns, or null when its JSON is not one: an object of known columns only,
 * each value one its column holds as given, and every NOT NULL column there.
 */
export function recordOf(text: string): UnchainedRow | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const row = value as Record<string, unknown>;
  for (const key of Object.keys(row)) {
    const column = Object.hasOwn(AUDIT_COLUMN_KINDS, key) ? AUDIT_COLUMN_KINDS[key] : undefined;
    if (column === undefined || !holds(column, row[key])) return null;
  }
  for (const [key, column] of REQUIRED) if (!holds(column, row[key] ?? null)) return null;
  return row as UnchainedRow;
}
