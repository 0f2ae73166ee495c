/**
 * @module Admin overrides of a tool version's health (C14), in the store every replica shares:
 * set or clear, each in one transaction with its event (so its audit record) and a catalog
 * revision bump (so sessions' permitted sets and MCP list_changed follow, on every replica).
 */
import type { Actor } from '../../core/index.js';
import { appendEvent, bumpCatalogRevision, type Store } from '../../records/store/index.js';

export type OverrideState = 'healthy' | 'degraded' | 'unavailable';
export const OVERRIDE_STATES: readonly OverrideState[] = ['healthy', 'degraded', 'unavailable'];

export interface HealthOverride {
  readonly toolId: string;
  readonly version: string;
  readonly state: OverrideState;
  readonly reason: string;
  readonly setBy: string;
  readonly setAt: string;
  readonly expiresAt: string;
}

export async function loadOverrides(db: Store['db']): Promise<HealthOverride[]> {
  const rows = await db.selectFrom('tool_health_overrides').selectAll().execute();
  return rows.map((r) => ({
    toolId: r.tool_id,
    version: r.version,
    state: r.state as OverrideState,
    reason: r.reason,
    setBy: r.set_by,
    setAt: r.set_at,
    expiresAt: r.expires_at,
  }));
}

export async function writeOverride(
  db: Store['db'],
  o: HealthOverride,
  actor: Actor,
  at: Date,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .deleteFrom('tool_health_overrides')
      .where('tool_id', '=', o.toolId)
      .where('version', '=', o.version)
      .execute();
    await trx
      .insertInto('tool_health_overrides')
      .values({
        tool_id: o.toolId,
        version: o.version,
        state: o.state,
        reason: o.reason,
        set_by: o.setBy,
        set_at: o.setAt,
        expires_at: o.expiresAt,
      })
      .execute();
    await appendEvent(trx, actor, at, {
      action: 'tool.health_override_set',
      subject: `tool:${o.toolId}@${o.version}`,
      details: { state: o.state, reason: o.reason, expires_at: o.expiresAt },
    });
    await bumpCatalogRevision(trx);
  });
}

/** Removes the override; answers whether there was one. `why` is `cleared` or `expired`. */
export async function deleteOverride(
  db: Store['db'],
  toolId: string,
  version: string,
  actor: Actor,
  at: Date,
  why: 'cleared' | 'expired',
  reason: string,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const gone = await trx
      .deleteFrom('tool_health_overrides')
      .where('tool_id', '=', toolId)
      .where('version', '=', version)
      .executeTakeFirst();
    if (Number(gone.numDeletedRows) === 0) return false;
    await appendEvent(trx, actor, at, {
      action: `tool.health_override_${why}`,
      subject: `tool:${toolId}@${version}`,
      details: { reason },
    });
    await bumpCatalogRevision(trx);
    return true;
  });
}
