/**
 * @module What owner notices read of the catalog and the health monitor (docs/architecture.md §8,
 * C16): a version's owner, the deprecated versions with their retire dates, the orphaned tools of
 * the governance report, and the health changes that are an owner's news.
 */
import type { CatalogService } from '../../domain/catalog/index.js';
import type { HealthEvent } from '../health/index.js';
import type { ReportService } from '../reports/index.js';
import type { OwnerNotices, OwnerNoticesDeps } from './owner-notices.js';

/** The catalog and the orphaned-tools report, as owner notices read them. */
export function toolOwnership(
  catalog: Pick<CatalogService, 'get' | 'list'>,
  reports: Pick<ReportService, 'build'>,
): Pick<OwnerNoticesDeps, 'ownerOf' | 'deprecated' | 'orphans'> {
  return {
    ownerOf: (id, version) =>
      catalog.get(id, version).then(
        (t) => t.owner,
        () => null,
      ),
    deprecated: async () =>
      (await catalog.list({ lifecycle: 'deprecated' })).map((t) => ({
        id: t.id,
        version: t.version,
        owner: t.owner,
        retire_at: t.retire_at,
      })),
    orphans: async () =>
      (await reports.build({ name: 'orphaned-tools' })).rows.map((r) => ({
        tool: String(r.tool),
        version: String(r.version),
        owner: String(r.owner),
        reason: String(r.reason),
      })),
  };
}

/**
 * The health monitor's listener that tells owners of a tool that turned degraded or unavailable
 * (C14, C16; bounded and deduplicated by the notices themselves).
 */
export function unhealthyToOwners(
  notices: Pick<OwnerNotices, 'toolEvent'>,
): (e: HealthEvent) => void {
  return (e) => {
    if (e.kind !== 'health_changed' || (e.to !== 'degraded' && e.to !== 'unavailable')) return;
    void notices.toolEvent({
      kind: 'unhealthy',
      tool_id: e.toolId,
      version: e.version,
      owner: e.owner,
      facts: { from: e.from, to: e.to, score: e.score, cause: e.cause, rule: e.rule },
    });
  };
}
