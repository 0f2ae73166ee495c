/**
 * @module The names a session lists its offered prompts under (docs/tools-and-catalog.md, "Names
 * the model sees"): shared by what a session lists (session-entries.ts), its withheld list
 * (export-names.ts) and the gate's `resolve` step.
 */
import { clashingNames, idName, type McpEntry, reservedNameProblem } from '../catalog/index.js';

/** One offered entry: its catalog id and the upstream entry it governs. */
export interface OfferedEntry {
  readonly id: string;
  readonly entry: McpEntry;
}

/**
 * The name each offered prompt is listed under, by catalog id (docs/tools-and-catalog.md, "Names
 * the model sees"); `offered` in catalog id order (the order the lists and the gate's `resolve`
 * step both use). A prompt whose own name holds the reserved `__` is not listed, and where two
 * would still share a name neither is: a name gets one prompt or none, never the first found.
 */
export function promptNames(offered: readonly OfferedEntry[]): Map<string, string> {
  return promptNaming(offered).names;
}

/** promptNames, and why each prompt left out because it would share a name is (by catalog id). */
export function promptNaming(offered: readonly OfferedEntry[]): {
  readonly names: Map<string, string>;
  readonly clashes: Map<string, string>;
} {
  const taken = new Set<string>();
  const out = new Map<string, string>();
  for (const o of offered) {
    if (o.entry.kind !== 'prompt' || reservedNameProblem(o.entry.name) !== null) continue;
    const name = taken.has(o.entry.name) ? idName(o.id) : o.entry.name;
    taken.add(name);
    out.set(o.id, name);
  }
  const listed = [...out].map(([id, name]) => ({ id, name }));
  const clashes = clashingNames(listed, false);
  for (const id of clashes.keys()) out.delete(id);
  return { names: out, clashes };
}
