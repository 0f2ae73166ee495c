/**
 * @module Finds every regular expression a JSON Schema makes the gate evaluate (`pattern` values
 * and `patternProperties` keys, in every subschema) and refuses those the linear-time engine
 * cannot run, each under its own JSON pointer.
 */
import { joinPointer, type Problem, problem } from '../../core/index.js';
import { unsupportedPatternReason } from './linear-regexp.js';

/** Keywords whose value is one subschema. */
const SCHEMA_KEYWORDS = new Set([
  'additionalProperties',
  'unevaluatedProperties',
  'items',
  'additionalItems',
  'unevaluatedItems',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'contentSchema',
]);
/** Keywords whose value is an array of subschemas (`items` as an array is draft-07's tuple). */
const SCHEMA_ARRAY_KEYWORDS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items']);
/** Keywords whose value maps names to subschemas. */
const SCHEMA_MAP_KEYWORDS = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
  'dependencies',
]);

const MAX_DEPTH = 64;

/** Every pattern in `schema` with its JSON pointer under `base`; data keywords are not schemas. */
export function schemaPatterns(
  schema: unknown,
  base: string,
): { pointer: string; source: string }[] {
  const out: { pointer: string; source: string }[] = [];
  const walk = (node: unknown, at: string, depth: number): void => {
    if (depth > MAX_DEPTH || typeof node !== 'object' || node === null || Array.isArray(node))
      return;
    for (const [key, value] of Object.entries(node)) {
      const here = joinPointer(at, key);
      if (key === 'pattern' && typeof value === 'string')
        out.push({ pointer: here, source: value });
      else if (SCHEMA_KEYWORDS.has(key) && !Array.isArray(value)) walk(value, here, depth + 1);
      else if (SCHEMA_ARRAY_KEYWORDS.has(key) && Array.isArray(value)) {
        for (const [i, item] of value.entries()) walk(item, joinPointer(here, i), depth + 1);
      } else if (SCHEMA_MAP_KEYWORDS.has(key) && typeof value === 'object' && value !== null) {
        for (const [name, sub] of Object.entries(value)) {
          const member = joinPointer(here, name);
          if (key === 'patternProperties') out.push({ pointer: member, source: name });
          walk(sub, member, depth + 1);
        }
      }
    }
  };
  walk(schema, base, 0);
  return out;
}

/** One problem per pattern the gate could not match in linear time (rule `schema.pattern_unsupported`). */
export function unsupportedPatternProblems(schema: unknown, base: string): Problem[] {
  const problems: Problem[] = [];
  for (const { pointer, source } of schemaPatterns(schema, base)) {
    const reason = unsupportedPatternReason(source);
    if (reason) problems.push(problem(pointer, reason, 'schema.pattern_unsupported'));
  }
  return problems;
}
