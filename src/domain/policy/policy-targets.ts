/** @module Finds which arguments a tool's input schema marks as URLs or paths, and reads them out of a call. */
import { joinPointer } from '../../core/index.js';
import { CODE_LANGUAGES, type CodeLanguage } from './code/index.js';

export type PolicyTargetKind = 'url' | 'path' | 'code';

export interface PolicyTarget {
  /** JSON pointer into the arguments; a `*` token stands for every element or member there. */
  readonly pointer: string;
  readonly kind: PolicyTargetKind;
  /** For kind `code`: the language `"x-toolgate-code"` names. */
  readonly language?: CodeLanguage;
}

/**
 * Deepest argument nesting the schema walk follows. Values nested deeper are not covered by the
 * targets, so the gate must refuse arguments deeper than this (`exceedsDepth(args,
 * MAX_SCHEMA_DEPTH)` from core) before trusting them.
 */
export const MAX_SCHEMA_DEPTH = 32;

/** Schema nodes one walk may visit; past it the schema is refused rather than half-walked. */
export const MAX_SCHEMA_VISITS = 10_000;

/** The `format`s that mark a URL argument too, beside `"x-toolgate": "url"` (older definitions, upstream tools). */
export const URL_FORMATS: readonly string[] = ['uri', 'url', 'iri'];
const URL_FORMAT_SET = new Set(URL_FORMATS);

/** Keywords whose subschemas describe the same value as their parent. */
const SAME_VALUE_LISTS = ['allOf', 'anyOf', 'oneOf'] as const;
const SAME_VALUE_SINGLES = ['then', 'else'] as const;
/** Keywords whose subschemas describe every element or member not otherwise named. */
const EVERY_CHILD_SINGLES = [
  'additionalProperties',
  'unevaluatedProperties',
  'additionalItems',
  'unevaluatedItems',
  'contains',
] as const;

type Schema = Readonly<Record<string, unknown>>;

/** A JSON object; schemas and argument objects alike. */
function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads only own members: a schema's keyword never comes from a prototype. */
function own(schema: Schema, key: string): unknown {
  return Object.hasOwn(schema, key) ? schema[key] : undefined;
}

function ownSchema(schema: Schema, key: string): Schema | undefined {
  const value = own(schema, key);
  return isSchema(value) ? value : undefined;
}

function ownList(schema: Schema, key: string): unknown[] {
  const value = own(schema, key);
  return Array.isArray(value) ? value : [];
}

function ownMembers(schema: Schema, key: string): [string, unknown][] {
  const value = ownSchema(schema, key);
  return value === undefined ? [] : Object.entries(value);
}

/** Decodes one RFC 6901 reference token. */
function unescapeToken(token: string): string {
  return token.replaceAll('~1', '/').replaceAll('~0', '~');
}

/** Follows a `#…` reference inside `root`; anything else (remote, malformed) is undefined. */
function resolveLocalRef(root: Schema, ref: string): Schema | undefined {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    let token: string;
    try {
      token = unescapeToken(decodeURIComponent(raw));
    } catch {
      return undefined;
    }
    if (Array.isArray(node)) {
      node = isArrayIndex(token) ? node[Number(token)] : undefined;
    } else if (isSchema(node) && Object.hasOwn(node, token)) {
      node = own(node, token);
    } else {
      return undefined;
    }
  }
  return isSchema(node) ? node : undefined;
}

function isArrayIndex(token: string): boolean {
  if (token === '0') return true;
  if (token.length === 0 || token.length > 15 || token.startsWith('0')) return false;
  for (const ch of token) if (ch < '0' || ch > '9') return false;
  return true;
}

/**
 * Lists the arguments `inputSchema` marks for argument policy: anything with `"x-toolgate":
 * "url"` or a `format` of `uri`, `url` or `iri` (kind `url`) and anything with `"x-toolgate":
 * "path"` (kind `path`) and strings with `"x-toolgate-code": "javascript"` or `"python"` (kind
 * `code`, with its language), as JSON
 * pointers into the arguments. Follows `properties`, `items`/`prefixItems` (and the older array
 * form of `items`), the keywords that apply to every member (`additionalProperties`,
 * `patternProperties`…, as `*`), `allOf`/`anyOf`/`oneOf`/`then`/`else`, and local `$ref`s.
 *
 * It errs towards checking too much: a mark inside any branch of `anyOf` applies to the value
 * whichever branch it matches, and a `*` member pointer covers declared properties as well.
 * Remote `$ref`s are not followed (the catalog should refuse them). Throws a RangeError for a
 * schema that expands past MAX_SCHEMA_VISITS nodes: a schema that cannot be walked whole must
 * not be half-checked.
 */
export function policyTargets(inputSchema: unknown): PolicyTarget[] {
  if (!isSchema(inputSchema)) return [];
  const root = inputSchema;
  const found = new Map<string, PolicyTarget>();
  let visits = 0;

  const add = (pointer: string, kind: PolicyTargetKind, language?: CodeLanguage): void => {
    const key = `${kind} ${language ?? ''} ${pointer}`;
    found.set(key, language === undefined ? { pointer, kind } : { pointer, kind, language });
  };

  // `sameValue` holds the schemas already applied to this pointer, so `$ref` and combinator
  // cycles that do not descend into the value stop instead of looping.
  const walk = (schema: Schema, pointer: string, depth: number, sameValue: Set<Schema>): void => {
    if (sameValue.has(schema)) return;
    sameValue.add(schema);
    visits += 1;
    if (visits > MAX_SCHEMA_VISITS) {
      throw new RangeError(`input schema expands past ${MAX_SCHEMA_VISITS} nodes`);
    }

    const format = own(schema, 'format');
    if (typeof format === 'string' && URL_FORMAT_SET.has(format)) add(pointer, 'url');
    const mark = own(schema, 'x-toolgate');
    if (mark === 'url') add(pointer, 'url');
    if (mark === 'path') add(pointer, 'path');
    const code = own(schema, 'x-toolgate-code');
    const language = CODE_LANGUAGES.find((l) => l === code);
    if (language !== undefined) add(pointer, 'code', language);

    const ref = own(schema, '$ref');
    if (typeof ref === 'string') {
      const target = resolveLocalRef(root, ref);
      if (target !== undefined) walk(target, pointer, depth, sameValue);
    }
    for (const key of SAME_VALUE_LISTS) {
      for (const sub of ownList(schema, key)) {
        if (isSchema(sub)) walk(sub, pointer, depth, sameValue);
      }
    }
    for (const key of SAME_VALUE_SINGLES) {
      const sub = ownSchema(schema, key);
      if (sub !== undefined) walk(sub, pointer, depth, sameValue);
    }
    for (const [, sub] of ownMembers(schema, 'dependentSchemas')) {
      if (isSchema(sub)) walk(sub, pointer, depth, sameValue);
    }

    if (depth >= MAX_SCHEMA_DEPTH) return;
    const child = (sub: unknown, token: string | number): void => {
      if (isSchema(sub)) walk(sub, joinPointer(pointer, token), depth + 1, new Set());
    };
    for (const [name, sub] of ownMembers(schema, 'properties')) child(sub, name);
    for (const [, sub] of ownMembers(schema, 'patternProperties')) child(sub, '*');
    for (const key of EVERY_CHILD_SINGLES) child(ownSchema(schema, key), '*');
    for (const [index, sub] of ownList(schema, 'prefixItems').entries()) child(sub, index);
    const items = own(schema, 'items');
    if (Array.isArray(items)) {
      for (const [index, sub] of items.entries()) child(sub, index);
    } else {
      child(items, '*');
    }
  };

  walk(root, '', 0, new Set());
  return [...found.values()];
}

/**
 * The values at `pointer` in `args`, each with its concrete pointer (`*` replaced by the index
 * or member name). A path that is absent yields nothing: presence is the schema's to require.
 * Throws a TypeError for a malformed pointer rather than returning nothing, which would
 * silently skip a check.
 */
export function valuesAt(args: unknown, pointer: string): { pointer: string; value: unknown }[] {
  if (pointer !== '' && !pointer.startsWith('/')) {
    throw new TypeError(`not a JSON pointer: ${JSON.stringify(pointer.slice(0, 100))}`);
  }
  const tokens = pointer === '' ? [] : pointer.slice(1).split('/').map(unescapeToken);
  let current: { pointer: string; value: unknown }[] = [{ pointer: '', value: args }];
  for (const token of tokens) {
    const next: { pointer: string; value: unknown }[] = [];
    for (const { pointer: at, value } of current) {
      for (const [key, member] of membersAt(value, token)) {
        next.push({ pointer: joinPointer(at, key), value: member });
      }
    }
    current = next;
  }
  return current;
}

/** The members of `value` that `token` names: all of them for `*`, else at most the one. */
function membersAt(value: unknown, token: string): [string | number, unknown][] {
  if (Array.isArray(value)) {
    if (token === '*') return value.map((member, index) => [index, member]);
    if (!isArrayIndex(token)) return [];
    const index = Number(token);
    return index < value.length ? [[index, value[index]]] : [];
  }
  if (!isSchema(value)) return [];
  if (token === '*') return Object.entries(value);
  return Object.hasOwn(value, token) ? [[token, value[token]]] : [];
}
