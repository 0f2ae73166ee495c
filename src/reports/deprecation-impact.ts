/**
 * @module Report: deprecation impact — for every deprecated version, the agents that called it
 * since it was deprecated (or in the period asked), how often and when last; a version nobody
 * calls any more has one row with no agent.
 */
import type { Report, ReportRow } from './report.js';
import type { Period, ReportSources } from './report-sources.js';

export async function deprecationImpact(
  src: ReportSources,
  period: Period | null,
  now: Date,
): Promise<Report> {
  const deprecated = (await src.catalog.list({ lifecycle: 'deprecated' })).sort(
    (a, b) => a.id.localeCompare(b.id) || a.version.localeCompare(b.version),
  );
  const rows: ReportRow[] = [];
  for (const t of deprecated) {
    const from = period?.from ?? t.deprecated_at ?? '';
    let q = src.db
      .selectFrom('audit_log')
      .select('agent_id')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.max('at').as('last')])
      .where('kind', '=', 'call.pre')
      .where('tool_id', '=', t.id)
      .where('tool_version', '=', t.version)
      .where('at', '>=', from)
      .groupBy('agent_id')
      .orderBy('agent_id');
    if (period) q = q.where('at', '<', period.to);
    const callers = await q.execute();
    const base = {
      tool: t.id,
      version: t.version,
      deprecated_at: t.deprecated_at,
      retire_at: t.retire_at,
    };
    if (callers.length === 0) rows.push({ ...base, agent: null, calls: 0, last_call: null });
    for (const c of callers)
      rows.push({ ...base, agent: c.agent_id, calls: Number(c.n), last_call: String(c.last) });
  }
  return {
    report: 'deprecation-impact',
    title: 'Deprecation impact',
    generated_at: now.toISOString(),
    period,
    columns: ['tool', 'version', 'deprecated_at', 'retire_at', 'agent', 'calls', 'last_call'],
    rows,
    notes: [
      'Calls that ran since the version was deprecated (or within the period, when one is given).',
      'An empty agent means nobody called the version: it can retire without impact.',
    ],
  };
}
