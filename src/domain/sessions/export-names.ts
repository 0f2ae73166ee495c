/**
 * @module The names a session's tools are offered under (C5; docs/tools-and-catalog.md, "Names
 * the model sees"; INVARIANTS 6): one entry per tool, under its own name, or under its catalog id
 * with dots as `__` when another tool of the set has that name too. An upstream tool whose own
 * name holds the reserved `__` is not offered, and where two entries would still answer to one
 * string (a name, or a name and an id a call may also use, or two differing only in case) neither
 * is: each is withheld with the reason, as admins see it in the session's view; so is a resource
 * template that may share a URI with another (template-shadows.ts).
 */
import semver from 'semver';
import {
  clashingNames,
  idName,
  reservedNameProblem,
  type ToolVersionDetail,
} from '../catalog/index.js';
import { promptNaming } from './prompt-names.js';
import type { SessionTool, WithheldTool } from './session-tool.js';

/**
 * Groups a permitted set holding one version per major (`CatalogService.offeredMajors`) into one
 * entry per tool: the default is the newest active version, else the newest deprecated one; every
 * other permitted major can be pinned. Each version got here through the rules on its own
 * definition, so a pinned old major never escapes a rule the new one has, nor the reverse.
 */
export function byTool(
  tools: readonly ToolVersionDetail[],
): { readonly detail: ToolVersionDetail; readonly pins: readonly ToolVersionDetail[] }[] {
  const groups = new Map<string, ToolVersionDetail[]>();
  for (const t of tools) {
    const group = groups.get(t.id);
    if (group) group.push(t);
    else groups.set(t.id, [t]);
  }
  const out: { detail: ToolVersionDetail; pins: ToolVersionDetail[] }[] = [];
  for (const group of groups.values()) {
    const newestFirst = [...group].sort((a, b) => semver.rcompare(a.version, b.version));
    const detail =
      newestFirst.find((t) => t.lifecycle === 'active') ?? (newestFirst[0] as ToolVersionDetail);
    out.push({ detail, pins: newestFirst.filter((t) => t !== detail) });
  }
  return out;
}

/** An upstream tool (not one of its resources or prompts, which are never listed as tools). */
function upstreamTool(t: ToolVersionDetail): boolean {
  const runtime = t.definition.runtime;
  return runtime.kind === 'mcp' && runtime.entry === undefined;
}

/**
 * Names the model sees; a clash (two providers' `search`) falls back to the tool id. Never lets
 * one string name two entries: what would is withheld, whichever entry came first. A resource
 * template in `shadowed` (by id, why: another listed template may match a URI it matches, which
 * then reads neither, template-shadows.ts) is withheld too, rather than listed and refused.
 */
export function exportNames(
  tools: readonly ToolVersionDetail[],
  shadowed: ReadonlyMap<string, string> = new Map(),
): {
  readonly tools: SessionTool[];
  readonly withheld: WithheldTool[];
} {
  const withheld: WithheldTool[] = [];
  const grouped = byTool(tools).filter(({ detail: t }) => {
    const problem = shadowed.get(t.id) ?? (upstreamTool(t) ? reservedNameProblem(t.name) : null);
    if (problem !== null) withheld.push({ id: t.id, version: t.version, reason: problem });
    return problem === null;
  });
  const count = new Map<string, number>();
  for (const { detail: t } of grouped) count.set(t.name, (count.get(t.name) ?? 0) + 1);
  const named = grouped.map(({ detail: t, pins }) => ({
    id: t.id,
    version: t.version,
    name: (count.get(t.name) ?? 0) > 1 ? idName(t.id) : t.name,
    ...(pins.length > 0
      ? {
          pins: pins
            .map((p) => ({ major: semver.major(p.version), version: p.version }))
            .sort((a, b) => a.major - b.major),
        }
      : {}),
  }));
  const clashes = clashingNames(named, true);
  for (const t of named) {
    const reason = clashes.get(t.id);
    if (reason !== undefined) withheld.push({ id: t.id, version: t.version, reason });
  }
  withheld.push(...promptClashes(grouped.map((g) => g.detail)));
  return { tools: named.filter((t) => !clashes.has(t.id)), withheld };
}

/**
 * Prompts no name is listed for because two would share one, or differ only in case: the lists
 * leave them out at each request (session-entries.ts `promptNames`); here they are named in the
 * session's withheld list with the reason, for admins. They stay in the set.
 */
function promptClashes(details: readonly ToolVersionDetail[]): WithheldTool[] {
  const prompts = details
    .flatMap((t) => {
      const runtime = t.definition.runtime;
      return runtime.kind === 'mcp' && runtime.entry?.kind === 'prompt'
        ? [{ id: t.id, version: t.version, entry: runtime.entry }]
        : [];
    })
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const { clashes } = promptNaming(prompts);
  return prompts.flatMap((p) => {
    const reason = clashes.get(p.id);
    return reason === undefined ? [] : [{ id: p.id, version: p.version, reason }];
  });
}
