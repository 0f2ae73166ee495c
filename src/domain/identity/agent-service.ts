/**
 * @module Agents and their capability grants as administrators declare them. Only admin paths
 * (CLI, admin REST, apply -f) reach this service; no agent-facing route may create or widen a
 * grant. API keys are agent-keys.ts, JWTs jwt-verifier.ts, user permissions user-service.ts.
 */
import type { Transaction } from 'kysely';
import {
  type Actor,
  AGENT_ID_PATTERN,
  CAPABILITY_PATTERN,
  type Clock,
  canonicalHash,
  OWNER_PATTERN,
  type Problem,
  systemClock,
  ToolgateError,
} from '../../core/index.js';
import {
  type AgentRow,
  appendEvent,
  bumpIdentityRevision,
  type Database,
  type GrantRow,
  type Store,
} from '../../records/store/index.js';
import { descriptionProblems, displayNameProblems, refuseUnreadable } from './readable-text.js';

export type AgentTier = 'public' | 'restricted' | 'privileged';

/** Per-session ceilings that hard-fail when reached (C7). */
export interface SessionBudgets {
  readonly external_sends?: number;
  readonly egress_bytes?: number;
  readonly spend_cents?: number;
}

/**
 * Ceilings that no new session or run resets, kept in the database per agent and per
 * (agent, user) over rolling windows; see limits/ceilings.ts.
 */
export interface CeilingWindow {
  /** `agent`: all of the agent's sessions; `agent_user`: those acting for one user (or for nobody). */
  readonly scope: 'agent' | 'agent_user';
  readonly window_seconds: number;
  /** Calls of any one tool. */
  readonly calls_per_tool?: number;
  readonly external_sends?: number;
  readonly egress_bytes?: number;
  readonly spend_cents?: number;
}

export interface AgentCeilings {
  /** How long a private-data read keeps unconstrained egress refused for the same (agent, user). */
  readonly flow_window_seconds?: number;
  /**
   * How long destinations and instruction-like text from untrusted results are remembered for the
   * same (agent, user) across sessions and runs (default a day; 0: the run only).
   */
  readonly untrusted_window_seconds?: number;
  readonly windows?: readonly CeilingWindow[];
}

export interface AgentSpec {
  readonly id: string;
  readonly display_name?: string;
  readonly description?: string;
  readonly owner: string;
  readonly enabled?: boolean;
  /** Highest access tier of the tools this agent may be offered; default restricted. */
  readonly tier?: AgentTier;
  readonly budgets?: SessionBudgets;
  readonly ceilings?: AgentCeilings;
}

export interface GrantSpec {
  readonly agent: string;
  readonly capabilities: readonly string[];
}

export interface AgentView {
  readonly id: string;
  readonly display_name: string;
  readonly description: string;
  readonly owner: string;
  readonly enabled: boolean;
  readonly tier: AgentTier;
  readonly budgets: SessionBudgets;
  readonly ceilings: AgentCeilings;
  readonly created_at: string;
  readonly updated_at: string;
  readonly capabilities: readonly string[];
}

export const agentSpecSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'owner'],
  properties: {
    id: { type: 'string', pattern: AGENT_ID_PATTERN },
    display_name: { type: 'string', minLength: 1, maxLength: 200 },
    description: { type: 'string', maxLength: 2000 },
    owner: { type: 'string', pattern: OWNER_PATTERN },
    enabled: { type: 'boolean' },
    tier: { enum: ['public', 'restricted', 'privileged'] },
    budgets: {
      type: 'object',
      additionalProperties: false,
      properties: {
        external_sends: { type: 'integer', minimum: 0, maximum: 1_000_000 },
        egress_bytes: { type: 'integer', minimum: 0, maximum: 1_099_511_627_776 },
        spend_cents: { type: 'integer', minimum: 0, maximum: 100_000_000_000 },
      },
    },
    ceilings: {
      type: 'object',
      additionalProperties: false,
      properties: {
        flow_window_seconds: { type: 'integer', minimum: 0, maximum: 2_592_000 },
        untrusted_window_seconds: { type: 'integer', minimum: 0, maximum: 2_592_000 },
        windows: {
          type: 'array',
          maxItems: 8,
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['scope', 'window_seconds'],
            minProperties: 3,
            properties: {
              scope: { enum: ['agent', 'agent_user'] },
              window_seconds: { type: 'integer', minimum: 1, maximum: 2_592_000 },
              calls_per_tool: { type: 'integer', minimum: 0, maximum: 1_000_000_000 },
              external_sends: { type: 'integer', minimum: 0, maximum: 1_000_000_000 },
              egress_bytes: { type: 'integer', minimum: 0, maximum: 1_099_511_627_776 },
              spend_cents: { type: 'integer', minimum: 0, maximum: 100_000_000_000 },
            },
          },
        },
      },
    },
  },
} as const;

export const grantSpecSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['agent', 'capabilities'],
  properties: {
    agent: { type: 'string', pattern: AGENT_ID_PATTERN },
    capabilities: {
      type: 'array',
      minItems: 1,
      maxItems: 100,
      uniqueItems: true,
      items: { type: 'string', pattern: CAPABILITY_PATTERN, maxLength: 100 },
    },
  },
} as const;

/**
 * What agentSpecSchema cannot say: the display name is printable and the description holds no
 * invisible or reordering character (readable-text.ts). Pointers relative to the spec.
 */
export function agentSpecTextProblems(spec: AgentSpec): Problem[] {
  return [
    ...displayNameProblems(spec.display_name, '/display_name'),
    ...descriptionProblems(spec.description, '/description'),
  ];
}

export type ChangeOutcome = 'created' | 'updated' | 'unchanged';

export class AgentService {
  readonly #store: Store;
  readonly #clock: Clock;

  constructor(store: Store, options: { clock?: Clock } = {}) {
    this.#store = store;
    this.#clock = options.clock ?? systemClock;
  }

  /** Creates or updates an agent from its spec; `unchanged` when the spec is identical. */
  async upsertIn(
    trx: Transaction<Database>,
    spec: AgentSpec,
    actor: Actor,
  ): Promise<{ outcome: ChangeOutcome; before?: AgentRow }> {
    refuseUnreadable(agentSpecTextProblems(spec));
    const now = this.#clock();
    const at = now.toISOString();
    const normalized = {
      id: spec.id,
      display_name: spec.display_name ?? spec.id,
      description: spec.description ?? '',
      owner: spec.owner,
      enabled: spec.enabled ?? true,
      tier: spec.tier ?? 'restricted',
      budgets: spec.budgets ?? {},
      ...(spec.ceilings !== undefined ? { ceilings: spec.ceilings } : {}),
    };
    const hash = canonicalHash(normalized);
    const before = await trx
      .selectFrom('agents')
      .selectAll()
      .where('id', '=', spec.id)
      .executeTakeFirst();
    if (before?.spec_hash === hash) return { outcome: 'unchanged', before };
    const values = {
      display_name: normalized.display_name,
      description: normalized.description,
      owner: normalized.owner,
      enabled: normalized.enabled ? 1 : 0,
      tier: normalized.tier,
      budgets: JSON.stringify(normalized.budgets),
      ceilings: JSON.stringify(normalized.ceilings ?? {}),
      spec_hash: hash,
      updated_at: at,
    };
    if (before) {
      await trx.updateTable('agents').set(values).where('id', '=', spec.id).execute();
    } else {
      await trx
        .insertInto('agents')
        .values({ id: spec.id, created_at: at, ...values })
        .execute();
    }
    await bumpIdentityRevision(trx);
    await appendEvent(trx, actor, now, {
      action: before ? 'agent.updated' : 'agent.created',
      subject: `agent:${spec.id}`,
      details: { spec: normalized },
    });
    return before ? { outcome: 'updated', before } : { outcome: 'created' };
  }

  /** Adds the capabilities not yet granted; returns which were new. Never removes a grant. */
  async grantIn(trx: Transaction<Database>, spec: GrantSpec, actor: Actor): Promise<string[]> {
    const now = this.#clock();
    const agent = await trx
      .selectFrom('agents')
      .select('id')
      .where('id', '=', spec.agent)
      .executeTakeFirst();
    if (!agent) {
      throw new ToolgateError('AGENT_NOT_FOUND', `no agent ${spec.agent}`, { agentId: spec.agent });
    }
    const held = new Set(
      (
        await trx
          .selectFrom('grants')
          .select('capability')
          .where('agent_id', '=', spec.agent)
          .execute()
      ).map((g) => g.capability),
    );
    const added = spec.capabilities.filter((c) => !held.has(c));
    for (const capability of added) {
      await trx
        .insertInto('grants')
        .values({
          agent_id: spec.agent,
          capability,
          created_at: now.toISOString(),
          created_by: actor.id,
        })
        .execute();
    }
    if (added.length > 0) {
      await bumpIdentityRevision(trx);
      await appendEvent(trx, actor, now, {
        action: 'grant.created',
        subject: `agent:${spec.agent}`,
        details: { capabilities: added },
      });
    }
    return added;
  }

  /** Removes capabilities; returns those that were held. Takes effect on the next call. */
  async revoke(agentId: string, capabilities: readonly string[], actor: Actor): Promise<string[]> {
    return this.#store.db.transaction().execute(async (trx) => {
      const agent = await trx
        .selectFrom('agents')
        .select('id')
        .where('id', '=', agentId)
        .executeTakeFirst();
      if (!agent) throw new ToolgateError('AGENT_NOT_FOUND', `no agent ${agentId}`, { agentId });
      return this.revokeIn(trx, agentId, capabilities, actor);
    });
  }

  /** revoke inside a caller's transaction (apply --prune); an unknown agent holds nothing. */
  async revokeIn(
    trx: Transaction<Database>,
    agentId: string,
    capabilities: readonly string[],
    actor: Actor,
    reason?: string,
  ): Promise<string[]> {
    if (capabilities.length === 0) return [];
    const held = await trx
      .selectFrom('grants')
      .select('capability')
      .where('agent_id', '=', agentId)
      .where('capability', 'in', [...capabilities])
      .execute();
    const removed = held.map((g) => g.capability);
    if (removed.length === 0) return [];
    await trx
      .deleteFrom('grants')
      .where('agent_id', '=', agentId)
      .where('capability', 'in', removed)
      .execute();
    await bumpIdentityRevision(trx);
    await appendEvent(trx, actor, this.#clock(), {
      action: 'grant.revoked',
      subject: `agent:${agentId}`,
      details: { capabilities: removed, ...(reason !== undefined ? { reason } : {}) },
    });
    return removed;
  }

  /**
   * Disables an agent (apply --prune): its keys and tokens stop authenticating on the next call.
   * The stored spec hash is cleared so that declaring the agent again counts as a change and
   * enables it. False when the agent is unknown or already disabled.
   */
  async disableIn(
    trx: Transaction<Database>,
    agentId: string,
    actor: Actor,
    reason: string,
  ): Promise<boolean> {
    const now = this.#clock();
    const done = await trx
      .updateTable('agents')
      .set({ enabled: 0, spec_hash: '', updated_at: now.toISOString() })
      .where('id', '=', agentId)
      .where('enabled', '=', 1)
      .executeTakeFirst();
    if (Number(done.numUpdatedRows) === 0) return false;
    await bumpIdentityRevision(trx);
    await appendEvent(trx, actor, now, {
      action: 'agent.disabled',
      subject: `agent:${agentId}`,
      details: { reason },
    });
    return true;
  }

  async list(): Promise<AgentView[]> {
    const [agents, grants] = await Promise.all([
      this.#store.db.selectFrom('agents').selectAll().orderBy('id').execute(),
      this.#store.db.selectFrom('grants').selectAll().orderBy('capability').execute(),
    ]);
    return agents.map((a) => toView(a, grants));
  }

  async get(id: string): Promise<AgentView> {
    const agent = await this.#store.db
      .selectFrom('agents')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    if (!agent) throw new ToolgateError('AGENT_NOT_FOUND', `no agent ${id}`, { agentId: id });
    const grants = await this.#store.db
      .selectFrom('grants')
      .selectAll()
      .where('agent_id', '=', id)
      .orderBy('capability')
      .execute();
    return toView(agent, grants);
  }

  async grants(): Promise<GrantRow[]> {
    return this.#store.db
      .selectFrom('grants')
      .selectAll()
      .orderBy('agent_id')
      .orderBy('capability')
      .execute();
  }
}

function toView(agent: AgentRow, grants: readonly GrantRow[]): AgentView {
  return {
    id: agent.id,
    display_name: agent.display_name,
    description: agent.description,
    owner: agent.owner,
    enabled: agent.enabled === 1,
    tier: agent.tier as AgentTier,
    budgets: JSON.parse(agent.budgets) as SessionBudgets,
    ceilings: JSON.parse(agent.ceilings) as AgentCeilings,
    created_at: agent.created_at,
    updated_at: agent.updated_at,
    capabilities: grants.filter((g) => g.agent_id === agent.id).map((g) => g.capability),
  };
}
