/**
 * @module Which tools of an upstream listing may be imported under their names (C3;
 * docs/tools-and-catalog.md, "Upstream MCP providers" and "Names the model sees"): a name that is
 * a catalog name, holds no `__` (reserved for the names toolgate gives clashing tools, so one
 * provider's tool cannot be offered under another's), is listed once, and claims a catalog id no
 * other name of the provider claims. Each refused name is reported with its reason.
 */
import { TOOL_ID_PATTERN } from '../../core/index.js';
import { reservedNameProblem } from '../../domain/catalog/index.js';

const TOOL_ID_RE = new RegExp(TOOL_ID_PATTERN);
const TOOL_NAME_RE = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;

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
