/**
 * @module Report: deprecation impact (C2) — for every deprecated version, the agents that called
 * it since it was deprecated (or in the period asked), how often and when last, and how often the
 * same agent already calls its successor (the newest active later version), so an operator sees
 * who has migrated and who has not; a version nobody calls any more has one row with no agent.
 */
import semver from 'semver';
import type { Report, ReportRow } from './report.js';
import type { Period, ReportSources } from './report-sources.js';

export async function deprecationImpact(
  src: ReportSources,
  period: Period | null,
  now: Date,
): Promise<Report> {
  const deprecated = (await src.catalog.list({ lifecycle: 'deprecated' })).sort(
    (a, b) => a.id.localeCompare(b.id) || semver.compare(a.version, b.version),
  );
  const active = await src.catalog.list({ lifecycle: 'active' });
  const rows: ReportRow[] = [];
  for (const t of deprecated) {
    const from = period?.from ?? t.deprecated_at ?? '';
    const successor =
      active
        .filter((v) => v.id === t.id && !v.quarantined && semver.gt(v.version, t.version))
        .sort((a, b) => semver.rcompare(a.version, b.version))[0]?.version ?? null;
    const callers = await callsBy(src, t.id, t.version, from, period);
    const moved =
      successor === null ? new Map() : await callsBy(src, t.id, successor, from, period);
    const base = {
      tool: t.id,
      version: t.version,
      deprecated_at: t.deprecated_at,
      retire_at: t.retire_at,
      successor,
    };
    if (callers.size === 0) {
      rows.push({ ...base, agent: null, calls: 0, last_call: null, successor_calls: 0 });
    }
    for (const [agent, c] of callers) {
      rows.push({
        ...base,
        agent,
        calls: c.calls,
        last_call: c.last,
        successor_calls: moved.get(agent)?.calls ?? 0,
      });
    }
  }
  return {
    report: 'deprecation-impact',
    title: 'Deprecation impact',
    generated_at: now.toISOString(),
    period,
    columns: [
      'tool',
      'version',
      'deprecated_at',
      'retire_at',
      'successor',
      'agent',
      'calls',
      'last_call',
      'successor_calls',
    ],
    rows,
    notes: [
      'Calls that ran since the version was deprecated (or within the period, when one is given).',
      'An empty agent means nobody called the version: it can retire without impact.',
      'successor is the newest active later version; successor_calls counts the same agent’s calls to it over the same time: an agent with calls to both is still migrating.',
    ],
  };
}

/** Calls that ran (pre records) of one version since `from`, per agent, in agent order. */
async function callsBy(
  src: ReportSources,
  toolId: string,
  version: string,
  from: string,
  period: Period | null,
): Promise<Map<string, { calls: number; last: string }>> {
  let q = src.db
    .selectFrom('audit_log')
    .select('agent_id')
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.max('at').as('last')])
    .where('kind', '=', 'call.pre')
    .where('tool_id', '=', toolId)
    .where('tool_version', '=', version)
    .where('at', '>=', from)
    .groupBy('agent_id')
    .orderBy('agent_id');
  if (period) q = q.where('at', '<', period.to);
  const out = new Map<string, { calls: number; last: string }>();
  for (const c of await q.execute()) {
    if (c.agent_id !== null) out.set(c.agent_id, { calls: Number(c.n), last: String(c.last) });
  }
  return out;
}
