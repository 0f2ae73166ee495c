/**
 * @module What a passkey signs for each kind of decision (core/decision-commitment.ts), built from
 * the stored decision alone — the same function when the desk issues the challenge, when it
 * checks the answer, and when `toolgate decisions verify` rebuilds it offline from a backup — so
 * an assertion verifies only for the decision that is stored (docs/architecture.md §6).
 */
import type { Kysely, Transaction } from 'kysely';
import { canonicalHash, type DecisionSubject } from '../../core/index.js';
import type { ApprovalRow, ChangeRequestRow, Database } from '../../records/store/index.js';
import { type ScopeTerms, scopeHash } from './approval-scopes.js';

/**
 * An approval of a call: its id, tool, version and canonical-argument hash, and — given with a
 * scope — the hash of the scope's terms, so the signature covers the scope too.
 */
export function approvalSubject(
  row: Pick<ApprovalRow, 'id' | 'tool_id' | 'tool_version' | 'args_hash'>,
  approver: string,
  decision: DecisionSubject['decision'] = 'approve',
  scope?: ScopeTerms,
): DecisionSubject {
  return {
    kind: 'approval',
    id: row.id,
    tool: row.tool_id,
    version: row.tool_version,
    args_hash: row.args_hash,
    decision,
    approver,
    ...(scope === undefined ? {} : { scope: scopeHash(scope) }),
  };
}

/** The fields of a change request its commitment covers. */
export type ChangeFields = Pick<
  ChangeRequestRow,
  | 'id'
  | 'kind'
  | 'agent_id'
  | 'capability'
  | 'tool_id'
  | 'tool_version'
  | 'required'
  | 'requested_by'
  | 'created_at'
>;

/**
 * A four-eyes change: a tool's activation (its tool, version and stored definition hash) or a
 * grant (the agent and capability), with who requested it and when, hashed canonically.
 */
export function changeSubjectOf(
  row: ChangeFields,
  definitionHash: string | null,
  approver: string,
  decision: DecisionSubject['decision'] = 'approve',
): DecisionSubject {
  const grant = row.kind === 'grant';
  return {
    kind: 'change',
    id: row.id,
    tool: grant ? `agent:${row.agent_id ?? ''}` : (row.tool_id ?? ''),
    version: grant ? (row.capability ?? '') : (row.tool_version ?? ''),
    args_hash: canonicalHash({
      kind: row.kind,
      agent_id: row.agent_id,
      capability: row.capability,
      tool_id: row.tool_id,
      tool_version: row.tool_version,
      definition_hash: definitionHash,
      required: row.required,
      requested_by: row.requested_by,
      created_at: row.created_at,
    }),
    decision,
    approver,
  };
}

/** The definition hash a tool change activates (null for a grant, or a version not stored). */
export async function changeDefinitionHash(
  db: Kysely<Database> | Transaction<Database>,
  row: ChangeFields,
): Promise<string | null> {
  if (row.kind !== 'tool' || !row.tool_id || !row.tool_version) return null;
  const found = await db
    .selectFrom('tool_versions')
    .select('definition_hash')
    .where('tool_id', '=', row.tool_id)
    .where('version', '=', row.tool_version)
    .executeTakeFirst();
  return found?.definition_hash ?? null;
}

/** changeSubjectOf with the definition hash read from the store. */
export async function changeSubject(
  db: Kysely<Database> | Transaction<Database>,
  row: ChangeFields,
  approver: string,
  decision: DecisionSubject['decision'] = 'approve',
): Promise<DecisionSubject> {
  return changeSubjectOf(row, await changeDefinitionHash(db, row), approver, decision);
}

/** A security review of one definition: `tool@version` and the definition hash reviewed. */
export function reviewSubject(
  toolId: string,
  version: string,
  definitionHash: string,
  approver: string,
  decision: DecisionSubject['decision'] = 'approve',
): DecisionSubject {
  return {
    kind: 'review',
    id: `${toolId}@${version}`,
    tool: toolId,
    version,
    args_hash: definitionHash,
    decision,
    approver,
  };
}
