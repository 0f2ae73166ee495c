/**
 * @module Opening a four-eyes change request (C4) inside the caller's transaction: what the change
 * desk does for a grant, and what the catalog's `ChangeRequester` port does for a gated tool it
 * registers or activates. Needs only the store's transaction and a clock, so the catalog gets it
 * at construction, before the desk (which activates tools through the catalog) exists.
 */
import { randomBytes } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Actor, Clock } from '../../core/index.js';
import { appendEvent, type Database } from '../../records/store/index.js';
import type { ChangeRequester } from '../catalog/index.js';

/** A change waiting for approvers: a grant of a gated capability, or a gated tool version. */
export type RequestedChange =
  | { kind: 'grant'; agentId: string; capability: string }
  | { kind: 'tool'; toolId: string; version: string };

/** Opens a request inside the caller's transaction, unless the same one is already pending. */
export async function requestChangeIn(
  trx: Transaction<Database>,
  clock: Clock,
  change: RequestedChange,
  required: number,
  reason: string,
  actor: Actor,
  /** Who acted, when not the requester (a reviewer whose approval opened it): the record's actor. */
  by: Actor = actor,
): Promise<{ id: string; created: boolean }> {
  let q = trx
    .selectFrom('change_requests')
    .select('id')
    .where('status', '=', 'pending')
    .where('kind', '=', change.kind);
  q =
    change.kind === 'grant'
      ? q.where('agent_id', '=', change.agentId).where('capability', '=', change.capability)
      : q.where('tool_id', '=', change.toolId).where('tool_version', '=', change.version);
  const existing = await q.executeTakeFirst();
  if (existing) return { id: existing.id, created: false };
  const now = clock();
  const id = `chg_${randomBytes(10).toString('base64url')}`;
  await trx
    .insertInto('change_requests')
    .values({
      id,
      kind: change.kind,
      agent_id: change.kind === 'grant' ? change.agentId : null,
      capability: change.kind === 'grant' ? change.capability : null,
      tool_id: change.kind === 'tool' ? change.toolId : null,
      tool_version: change.kind === 'tool' ? change.version : null,
      required,
      status: 'pending',
      reason,
      requested_by: actor.id,
      created_at: now.toISOString(),
      decided_at: null,
    })
    .execute();
  await appendEvent(trx, by, now, {
    action: 'change.requested',
    subject: `change:${id}`,
    details: { ...change, required, reason, requested_by: actor.id },
  });
  return { id, created: true };
}

/** The pending requests to grant `capability` to `agentId` (at most one, by `requestChangeIn`). */
export async function pendingGrantChangesIn(
  trx: Transaction<Database>,
  agentId: string,
  capability: string,
): Promise<string[]> {
  const rows = await trx
    .selectFrom('change_requests')
    .select('id')
    .where('status', '=', 'pending')
    .where('kind', '=', 'grant')
    .where('agent_id', '=', agentId)
    .where('capability', '=', capability)
    .orderBy('id')
    .execute();
  return rows.map((r) => r.id);
}

/**
 * Withdraws the pending requests to grant `capability` to `agentId` (`apply --prune` of a grant no
 * longer declared): no approval can apply them any more. Each is audited (`change.withdrawn`).
 */
export async function withdrawGrantChangesIn(
  trx: Transaction<Database>,
  clock: Clock,
  agentId: string,
  capability: string,
  actor: Actor,
  reason: string,
): Promise<string[]> {
  const withdrawn: string[] = [];
  const now = clock();
  for (const id of await pendingGrantChangesIn(trx, agentId, capability)) {
    // Only a pending one: an approval that applied it first keeps it applied.
    const done = await trx
      .updateTable('change_requests')
      .set({ status: 'withdrawn', decided_at: now.toISOString() })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    if (Number(done.numUpdatedRows) !== 1) continue;
    await appendEvent(trx, actor, now, {
      action: 'change.withdrawn',
      subject: `change:${id}`,
      details: { kind: 'grant', agentId, capability, reason },
    });
    withdrawn.push(id);
  }
  return withdrawn;
}

/** The catalog's `ChangeRequester`: a gated tool version waits for its approvers. */
export function toolChangeRequester(clock: Clock): ChangeRequester {
  return async (trx, tool, required, actor, by) => {
    const reason = `registered ${tool.toolId}@${tool.version}`;
    const change = { kind: 'tool', ...tool } as const;
    return (await requestChangeIn(trx, clock, change, required, reason, actor, by)).id;
  };
}
