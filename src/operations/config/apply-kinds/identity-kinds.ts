/**
 * @module `apply -f` of Agent, User and Grant documents (C18): each through its service's write
 * inside the apply's transaction. A grant that unlocks a privileged or irreversible tool is not
 * granted here: it waits at the four-eyes change desk (domain/decisions).
 */
import type { ChangeDesk } from '../../../domain/decisions/index.js';
import type {
  AgentService,
  AgentSpec,
  GrantSpec,
  UserService,
  UserSpec,
} from '../../../domain/identity/index.js';
import {
  type ApplyChange,
  actionOf,
  type ConfigProblem,
  type IndexedDocument,
  type KindContext,
  type KindOutcome,
} from '../apply-types.js';
import { refusalProblems } from '../config-problems.js';

export async function applyAgents(
  { ctx, actor }: KindContext,
  docs: readonly IndexedDocument[],
  agents: AgentService,
): Promise<KindOutcome> {
  const changes: ApplyChange[] = [];
  for (const { index, doc } of docs) {
    const spec = doc.spec as AgentSpec;
    const { outcome } = await agents.upsertIn(ctx.trx, spec, actor);
    changes.push({
      document: index,
      kind: 'Agent',
      subject: `agent ${spec.id}`,
      action: actionOf(outcome),
      summary: outcome === 'unchanged' ? 'unchanged' : `${outcome} (owner ${spec.owner})`,
    });
  }
  return { changes, problems: [] };
}

export async function applyUsers(
  { ctx, actor }: KindContext,
  docs: readonly IndexedDocument[],
  users: UserService,
): Promise<KindOutcome> {
  const changes: ApplyChange[] = [];
  for (const { index, doc } of docs) {
    const spec = doc.spec as UserSpec;
    const outcome = await users.upsertIn(ctx.trx, spec, actor);
    changes.push({
      document: index,
      kind: 'User',
      subject: `user ${spec.id}`,
      action: actionOf(outcome),
      summary:
        outcome === 'unchanged'
          ? 'unchanged'
          : `${outcome} (${spec.permissions.length} permissions)`,
    });
  }
  return { changes, problems: [] };
}

/** Grants that unlock privileged or irreversible tools wait for approvers (four eyes). */
export async function applyGrants(
  { ctx, actor }: KindContext,
  docs: readonly IndexedDocument[],
  agents: AgentService,
  desk: ChangeDesk,
): Promise<KindOutcome> {
  const changes: ApplyChange[] = [];
  const problems: ConfigProblem[] = [];
  const gated = docs.length > 0 ? await desk.gatedCapabilities(ctx.trx) : new Map();
  for (const { index, doc } of docs) {
    const spec = doc.spec as GrantSpec;
    try {
      // Read through the write's own transaction: on SQLite another handle would wait forever.
      const held = new Set(
        (
          await ctx.trx
            .selectFrom('grants')
            .select('capability')
            .where('agent_id', '=', spec.agent)
            .execute()
        ).map((g) => g.capability),
      );
      const now = spec.capabilities.filter((c) => !gated.has(c));
      const waiting = spec.capabilities.filter((c) => gated.has(c) && !held.has(c));
      const added = await agents.grantIn(ctx.trx, { agent: spec.agent, capabilities: now }, actor);
      const requested: string[] = [];
      for (const capability of waiting) {
        const gate = gated.get(capability) as { required: number; tools: string[] };
        const { id, created } = await desk.requestIn(
          ctx.trx,
          { kind: 'grant', agentId: spec.agent, capability },
          gate.required,
          `unlocks ${gate.tools.join(', ')}`,
          actor,
        );
        // Applying the same file again finds the same pending request: nothing changes.
        if (created) {
          requested.push(
            `${capability} (awaiting ${gate.required} approver${gate.required > 1 ? 's' : ''}: ${id})`,
          );
        }
      }
      const said = [
        added.length > 0 ? `grants ${added.join(', ')}` : '',
        requested.length > 0 ? `requests ${requested.join(', ')}` : '',
      ].filter((x) => x !== '');
      changes.push({
        document: index,
        kind: 'Grant',
        subject: `grant ${spec.agent}`,
        action: said.length > 0 ? 'create' : 'unchanged',
        summary: said.length > 0 ? said.join('; ') : 'unchanged',
      });
    } catch (err) {
      problems.push(...refusalProblems(err, index, 'Grant'));
    }
  }
  return { changes, problems };
}
