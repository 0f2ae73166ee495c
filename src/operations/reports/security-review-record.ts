/**
 * @module Report: the security review record (docs/architecture.md §8, C1, C16) — every review
 * opened: which definition hash of which version, who registered it, who reviewed it, when, the
 * verdict and the notes, and whether that hash is still the version's registered definition.
 * With a period, the reviews opened or decided within it.
 */
import type { Report, ReportRow } from './report.js';
import type { Period, ReportSources } from './report-sources.js';

export async function securityReviewRecord(
  src: ReportSources,
  period: Period | null,
  now: Date,
): Promise<Report> {
  let q = src.db
    .selectFrom('security_reviews as r')
    .leftJoin('tool_versions as t', (j) =>
      j.onRef('t.tool_id', '=', 'r.tool_id').onRef('t.version', '=', 'r.version'),
    )
    .select([
      'r.id',
      'r.tool_id',
      'r.version',
      'r.definition_hash',
      'r.reasons',
      'r.status',
      'r.registered_by',
      'r.registered_at',
      'r.reviewer',
      'r.reviewed_at',
      'r.notes',
      't.definition_hash as current_hash',
    ])
    .orderBy('r.registered_at')
    .orderBy('r.id');
  if (period)
    q = q.where((eb) =>
      eb.or([
        eb.and([eb('r.registered_at', '>=', period.from), eb('r.registered_at', '<', period.to)]),
        eb.and([eb('r.reviewed_at', '>=', period.from), eb('r.reviewed_at', '<', period.to)]),
      ]),
    );
  const rows: ReportRow[] = (await q.execute()).map((r) => ({
    review: r.id,
    tool: r.tool_id,
    version: r.version,
    definition_hash: r.definition_hash,
    reasons: (JSON.parse(r.reasons) as string[]).join('; '),
    registered_by: r.registered_by,
    registered_at: r.registered_at,
    verdict: r.status,
    reviewer: r.reviewer,
    reviewed_at: r.reviewed_at,
    notes: r.notes,
    hash_is_registered: r.current_hash === r.definition_hash,
  }));
  return {
    report: 'security-review-record',
    title: 'Tool security review record',
    generated_at: now.toISOString(),
    period,
    columns: [
      'review',
      'tool',
      'version',
      'definition_hash',
      'reasons',
      'registered_by',
      'registered_at',
      'verdict',
      'reviewer',
      'reviewed_at',
      'notes',
      'hash_is_registered',
    ],
    rows,
    notes: [
      'One row per review: a review covers exactly one definition hash; a changed definition is a new version with its own review.',
      'verdict: pending, approved or rejected; reviewer: the approver’s operator id (operator:<id>), never a stated name.',
      'hash_is_registered: the reviewed hash is the version’s registered definition now.',
    ],
  };
}
