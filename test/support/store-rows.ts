/**
 * @module Rows for store tests: unchained audit rows (every column, the way the audit writer
 * fills them) and operator accounts as an older schema stored them, for the migration tests.
 */
import assert from 'node:assert/strict';
import type { Kysely } from 'kysely';
import type { Database, Store, UnchainedRow } from '../../src/records/store/index.js';
import { type Backend, unmigrated } from './backends.js';

export function auditRows(n: number, tag: string): UnchainedRow[] {
  return Array.from({ length: n }, (_, i) => ({
    at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    kind: 'call.denied',
    call_id: `call_${tag}_${i}`,
    trace_id: `call_${tag}_${i}`,
    session_id: `ses_${tag}`,
    run_id: null,
    agent_id: 'agent_conformance',
    user_id: null,
    tool_id: 'weather_lookup',
    tool_version: '1.0.0',
    args_hash: null,
    args_redacted: JSON.stringify({ city: 'Oslo' }),
    decision: 'deny',
    code: 'POLICY_DENIED',
    rule: 'conformance',
    message: `refused ${i}`,
    approval_id: null,
    approver: null,
    egress_host: null,
    bytes_out: i,
    duration_ms: i / 3,
    outcome: null,
    model: null,
    details: JSON.stringify({ i, tag }),
  }));
}

const at = '2026-01-01T00:00:00.000Z';

/** A local operator account row as migrations before 0037 stored it, created by the token. */
export const operatorRow = (id: string, roles: string[], disabled = 0) => ({
  id,
  name: id,
  roles: JSON.stringify(roles),
  teams: '[]',
  kind: 'local' as const,
  disabled,
  password_hash: null,
  oidc_issuer: null,
  oidc_subject: null,
  email: null,
  created_at: at,
  created_by: 'admin-token',
  updated_at: at,
});

/**
 * A fresh database of `backend` migrated up to `to`, holding `accounts`; `old` is still open on
 * it for more rows (destroy it before opening the store), `drop` removes it.
 */
export async function migratedTo(
  backend: Backend,
  to: string,
  accounts: ReturnType<typeof operatorRow>[],
): Promise<{ url: string; drop: () => Promise<void>; old: Kysely<Database> }> {
  const { url, drop } = await backend.fresh();
  const { old, migrator } = unmigrated(backend, url);
  assert.ifError((await migrator.migrateTo(to)).error);
  for (const a of accounts) await old.insertInto('operators').values(a).execute();
  return { url, drop, old };
}

/** The value of one `meta` key, if set. */
export async function metaValue(store: Store, key: string): Promise<string | undefined> {
  const row = await store.db
    .selectFrom('meta')
    .select('value')
    .where('key', '=', key)
    .executeTakeFirst();
  return row?.value;
}
