/**
 * @module Report: invocations over a period, per tool — calls that ran, errors and error rate,
 * denials by rule, approvals requested and decided, calls to deprecated versions. Denials of
 * unregistered names are one row, `(unregistered)`, never the names themselves.
 */
import { sql } from 'kysely';
import type { Report, ReportRow } from './report.js';
import type { Period, ReportSources } from './report-sources.js';

interface Tally {
  calls: number;
  ok: number;
  errors: number;
  denials: number;
  rules: Map<string, number>;
  approvalsRequested: number;
  approved: number;
  rejected: number;
  deprecated: number;
  agents: Set<string>;
}

const UNREGISTERED = '(unregistered)';

export async function invocations(src: ReportSources, period: Period, now: Date): Promise<Report> {
  // A literal, not a parameter: PostgreSQL must see the same expression in SELECT and GROUP BY.
  const deprecatedFlag = sql<number>`case when details like ${sql.lit('%"warnings":[%')} then 1 else 0 end`;
  const grouped = await src.db
    .selectFrom('audit_log')
    .select(['tool_id', 'kind', 'rule', 'outcome', 'agent_id'])
    .select(deprecatedFlag.as('deprecated'))
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('at', '>=', period.from)
    .where('at', '<', period.to)
    .where('kind', 'in', ['call.pre', 'call.post', 'call.denied', 'call.pending_approval'])
    .groupBy(['tool_id', 'kind', 'rule', 'outcome', 'agent_id', deprecatedFlag])
    .execute();
  const decided = await src.db
    .selectFrom('approvals')
    .select(['tool_id', 'status'])
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('decided_at', '>=', period.from)
    .where('decided_at', '<', period.to)
    .groupBy(['tool_id', 'status'])
    .execute();
  const tallies = new Map<string, Tally>();
  const tally = (tool: string | null): Tally => {
    const key = tool ?? UNREGISTERED;
    let t = tallies.get(key);
    if (!t) {
      t = {
        calls: 0,
        ok: 0,
        errors: 0,
        denials: 0,
        rules: new Map(),
        approvalsRequested: 0,
        approved: 0,
        rejected: 0,
        deprecated: 0,
        agents: new Set(),
      };
      tallies.set(key, t);
    }
    return t;
  };
  for (const g of grouped) {
    const n = Number(g.n);
    const t = tally(g.tool_id);
    if (g.agent_id) t.agents.add(g.agent_id);
    switch (g.kind) {
      case 'call.pre':
        t.calls += n;
        if (Number(g.deprecated) === 1) t.deprecated += n;
        break;
      case 'call.post':
        if (g.outcome === 'ok') t.ok += n;
        else t.errors += n;
        break;
      case 'call.denied': {
        t.denials += n;
        const rule = g.rule ?? 'unknown';
        t.rules.set(rule, (t.rules.get(rule) ?? 0) + n);
        break;
      }
      case 'call.pending_approval':
        t.approvalsRequested += n;
        break;
    }
  }
  for (const d of decided) {
    const t = tally(d.tool_id);
    if (d.status === 'approved' || d.status === 'consumed') t.approved += Number(d.n);
    if (d.status === 'rejected') t.rejected += Number(d.n);
  }
  const rows: ReportRow[] = [...tallies.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([tool, t]) => ({
      tool,
      agents: t.agents.size,
      calls: t.calls,
      ok: t.ok,
      errors: t.errors,
      error_rate:
        t.ok + t.errors === 0 ? 0 : Math.round((t.errors / (t.ok + t.errors)) * 10_000) / 10_000,
      denials: t.denials,
      denials_by_rule: [...t.rules.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([r, n]) => `${r}=${n}`)
        .join('; '),
      approvals_requested: t.approvalsRequested,
      approvals_approved: t.approved,
      approvals_rejected: t.rejected,
      deprecated_calls: t.deprecated,
    }));
  return {
    report: 'invocations',
    title: 'Invocation audit report',
    generated_at: now.toISOString(),
    period,
    columns: [
      'tool',
      'agents',
      'calls',
      'ok',
      'errors',
      'error_rate',
      'denials',
      'denials_by_rule',
      'approvals_requested',
      'approvals_approved',
      'approvals_rejected',
      'deprecated_calls',
    ],
    rows,
    notes: [
      'calls: calls that passed the gate and ran; error_rate: errors / (ok + errors) of calls that finished.',
      'denials: calls the gate refused, by the rule that fired; (unregistered) groups calls naming no tool of the caller’s set.',
      'approvals_approved / _rejected: decisions taken in the period.',
    ],
  };
}
