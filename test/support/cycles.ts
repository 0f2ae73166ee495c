/**
 * @module Cycles of a directed graph: Tarjan's strongly connected components of more than one
 * node, or a node that points at itself. The house rules use it on folders, the import-cycle test
 * on files (docs/architecture.md §2).
 */

export function cycles(graph: ReadonlyMap<string, Iterable<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      // An edge to a node the graph does not hold (a file outside the scan) is no cycle.
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || [...(graph.get(v) ?? [])].includes(v)) {
        found.push(component.sort());
      }
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}
