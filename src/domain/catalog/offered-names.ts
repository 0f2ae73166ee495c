/**
 * @module The names agents are offered tools and prompts under (docs/tools-and-catalog.md, "Names
 * the model sees"; INVARIANTS 6). An entry is offered under its own name unless another entry of
 * the same set has that name too; then it is offered under its catalog id with dots as `__`
 * (`zz.get_order` → `zz__get_order`). So `__` is reserved: an upstream name holding it could stand
 * for another provider's entry and is never imported nor offered; and a set in which two entries
 * would still answer to one name, or to two that differ only in case, offers neither of them.
 * Pure.
 */

/** What joins the parts of a catalog id in the name of an entry whose own name clashes. */
export const NAME_SEPARATOR = '__';

/** The name an entry whose own name clashes is offered under: its catalog id, dots as `__`. */
export function idName(id: string): string {
  return id.replaceAll('.', NAME_SEPARATOR);
}

/**
 * Why an upstream tool or prompt may not be imported or offered under `name`, or null. Never
 * rewrites the name: an escaped spelling would be one more name to collide with.
 */
export function reservedNameProblem(name: string): string | null {
  return name.includes(NAME_SEPARATOR)
    ? `the name holds "${NAME_SEPARATOR}", which toolgate reserves for the names it gives clashing tools and prompts`
    : null;
}

/**
 * The entries of a set (each by its unique catalog id) that must not be offered because another
 * entry answers to the same string — as its offered name, or, where `byId` (a tool may be called
 * by its id), as its id — or to one that differs from it only in case: models and some clients
 * fold case, and an upstream listing two such names is refused at import (listed-names.ts). By
 * id, why. Deny by default: none of a clashing group is picked.
 */
export function clashingNames(
  entries: readonly { readonly id: string; readonly name: string }[],
  byId: boolean,
): Map<string, string> {
  const claims = new Map<string, { ids: Set<string>; spellings: Set<string> }>();
  const claim = (text: string, id: string) => {
    const folded = text.toLowerCase();
    const c = claims.get(folded) ?? { ids: new Set<string>(), spellings: new Set<string>() };
    c.ids.add(id);
    c.spellings.add(text);
    claims.set(folded, c);
  };
  for (const e of entries) {
    claim(e.name, e.id);
    if (byId) claim(e.id, e.id);
  }
  const out = new Map<string, string>();
  for (const { ids, spellings } of claims.values()) {
    if (ids.size < 2) continue;
    const all = [...ids].sort().join(', ');
    const names = [...spellings].sort();
    const reason =
      names.length > 1
        ? `the names ${names.map((n) => `"${n}"`).join(', ')} differ only in case and would name more than one of ${all}; none of them is offered`
        : `the name "${names[0]}" would name more than one of ${all}; none of them is offered`;
    for (const id of ids) out.set(id, reason);
  }
  return out;
}
