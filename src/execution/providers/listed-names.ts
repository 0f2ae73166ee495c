/**
 * @module Which tools of an upstream listing may be imported under their names (C3;
 * docs/tools-and-catalog.md, "Upstream MCP providers" and "Names the model sees"): a name that is
 * a catalog name, holds no `__` (reserved for the names toolgate gives clashing tools, so one
 * provider's tool cannot be offered under another's), is listed once, and claims a catalog id no
 * other name of the provider claims. Each refused name is reported with its reason.
 */
import { TOOL_ID_PATTERN, UNPRINTABLE_CLASS } from '../../core/index.js';
import { reservedNameProblem } from '../../domain/catalog/index.js';

const TOOL_ID_RE = new RegExp(TOOL_ID_PATTERN);
const TOOL_NAME_RE = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;
/** A character that does not read as itself (core/visible-text.ts), in an entry's key or name. */
const UNPRINTABLE_RE = new RegExp(`[${UNPRINTABLE_CLASS}]`, 'u');

/** A listed name not imported, and why (refresh reports and `provider.refreshed` events). */
export interface SkippedName {
  readonly name: string;
  readonly reason: string;
}

/** Why `name` (claiming `toolId`) is not imported, or null. */
function skipReason(
  name: string,
  toolId: string,
  taken: { readonly names: ReadonlySet<string>; readonly ids: ReadonlySet<string> },
  owner: string | undefined,
): string | null {
  if (!TOOL_NAME_RE.test(name)) {
    return 'not a tool name (letters, digits, _ or -, starting with a letter, at most 64)';
  }
  const reserved = reservedNameProblem(name);
  if (reserved !== null) return reserved;
  if (!TOOL_ID_RE.test(toolId)) return `${toolId} is not a valid catalog id`;
  if (taken.names.has(name)) return 'listed more than once';
  if (taken.ids.has(toolId) || (owner !== undefined && owner !== name)) {
    return `another listed name claims the catalog id ${toolId} (names differing only in case)`;
  }
  return null;
}

/**
 * Splits a listing into what is imported and what is skipped. `idOwner`: the name that already
 * holds each stored catalog id. Catalog ids are lower case: two upstream names that differ only in
 * case would share one id (one could stand in for the other), so only the first name to claim an
 * id is imported.
 */
export function admitListedTools<T extends { readonly name: string }>(
  provider: string,
  listed: readonly T[],
  idOwner: ReadonlyMap<string, string>,
): { readonly admitted: T[]; readonly skipped: SkippedName[] } {
  const names = new Set<string>();
  const ids = new Set<string>();
  const admitted: T[] = [];
  const skipped: SkippedName[] = [];
  for (const tool of listed) {
    const toolId = `${provider}.${tool.name.toLowerCase()}`;
    const reason = skipReason(tool.name, toolId, { names, ids }, idOwner.get(toolId));
    if (reason !== null) {
      skipped.push({ name: tool.name, reason });
      continue;
    }
    names.add(tool.name);
    ids.add(toolId);
    admitted.push(tool);
  }
  return { admitted, skipped };
}

/** The most entries one listing imports, and the longest key: the rest is not imported. */
export const ENTRY_LIMITS = { entries: 1000, keyChars: 2048 } as const;

/**
 * Splits an entry listing (resources, templates, prompts) into what is imported and what is
 * skipped: at most ENTRY_LIMITS.entries, no key past ENTRY_LIMITS.keyChars (the rest not listed
 * one by one but counted in `more`, so the cap stays visible: attack round 11 F9). A
 * key listed more than once (one URI, URI template or prompt name under two definitions) is
 * skipped with that reason and none of its definitions imported, as a tool's name is (attack
 * round 11 F6; INVARIANTS 6, 7): which one a later read would reach is the upstream's to choose.
 * A prompt is listed under its name, so one holding the reserved `__` is skipped with the reason,
 * and so is one whose name differs only in case from a prompt listed before it (names fold case
 * where the model sees them, as tools' do: only the first is imported). A key or prompt name that
 * holds a control, invisible or reordering character is skipped too, as such a tool name is: it
 * would read as another entry's (`gr\u034Feet` beside `greet`; attack round 17, T2).
 */
export function admitListedEntries<
  T extends { readonly kind: string; readonly key: string; readonly name: string },
>(
  listed: readonly T[],
): {
  readonly admitted: T[];
  readonly skipped: SkippedName[];
  readonly more: number;
} {
  const admitted: T[] = [];
  const skipped: SkippedName[] = [];
  let more = 0;
  const twice = listedTwice(listed);
  const seen = new Set<string>();
  const prompts = new Set<string>();
  for (const entry of listed) {
    const label = `${entry.kind}:${entry.key}`;
    if (seen.has(label)) continue;
    if (seen.size >= ENTRY_LIMITS.entries || entry.key.length > ENTRY_LIMITS.keyChars) {
      more += 1;
      continue;
    }
    seen.add(label);
    const prompt = entry.kind === 'prompt';
    const reserved = prompt ? reservedNameProblem(entry.name) : null;
    if (twice.has(label)) skipped.push({ name: label, reason: 'listed more than once' });
    else if (UNPRINTABLE_RE.test(entry.key) || (prompt && UNPRINTABLE_RE.test(entry.name))) {
      skipped.push({
        name: label,
        reason: 'holds a control, invisible or reordering character (it would read as another)',
      });
    } else if (reserved !== null) skipped.push({ name: label, reason: reserved });
    else if (prompt && prompts.has(entry.name.toLowerCase())) {
      skipped.push({
        name: label,
        reason:
          'another listed prompt has this name in another case (names differing only in case)',
      });
    } else {
      if (prompt) prompts.add(entry.name.toLowerCase());
      admitted.push(entry);
    }
  }
  return { admitted, skipped, more };
}

/** The `kind:key` labels a listing holds more than once. */
export function listedTwice(
  listed: readonly { readonly kind: string; readonly key: string }[],
): ReadonlySet<string> {
  const once = new Set<string>();
  const twice = new Set<string>();
  for (const { kind, key } of listed) {
    const label = `${kind}:${key}`;
    if (once.has(label)) twice.add(label);
    else once.add(label);
  }
  return twice;
}
