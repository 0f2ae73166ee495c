/**
 * @module What compiling an authored schema found, kept by the schema's exact JSON text
 * (docs/architecture.md §8, C3, "Bulk registration"): catalogs register thousands of tools with a
 * handful of distinct schemas, and a compile is milliseconds of code generation. The verdict is a
 * pure function of the schema and where it sits (compileAuthoredSchema leaves nothing behind in
 * its instance), so a schema of the same text gets the same verdict and the same validator. A
 * schema holding anything JSON cannot spell exactly (a non-finite number, a function, a class
 * instance) is compiled each time. Bounded: the least recently used entry goes first.
 */
import { compileAuthoredSchema } from './json-schema-validator.js';
import type { JsonSchemaObject } from './tool-definition.js';

const MEMO_MAX = 500;
/** Larger schemas are compiled each time (they are rarely repeated, and would hold memory). */
const MEMO_MAX_CHARS = 8_192;
type Compiled = ReturnType<typeof compileAuthoredSchema>;
const compiledSchemas = new Map<string, Compiled>();

/** `compileAuthoredSchema`, once per distinct schema text and location. */
export function compileAuthoredSchemaOnce(
  ajvFor: Parameters<typeof compileAuthoredSchema>[0],
  schema: JsonSchemaObject,
  base: string,
): Compiled {
  const text = exactJson(schema);
  if (text === null || text.length > MEMO_MAX_CHARS) {
    return compileAuthoredSchema(ajvFor, schema, base);
  }
  const key = `${base}\u0000${text}`;
  const hit = compiledSchemas.get(key);
  if (hit) {
    // Most recently used last: the oldest is the least recently used.
    compiledSchemas.delete(key);
    compiledSchemas.set(key, hit);
    return hit;
  }
  const compiled = compileAuthoredSchema(ajvFor, schema, base);
  if (compiledSchemas.size >= MEMO_MAX) {
    const oldest = compiledSchemas.keys().next();
    if (!oldest.done) compiledSchemas.delete(oldest.value);
  }
  compiledSchemas.set(key, compiled);
  return compiled;
}

const PRIMITIVES: ReadonlySet<string> = new Set(['string', 'number', 'boolean']);

/** The JSON text of plain JSON data, or null when `value` holds anything else. */
export function exactJson(value: unknown): string | null {
  let plain = true;
  const text = JSON.stringify(value, function (this: unknown, key: string, v: unknown) {
    // The value as held, before any toJSON: a Date or a class instance is not plain data.
    const held = key === '' ? v : (this as Record<string, unknown>)[key];
    if (typeof held === 'number') {
      if (!Number.isFinite(held)) plain = false;
    } else if (typeof held === 'object' && held !== null) {
      const proto: unknown = Object.getPrototypeOf(held);
      if (!Array.isArray(held) && proto !== Object.prototype && proto !== null) plain = false;
    } else if (held !== null && !PRIMITIVES.has(typeof held)) {
      plain = false;
    }
    return v;
  });
  return plain && typeof text === 'string' ? text : null;
}
