/** @module Report: the tool capability register — every registered version and what it may do. */
import type { Report } from './report.js';
import type { ReportSources } from './report-sources.js';

export async function capabilityRegister(src: ReportSources, now: Date): Promise<Report> {
  const tools = await src.catalog.list();
  const rows = tools
    .slice()
    .sort((a, b) => a.id.localeCompare(b.id) || a.version.localeCompare(b.version))
    .map((t) => ({
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
    }));
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
    ],
    rows,
    notes: ['One row per registered version, quarantined and retired ones included.'],
  };
}
