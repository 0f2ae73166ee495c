/**
 * @module Report: orphaned tools. The rule: a tool's owner is known when it is a configured team
 * (`teams`), the owner of an enabled agent, or an enabled user. An owner that is none of these is
 * `unknown`; one that only matches disabled agents or users is `disabled`. Retired tools are left
 * out (nothing can call them); each tool is judged by its newest other version.
 */
import semver from 'semver';
import type { ToolVersionSummary } from '../../domain/catalog/index.js';
import type { Report, ReportRow } from './report.js';
import type { ReportSources } from './report-sources.js';

export async function orphanedTools(src: ReportSources, now: Date): Promise<Report> {
  const [tools, agents, users] = await Promise.all([
    src.catalog.list(),
    src.agents.list(),
    src.users.list(),
  ]);
  const known = new Set<string>(src.teams);
  const disabled = new Set<string>();
  for (const a of agents) (a.enabled ? known : disabled).add(a.owner);
  for (const u of users) (u.enabled ? known : disabled).add(u.id);
  const newest = new Map<string, ToolVersionSummary>();
  for (const t of tools) {
    if (t.lifecycle === 'retired') continue;
    const cur = newest.get(t.id);
    if (!cur || semver.gt(t.version, cur.version)) newest.set(t.id, t);
  }
  const rows: ReportRow[] = [];
  for (const t of [...newest.values()].sort((a, b) => a.id.localeCompare(b.id))) {
    if (known.has(t.owner)) continue;
    rows.push({
      tool: t.id,
      version: t.version,
      lifecycle: t.lifecycle,
      owner: t.owner,
      reason: disabled.has(t.owner) ? 'owner disabled' : 'owner unknown',
    });
  }
  return {
    report: 'orphaned-tools',
    title: 'Orphaned tools',
    generated_at: now.toISOString(),
    period: null,
    columns: ['tool', 'version', 'lifecycle', 'owner', 'reason'],
    rows,
    notes: [
      'An owner is known when it is a configured team (TOOLGATE_TEAMS), the owner of an enabled agent, or an enabled user.',
      'Retired tools are not listed.',
    ],
  };
}
