/**
 * @module Report: the quarterly tool portfolio audit (docs/architecture.md §8, C16) — per tool
 * (its newest version), usage over the period (calls, errors, callers, last call), health (the
 * health monitor's state, `unchecked` where there is none), grants (enabled agents whose
 * capabilities and tier reach it), redundancy (other tools with the same capabilities and action
 * class, or a near-duplicate description) and whether it is orphaned (the orphaned-tools rule).
 */
import semver from 'semver';
import type { ToolDefinition, ToolVersionSummary } from '../../domain/catalog/index.js';
import { orphanedTools } from './orphaned-tools.js';
import type { Report, ReportRow } from './report.js';
import type { Period, ReportSources } from './report-sources.js';

const TIER_RANK: Record<string, number> = { public: 0, restricted: 1, privileged: 2 };
/** Descriptions sharing at least this Jaccard similarity of their words are near duplicates. */
export const NEAR_DUPLICATE = 0.6;
/** A word in more descriptions than this finds no candidates (it says little); still counted. */
const COMMON_WORD = 200;
const MAX_LISTED = 10;

function words(text: string): Set<string> {
  return new Set(
    text
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter((w) => w.length >= 3),
  );
}

function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  let shared = 0;
  for (const w of a) if (b.has(w)) shared += 1;
  const union = a.size + b.size - shared;
  return union === 0 ? 0 : shared / union;
}

interface Entry {
  readonly tool: ToolVersionSummary;
  readonly caps: readonly string[];
  readonly words: Set<string>;
}

/**
 * For each tool, the others that overlap it and why. Description candidates are pairs sharing an
 * uncommon word, found per tool through the word postings (no all-pairs pass), then compared
 * exactly.
 */
export function redundancy(entries: readonly Entry[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const add = (a: string, b: string, why: string) => {
    const list = out.get(a);
    if (list) list.push(`${b} (${why})`);
    else out.set(a, [`${b} (${why})`]);
  };
  const capsKey = entries.map((e) =>
    e.caps.length === 0 ? null : `${e.tool.action_class}|${[...e.caps].sort().join(',')}`,
  );
  const byCaps = new Map<string, number[]>();
  capsKey.forEach((key, i) => {
    if (key === null) return;
    const group = byCaps.get(key);
    if (group) group.push(i);
    else byCaps.set(key, [i]);
  });
  for (const group of byCaps.values())
    for (const i of group)
      for (const j of group) {
        const [a, b] = [entries[i], entries[j]];
        if (i !== j && a && b) add(a.tool.id, b.tool.id, 'same capabilities');
      }
  const postings = new Map<string, number[]>();
  entries.forEach((e, i) => {
    for (const w of e.words) {
      const list = postings.get(w);
      if (list) list.push(i);
      else postings.set(w, [i]);
    }
  });
  // Jaccard ≥ t means shared ≥ t/(1+t)·(|A|+|B|); shared is at most the uncommon words counted
  // through the postings plus A's common words, so most pairs are dropped without comparing.
  const bound = NEAR_DUPLICATE / (1 + NEAR_DUPLICATE);
  entries.forEach((a, i) => {
    const counts = new Map<number, number>();
    let common = 0;
    for (const w of a.words) {
      const list = postings.get(w) ?? [];
      if (list.length > COMMON_WORD) {
        common += 1;
        continue;
      }
      for (const j of list) if (j > i) counts.set(j, (counts.get(j) ?? 0) + 1);
    }
    for (const [j, n] of counts) {
      const b = entries[j];
      // A pair with the same capabilities is listed once, for that reason.
      if (!b || (capsKey[i] !== null && capsKey[i] === capsKey[j])) continue;
      if (n + common < bound * (a.words.size + b.words.size)) continue;
      const sim = jaccard(a.words, b.words);
      if (sim < NEAR_DUPLICATE) continue;
      const why = `similar description ${sim.toFixed(2)}`;
      add(a.tool.id, b.tool.id, why);
      add(b.tool.id, a.tool.id, why);
    }
  });
  for (const v of out.values()) v.sort();
  return out;
}

export async function portfolioAudit(
  src: ReportSources,
  period: Period,
  now: Date,
): Promise<Report> {
  const [all, agents, orphans] = await Promise.all([
    src.catalog.list(),
    src.agents.list(),
    orphanedTools(src, now),
  ]);
  const newest = new Map<string, ToolVersionSummary>();
  for (const t of all) {
    const cur = newest.get(t.id);
    if (!cur || semver.gt(t.version, cur.version)) newest.set(t.id, t);
  }
  const definitions = new Map(
    (
      await src.db
        .selectFrom('tool_versions')
        .select(['tool_id', 'version', 'definition'])
        .execute()
    ).map((r) => [`${r.tool_id}@${r.version}`, JSON.parse(r.definition) as ToolDefinition]),
  );
  const usage = new Map(
    (
      await src.db
        .selectFrom('audit_log')
        .select('tool_id')
        .select((eb) => [
          eb.fn.countAll<number>().as('calls'),
          eb.fn.count<number>('agent_id').distinct().as('agents'),
          eb.fn.max('at').as('last'),
        ])
        .where('kind', '=', 'call.pre')
        .where('at', '>=', period.from)
        .where('at', '<', period.to)
        .groupBy('tool_id')
        .execute()
    ).map((r) => [r.tool_id ?? '', r]),
  );
  const errors = new Map(
    (
      await src.db
        .selectFrom('audit_log')
        .select('tool_id')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('kind', '=', 'call.post')
        .where('outcome', '!=', 'ok')
        .where('at', '>=', period.from)
        .where('at', '<', period.to)
        .groupBy('tool_id')
        .execute()
    ).map((r) => [r.tool_id ?? '', Number(r.n)]),
  );
  const orphanReason = new Map(orphans.rows.map((r) => [String(r.tool), String(r.reason)]));
  const tools = [...newest.values()].sort((a, b) => a.id.localeCompare(b.id));
  const entries: Entry[] = tools.map((t) => ({
    tool: t,
    caps: definitions.get(`${t.id}@${t.version}`)?.required_capabilities ?? [],
    words: words(t.description),
  }));
  // Retired tools are in the portfolio's history, not in its overlaps.
  const overlaps = redundancy(entries.filter((e) => e.tool.lifecycle !== 'retired'));
  const rows: ReportRow[] = entries.map(({ tool: t, caps }) => {
    const granted = agents
      .filter(
        (a) =>
          a.enabled &&
          caps.every((c) => a.capabilities.includes(c)) &&
          (TIER_RANK[a.tier] ?? -1) >= (TIER_RANK[t.access_tier] ?? 3),
      )
      .map((a) => a.id)
      .sort();
    const u = usage.get(t.id);
    const calls = Number(u?.calls ?? 0);
    const errs = errors.get(t.id) ?? 0;
    const redundant = overlaps.get(t.id) ?? [];
    return {
      tool: t.id,
      version: t.version,
      lifecycle: t.lifecycle,
      quarantined: t.quarantined,
      owner: t.owner,
      access_tier: t.access_tier,
      action_class: t.action_class,
      calls,
      errors: errs,
      error_rate: calls === 0 ? 0 : Math.round((errs / calls) * 10_000) / 10_000,
      agents_calling: Number(u?.agents ?? 0),
      last_call: u?.last ? String(u.last) : null,
      health: src.health?.(t.id, t.version) ?? 'unchecked',
      granted_agents: granted.length,
      granted: granted.slice(0, MAX_LISTED).join(', ') + (granted.length > MAX_LISTED ? ', …' : ''),
      redundant_with:
        redundant.slice(0, MAX_LISTED).join('; ') + (redundant.length > MAX_LISTED ? '; …' : ''),
      orphaned: orphanReason.get(t.id) ?? null,
    };
  });
  return {
    report: 'portfolio-audit',
    title: 'Quarterly tool portfolio audit',
    generated_at: now.toISOString(),
    period,
    columns: [
      'tool',
      'version',
      'lifecycle',
      'quarantined',
      'owner',
      'access_tier',
      'action_class',
      'calls',
      'errors',
      'error_rate',
      'agents_calling',
      'last_call',
      'health',
      'granted_agents',
      'granted',
      'redundant_with',
      'orphaned',
    ],
    rows,
    notes: [
      'One row per tool, its newest version; usage counts every version of the tool within the period (default: the 90 days up to now).',
      'health: the health monitor’s state; unchecked where no probe has judged the tool.',
      'granted: enabled agents whose capabilities include the tool’s required capabilities and whose tier reaches the tool’s.',
      `redundant_with: tools with the same required capabilities and action class, or a description sharing at least ${NEAR_DUPLICATE * 100}% of its words (Jaccard).`,
      'orphaned: the orphaned-tools rule (owner unknown or disabled); empty when the owner is known.',
    ],
  };
}
