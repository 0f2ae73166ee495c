/**
 * @module Whose an approval is (C8, docs/operators-and-approvals.md "An approval belongs to the
 * principal"): the whole principal of the run it was asked in — agent, user and credential, as
 * that run's row holds them — never the run alone. A retry from another run of the same principal
 * (a client that reconnected: a new MCP session, a new default run) finds it; anyone else — another
 * agent, another user, the same agent with another key — never does, whatever the arguments.
 */
import type { Kysely, Transaction } from 'kysely';
import type { ApprovalRow, Database } from '../../records/store/index.js';

/** The principal an approval belongs to, as a run's row holds it (null: none). */
export interface ApprovalOwner {
  readonly agentId: string;
  readonly userId: string | null;
  readonly credential: string | null;
}

/** The call an approval would cover: its owner, tool, version and canonical-argument hash. */
export interface ApprovalKey extends ApprovalOwner {
  readonly toolId: string;
  readonly toolVersion: string;
  readonly argsHash: string;
}

/** An approval row with the principal of the run it was asked in. */
export type OwnedApprovalRow = ApprovalRow & {
  readonly run_agent: string | null;
  readonly run_user: string | null;
  readonly run_credential: string | null;
};

type Db = Kysely<Database> | Transaction<Database>;

/** Approval rows joined with their run's principal (a row whose run is gone has none). */
function owned(db: Db) {
  return db
    .selectFrom('approvals')
    .leftJoin('sessions', 'sessions.id', 'approvals.session_id')
    .selectAll('approvals')
    .select([
      'sessions.agent_id as run_agent',
      'sessions.user_id as run_user',
      'sessions.credential as run_credential',
    ]);
}

/** Exact comparison of every part, nulls included; a row without a run is nobody's. */
export function isOwnedBy(row: OwnedApprovalRow, owner: ApprovalOwner): boolean {
  return (
    row.run_agent !== null &&
    row.agent_id === owner.agentId &&
    row.run_agent === owner.agentId &&
    row.run_user === owner.userId &&
    row.run_credential === owner.credential
  );
}

/** One approval with its run's principal, or undefined. */
export async function ownedApproval(db: Db, id: string): Promise<OwnedApprovalRow | undefined> {
  return (await owned(db).where('approvals.id', '=', id).executeTakeFirst()) as
    | OwnedApprovalRow
    | undefined;
}

/**
 * The approvals of exactly this call in `statuses`, in any run of the same principal, oldest
 * first. Narrowed in SQL by agent, tool, version and hash; the principal compared exactly here.
 */
export async function approvalsOfCall(
  db: Db,
  key: ApprovalKey,
  statuses: readonly string[],
): Promise<OwnedApprovalRow[]> {
  const rows = (await owned(db)
    .where('approvals.agent_id', '=', key.agentId)
    .where('approvals.tool_id', '=', key.toolId)
    .where('approvals.tool_version', '=', key.toolVersion)
    .where('approvals.args_hash', '=', key.argsHash)
    .where('approvals.status', 'in', [...statuses])
    .orderBy('approvals.created_at')
    .orderBy('approvals.id')
    .execute()) as OwnedApprovalRow[];
  return rows.filter((row) => isOwnedBy(row, key));
}
