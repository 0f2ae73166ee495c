/**
 * @module Report: the access control matrix — every agent × every tool, allowed or not and why.
 * It uses the gate's own permitted-set logic (`permittedSet`), so "allowed" here is what a session
 * of that agent (acting for nobody) is offered.
 */
import type { ToolVersionSummary } from '../../domain/catalog/index.js';
import { permittedSet } from '../../domain/sessions/index.js';
import type { Report, ReportRow } from './report.js';
import type { ReportSources } from './report-sources.js';

const TIER_RANK: Record<string, number> = { public: 0, restricted: 1, privileged: 2 };

/** Why no version of a tool is offered: its newest version's state. */
function notOffered(versions: readonly ToolVersionSummary[]): string {
  const newest = versions[versions.length - 1];
  if (!newest) return 'not registered';
  if (versions.every((v) => v.quarantined)) return 'not offered: quarantined';
  return `not offered: ${newest.lifecycle}`;
}

export async function accessMatrix(src: ReportSources, now: Date): Promise<Report> {
  const [agents, offered, all] = await Promise.all([
    src.agents.list(),
    src.catalog.offered(),
    src.catalog.list(),
  ]);
  const byId = new Map<string, ToolVersionSummary[]>();
  for (const t of all) byId.set(t.id, [...(byId.get(t.id) ?? []), t]);
  const offeredById = new Map(offered.map((t) => [t.id, t]));
  const toolIds = [...byId.keys()].sort();
  const rows: ReportRow[] = [];
  for (const agent of agents) {
    const caps = new Set(agent.capabilities);
    const { tools, withheld } = permittedSet(offered, caps, agent.tier);
    const allowed = new Set(tools.map((t) => t.id));
    const held = new Map(withheld.map((w) => [w.id, w.reason]));
    for (const id of toolIds) {
      const tool = offeredById.get(id);
      let ok = false;
      let why: string;
      if (!tool) why = notOffered(byId.get(id) ?? []);
      else if (!agent.enabled) why = 'agent disabled';
      else if (allowed.has(id)) {
        ok = true;
        why = `granted: ${tool.definition.required_capabilities.join(', ')}`;
      } else if (held.has(id)) why = held.get(id) ?? 'withheld';
      else {
        const reasons: string[] = [];
        const missing = tool.definition.required_capabilities.filter((c) => !caps.has(c));
        if (missing.length > 0) reasons.push(`missing capabilities: ${missing.join(', ')}`);
        if ((TIER_RANK[tool.access_tier] ?? 3) > (TIER_RANK[agent.tier] ?? 0))
          reasons.push(`tool tier ${tool.access_tier} is above the agent's tier ${agent.tier}`);
        why = reasons.join('; ') || 'not offered';
      }
      rows.push({
        agent: agent.id,
        tool: id,
        version: tool?.version ?? null,
        allowed: ok,
        reason: why,
      });
    }
  }
  return {
    report: 'access-matrix',
    title: 'Access control matrix',
    generated_at: now.toISOString(),
    period: null,
    columns: ['agent', 'tool', 'version', 'allowed', 'reason'],
    rows,
    notes: [
      "Allowed means a session of the agent, acting for nobody, is offered the tool's newest offerable version (the gate's permitted set).",
      "A session on behalf of a user holds at most what the user's permissions also allow.",
    ],
  };
}
