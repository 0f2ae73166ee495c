/**
 * @module Which agents an owner's self-registered tool would be offered to (docs/security-model.md
 * "What an owner may reach"): every agent whose grants hold all the tool's required capabilities
 * (an owner registers public tools only, which every tier may use). A self-registration goes live
 * on its own only when each of them belongs to one of the owner's teams; anything else is a draft
 * that waits for a security review. Never decides anything for an admin's registration.
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../records/store/index.js';
import type { ToolDefinition } from './tool-definition.js';

/**
 * Whether the tool could be offered to an agent outside `teams`. A tool that requires no
 * capability reaches every agent, present and future: it always does. Disabled agents count (they
 * may be enabled again).
 */
export async function reachesOtherTeams(
  trx: Transaction<Database>,
  def: Pick<ToolDefinition, 'required_capabilities'>,
  teams: readonly string[],
): Promise<boolean> {
  const required = [...new Set(def.required_capabilities)];
  if (required.length === 0) return true;
  const grants = await trx
    .selectFrom('grants')
    .select(['agent_id', 'capability'])
    .where('capability', 'in', required)
    .execute();
  const held = new Map<string, Set<string>>();
  for (const g of grants) {
    const caps = held.get(g.agent_id) ?? new Set<string>();
    caps.add(g.capability);
    held.set(g.agent_id, caps);
  }
  const reached = [...held].filter(([, caps]) => caps.size === required.length).map(([id]) => id);
  if (reached.length === 0) return false;
  const agents = await trx
    .selectFrom('agents')
    .select(['id', 'owner'])
    .where('id', 'in', reached)
    .execute();
  return agents.some((a) => !teams.includes(a.owner));
}
