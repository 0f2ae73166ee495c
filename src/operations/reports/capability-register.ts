/**
 * @module Report: the tool capability register — every registered version, what it may do, and
 * its security review: who reviewed which definition hash when, and whether that review covers
 * the definition registered now.
 */
import { needsReview, type ToolDefinition } from '../../domain/catalog/index.js';
import type { Report } from './report.js';
import type { ReportSources } from './report-sources.js';

/** `not_required` (public, internal, first-party runtime), else the review's status; `none`: never opened. */
type ReviewState = 'not_required' | 'none' | 'pending' | 'approved' | 'rejected';

export async function capabilityRegister(src: ReportSources, now: Date): Promise<Report> {
  const tools = await src.catalog.list();
  const reviewRows = await src.db
    .selectFrom('security_reviews')
    .select(['tool_id', 'version', 'definition_hash', 'status', 'reviewer', 'reviewed_at'])
    .execute();
  const reviews = new Map(
    reviewRows.map((r) => [`${r.tool_id}@${r.version}#${r.definition_hash}`, r]),
  );
  // The review rules read the stored definition (its runtime too), not the summary's columns.
  const definitions = new Map(
    (
      await src.db
        .selectFrom('tool_versions')
        .select(['tool_id', 'version', 'definition'])
        .execute()
    ).map((r) => [`${r.tool_id}@${r.version}`, JSON.parse(r.definition) as ToolDefinition]),
  );
  const rows = tools
    .slice()
    .sort((a, b) => a.id.localeCompare(b.id) || a.version.localeCompare(b.version))
    .map((t) => {
      const definition = definitions.get(`${t.id}@${t.version}`);
      // A row without its definition cannot be judged: shown as needing a review it lacks.
      const required = definition ? needsReview(definition) : true;
      const review = reviews.get(`${t.id}@${t.version}#${t.definition_hash}`);
      const state: ReviewState = !required
        ? 'not_required'
        : ((review?.status as ReviewState) ?? 'none');
      return {
        tool: t.id,
        version: t.version,
        name: t.name,
        lifecycle: t.lifecycle,
        quarantined: t.quarantined,
        access_tier: t.access_tier,
        action_class: t.action_class,
        data_access: t.data_access,
        egress: t.egress,
        owner: t.owner,
        provenance: t.provenance,
        registered_at: t.created_at,
        retire_at: t.retire_at,
        review_state: state,
        reviewer: review?.reviewer ?? null,
        reviewed_at: review?.reviewed_at ?? null,
        reviewed_hash: review && review.status !== 'pending' ? review.definition_hash : null,
        review_covers_definition: state === 'not_required' || state === 'approved',
      };
    });
  return {
    report: 'capability-register',
    title: 'Tool capability register',
    generated_at: now.toISOString(),
    period: null,
    columns: [
      'tool',
      'version',
      'name',
      'lifecycle',
      'quarantined',
      'access_tier',
      'action_class',
      'data_access',
      'egress',
      'owner',
      'provenance',
      'registered_at',
      'retire_at',
      'review_state',
      'reviewer',
      'reviewed_at',
      'reviewed_hash',
      'review_covers_definition',
    ],
    rows,
    notes: [
      'One row per registered version, quarantined and retired ones included.',
      'review_covers_definition: the version needs no security review, or an approver approved exactly its registered definition hash.',
    ],
  };
}
