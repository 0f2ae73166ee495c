/**
 * @module Organisation policies as configuration (kind Policy): stored, validated as a whole
 * against toolgate's Cedar schema before anything is written, and loaded into one engine.
 */
import type { Kysely, Transaction } from 'kysely';
import { type Actor, type Clock, canonicalHash, systemClock } from '../../core/index.js';
import { appendEvent, type Database } from '../../records/store/index.js';
import { type CedarLoadProblem, CedarPolicyEngine, type PolicySource } from './cedar/index.js';

export interface PolicySpec {
  readonly id: string;
  /** Cedar policy text; `forbid` rules restrict, and a forbid always wins. */
  readonly text: string;
}

export const policySpecSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'text'],
  properties: {
    id: { type: 'string', pattern: '^[a-z][a-z0-9_.-]{0,99}$' },
    text: { type: 'string', minLength: 1, maxLength: 262_144 },
  },
} as const;

export class PolicyService {
  readonly #db: Kysely<Database>;
  readonly #clock: Clock;

  constructor(db: Kysely<Database>, clock: Clock = systemClock) {
    this.#db = db;
    this.#clock = clock;
  }

  async sources(db: Kysely<Database> | Transaction<Database> = this.#db): Promise<PolicySource[]> {
    const rows = await db.selectFrom('policies').select(['id', 'text']).orderBy('id').execute();
    return rows.map((r) => ({ id: r.id, text: r.text }));
  }

  /**
   * Checks the policy set as it would be with `specs` applied (same ids replaced); returns the
   * problems per policy id, empty when the whole set loads.
   */
  async check(
    trx: Transaction<Database>,
    specs: readonly PolicySpec[],
  ): Promise<CedarLoadProblem[]> {
    const byId = new Map((await this.sources(trx)).map((s) => [s.id, s]));
    for (const spec of specs) byId.set(spec.id, { id: spec.id, text: spec.text });
    const loaded = CedarPolicyEngine.load([...byId.values()]);
    return loaded.ok ? [] : loaded.problems;
  }

  async upsertIn(
    trx: Transaction<Database>,
    spec: PolicySpec,
    actor: Actor,
  ): Promise<'created' | 'updated' | 'unchanged'> {
    const now = this.#clock().toISOString();
    const hash = canonicalHash(spec);
    const before = await trx
      .selectFrom('policies')
      .select('spec_hash')
      .where('id', '=', spec.id)
      .executeTakeFirst();
    if (before?.spec_hash === hash) return 'unchanged';
    if (before) {
      await trx
        .updateTable('policies')
        .set({ text: spec.text, spec_hash: hash, updated_at: now, updated_by: actor.id })
        .where('id', '=', spec.id)
        .execute();
    } else {
      await trx
        .insertInto('policies')
        .values({
          id: spec.id,
          text: spec.text,
          spec_hash: hash,
          created_at: now,
          updated_at: now,
          updated_by: actor.id,
        })
        .execute();
    }
    await appendEvent(trx, actor, this.#clock(), {
      action: before ? 'policy.updated' : 'policy.created',
      subject: `policy:${spec.id}`,
      details: { spec_hash: hash },
    });
    return before ? 'updated' : 'created';
  }

  /**
   * Deletes a policy (apply --prune); the caller bumps the catalog revision so every gate reloads.
   * False when there is no such policy.
   */
  async removeIn(
    trx: Transaction<Database>,
    id: string,
    actor: Actor,
    reason: string,
  ): Promise<boolean> {
    const done = await trx.deleteFrom('policies').where('id', '=', id).executeTakeFirst();
    if (Number(done.numDeletedRows) === 0) return false;
    await appendEvent(trx, actor, this.#clock(), {
      action: 'policy.deleted',
      subject: `policy:${id}`,
      details: { reason },
    });
    return true;
  }

  /** The engine for the stored policies; null when there are none (the gate then skips Cedar). */
  async engine(): Promise<CedarPolicyEngine | null> {
    const sources = await this.sources();
    if (sources.length === 0) return null;
    const loaded = CedarPolicyEngine.load(sources);
    if (!loaded.ok) {
      // Stored policies were validated when applied; failing to load them now must not open
      // the gate, so the caller treats this as "deny everything".
      throw new Error(
        `stored policies do not load: ${loaded.problems.map((p) => p.message).join('; ')}`,
      );
    }
    return loaded.engine;
  }
}
