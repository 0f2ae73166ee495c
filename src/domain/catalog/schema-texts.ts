/** @module Collects the human-readable strings inside a JSON Schema, where poisoning also hides. */
import { joinPointer } from '../../core/index.js';

const TEXT_KEYWORDS = new Set(['description', 'title', '$comment']);

/** Every `description`, `title` and `$comment` string, with its JSON pointer under `base`. */
export function schemaTexts(schema: unknown, base: string): { field: string; text: string }[] {
  const out: { field: string; text: string }[] = [];
  const walk = (node: unknown, at: string, depth: number): void => {
    if (depth > 64 || node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const [i, item] of node.entries()) walk(item, joinPointer(at, i), depth + 1);
      return;
    }
    for (const [key, value] of Object.entries(node)) {
      const here = joinPointer(at, key);
      if (TEXT_KEYWORDS.has(key) && typeof value === 'string')
        out.push({ field: here, text: value });
      // Property names are data under `properties`; their values are schemas again.
      else walk(value, here, depth + 1);
    }
  };
  walk(schema, base, 0);
  return out;
}
