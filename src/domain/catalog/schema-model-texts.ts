/**
 * @module Every string a model reads in a JSON Schema: exports (MCP tools/list, OpenAI, Anthropic)
 * send the schema whole, so instructions hide as well in `enum`, `const`, `default` and `examples`
 * values, in property names and in any other keyword's string as in `description`.
 */
import { joinPointer } from '../../core/index.js';

/**
 * How a text reads: `text` is prose written for the model (description, title, $comment); `key` a
 * property name or other object key; `value` any other string (enum, const, default, examples,
 * pattern, format…).
 */
export type ModelTextKind = 'text' | 'key' | 'value';

export interface ModelText {
  readonly field: string;
  readonly text: string;
  readonly kind: ModelTextKind;
}

const PROSE_KEYWORDS = new Set(['description', 'title', '$comment']);
/** A dialect URI names the meta-schema; it is an identifier, never prose or a link to follow. */
const DIALECT = /^https?:\/\/json-schema\.org\/(?:draft[-/][0-9a-z-]+\/)?schema#?$/;

const MAX_DEPTH = 64;

/** Every string and every object key inside `schema`, with its JSON pointer under `base`. */
export function schemaModelTexts(schema: unknown, base: string): ModelText[] {
  const out: ModelText[] = [];
  const walk = (node: unknown, at: string, depth: number, parentKey: string | null): void => {
    if (depth > MAX_DEPTH) return;
    if (typeof node === 'string') {
      if (parentKey === '$schema' && DIALECT.test(node)) return;
      const kind = parentKey !== null && PROSE_KEYWORDS.has(parentKey) ? 'text' : 'value';
      out.push({ field: at, text: node, kind });
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    if (Array.isArray(node)) {
      // Array items inherit the keyword they sit under (`examples: ["…"]` are values).
      for (const [i, item] of node.entries())
        walk(item, joinPointer(at, i), depth + 1, parentKey === null ? null : `${parentKey}[]`);
      return;
    }
    for (const [key, value] of Object.entries(node)) {
      const here = joinPointer(at, key);
      out.push({ field: here, text: key, kind: 'key' });
      walk(value, here, depth + 1, key);
    }
  };
  walk(schema, base, 0, null);
  return out;
}
