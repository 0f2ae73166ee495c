/**
 * @module What a passkey signs for each kind of decision (core/decision-commitment.ts), built from
 * the stored decision alone — the same function when the desk issues the challenge, when it
 * checks the answer, and when `toolgate decisions verify` rebuilds it offline from a backup — so
 * an assertion verifies only for the decision that is stored (docs/architecture.md §6).
 */
import type { Kysely, Transaction } from 'kysely';
import { canonicalHash, type DecisionSubject } from '../../core/index.js';
import type {
  ApprovalRow,
  ChangeRequestRow,
  Database,
  SecurityReviewRow,
} from '../../records/store/index.js';
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

/** The fields of a security review its commitment covers. */
export type ReviewFields = Pick<
  SecurityReviewRow,
  'id' | 'tool_id' | 'version' | 'definition_hash'
>;

/**
 * A security review: its id (`rev_…`), the tool and version reviewed and the definition hash the
 * review binds to (the stored definition, which names the code hash and egress hosts), the
 * verdict (`approved` signs `approve`, `rejected` signs `reject`) and the reviewer.
 */
export function reviewSubject(
  row: ReviewFields,
  approver: string,
  decision: DecisionSubject['decision'],
): DecisionSubject {
  return {
    kind: 'review',
    id: row.id,
    tool: row.tool_id,
    version: row.version,
    args_hash: row.definition_hash,
    decision,
    approver,
  };
}
