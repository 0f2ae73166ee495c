/** @module Breaking-change detection between consecutive versions of a tool's schemas (C2). */
import semver from 'semver';
import { linearTest } from './linear-regexp.js';

export type JsonSchema = boolean | { readonly [k: string]: unknown };

export type SchemaBreakKind =
  | 'property_removed'
  | 'required_added'
  | 'type_narrowed'
  | 'enum_narrowed'
  | 'additional_properties_tightened'
  | 'constraint_tightened'
  | 'output_property_removed'
  | 'output_required_removed'
  | 'output_type_changed'
  | 'output_enum_widened'
  | 'not_provably_compatible';

export interface SchemaBreak {
  readonly kind: SchemaBreakKind;
  /** JSON pointer into the new definition; for something removed, where it used to be. */
  readonly pointer: string;
  readonly message: string;
}

export interface ToolSchemas {
  readonly input_schema: JsonSchema;
  readonly output_schema: JsonSchema;
}

/**
 * Every way the new version can break a caller written against the old one, sorted by pointer.
 * Inputs are contravariant (the new schema must accept every value the old one did); outputs are
 * covariant (the new schema may only produce values the old one promised, and keep promising
 * every property the old one declared). One deliberate leniency: a new output property is never a
 * break, even where the old output schema was closed, because callers ignore fields they do not
 * know. Whatever cannot be compared soundly is reported as not provably compatible.
 */
export function findBreakingChanges(oldDef: ToolSchemas, newDef: ToolSchemas): SchemaBreak[] {
  const breaks: SchemaBreak[] = [];
  const input = makeContext('input', '/input_schema', oldDef.input_schema, newDef.input_schema);
  compare(input, oldDef.input_schema, newDef.input_schema, input.prefix);
  const output = makeContext(
    'output',
    '/output_schema',
    newDef.output_schema,
    oldDef.output_schema,
  );
  compare(output, newDef.output_schema, oldDef.output_schema, output.prefix);
  const seen = new Set<string>();
  for (const b of [...input.breaks, ...output.breaks]) {
    const key = `${b.pointer}\u0000${b.kind}\u0000${b.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    breaks.push(b);
  }
  return breaks.sort(
    (a, b) =>
      cmpStrings(a.pointer, b.pointer) ||
      cmpStrings(a.kind, b.kind) ||
      cmpStrings(a.message, b.message),
  );
}

/**
 * Whether `newVersion` leaves the npm caret range of `oldVersion`, i.e. callers pinned to `^old`
 * would not silently receive it: 1.x → 2.0.0, 0.1.x → 0.2.0, 0.0.1 → 0.0.2, and a prerelease of
 * the next major (1.4.0 → 2.0.0-rc.1). Invalid versions or downgrades are never a major bump,
 * so a breaking change paired with them is refused.
 */
export function isMajorBump(oldVersion: string, newVersion: string): boolean {
  const oldV = semver.parse(oldVersion);
  const newV = semver.parse(newVersion);
  if (!oldV || !newV || !semver.gt(newV, oldV)) return false;
  // includePrerelease: without it a 1.5.0-beta after 1.4.0 would fall outside ^1.4.0.
  return !semver.satisfies(newV, `^${oldV.version}`, { includePrerelease: true });
}

type SchemaObject = { readonly [k: string]: unknown };
type Direction = 'input' | 'output';
type Category = 'type' | 'enum' | 'constraint' | 'additional' | 'required' | 'removed' | 'opaque';

const KINDS: Readonly<Record<Direction, Readonly<Record<Category, SchemaBreakKind>>>> = {
  input: {
    type: 'type_narrowed',
    enum: 'enum_narrowed',
    constraint: 'constraint_tightened',
    additional: 'additional_properties_tightened',
    required: 'required_added',
    removed: 'property_removed',
    opaque: 'not_provably_compatible',
  },
  output: {
    type: 'output_type_changed',
    enum: 'output_enum_widened',
    // A relaxed output limit widens the set of values callers may receive, like a wider type.
    constraint: 'output_type_changed',
    additional: 'output_type_changed',
    required: 'output_required_removed',
    removed: 'output_property_removed',
    opaque: 'not_provably_compatible',
  },
};

/**
 * Both directions reduce to one question — is every value of the `narrow` schema valid under the
 * `wide` one? — asked old-in-new for inputs and new-in-old for outputs. Pointers always follow
 * the new side.
 */
interface Context {
  readonly dir: Direction;
  readonly prefix: string;
  readonly narrowRoot: JsonSchema;
  readonly wideRoot: JsonSchema;
  readonly breaks: SchemaBreak[];
  /** Pairs already compared; recursive `$ref`s would otherwise never terminate. */
  readonly visited: Map<object, Set<object>>;
}

function makeContext(
  dir: Direction,
  prefix: string,
  narrowRoot: JsonSchema,
  wideRoot: JsonSchema,
): Context {
  return { dir, prefix, narrowRoot, wideRoot, breaks: [], visited: new Map() };
}

const newIsWide = (ctx: Context): boolean => ctx.dir === 'input';

function report(ctx: Context, category: Category, pointer: string, message: string): void {
  ctx.breaks.push({ kind: KINDS[ctx.dir][category], pointer, message });
}

/** Orders a narrow/wide pair as old/new, for messages. */
function oldNew<T>(ctx: Context, narrow: T, wide: T): { readonly old: T; readonly new: T } {
  return newIsWide(ctx) ? { old: narrow, new: wide } : { old: wide, new: narrow };
}

// Keywords that never change which values validate; editing them must not force a major bump.
const NON_ASSERTIONS = new Set([
  'title',
  'description',
  'examples',
  '$comment',
  'default',
  'deprecated',
  'readOnly',
  'writeOnly',
  'contentMediaType',
  'contentEncoding',
  'contentSchema',
  '$schema',
  '$id',
  '$anchor',
  '$dynamicAnchor',
  '$vocabulary',
  '$defs',
  'definitions',
]);

const isIgnorable = (keyword: string): boolean =>
  NON_ASSERTIONS.has(keyword) || keyword.startsWith('x-');

// Keywords with dedicated comparisons; anything outside these and the opaque groups is unknown
// to this module, so any change to it is reported rather than ignored.
const COMPARED = new Set([
  'type',
  'enum',
  'const',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'properties',
  'required',
  'additionalProperties',
  'patternProperties',
  'minProperties',
  'maxProperties',
  'items',
  'prefixItems',
  'minItems',
  'maxItems',
  'uniqueItems',
  '$ref',
  'anyOf',
  'allOf',
  'unevaluatedProperties',
  'unevaluatedItems',
]);

// Conjuncts compared only for equality; keywords in one group only mean something together.
const OPAQUE_GROUPS: readonly (readonly string[])[] = [
  ['oneOf'],
  ['not'],
  ['if', 'then', 'else'],
  ['contains', 'minContains', 'maxContains'],
  ['propertyNames'],
  ['dependentRequired'],
  ['dependentSchemas'],
  ['$dynamicRef'],
];
const OPAQUE_KEYWORDS = new Set(OPAQUE_GROUPS.flat());

// One shared object for `true`, so the visited-pair guard also stops recursion through it.
const UNIVERSAL: SchemaObject = Object.freeze({});

const ALL_TYPES = ['array', 'boolean', 'integer', 'null', 'number', 'object', 'string'] as const;

function compare(ctx: Context, narrowIn: JsonSchema, wideIn: JsonSchema, pointerIn: string): void {
  const n = inlineRef(ctx, narrowIn, ctx.narrowRoot, !newIsWide(ctx), pointerIn);
  const w = inlineRef(ctx, wideIn, ctx.wideRoot, newIsWide(ctx), n.pointer);
  const ptr = w.pointer;
  if (n.schema === false || w.schema === true || isUniversal(w.schema)) return;
  if (w.schema === false) {
    report(
      ctx,
      'type',
      ptr,
      newIsWide(ctx)
        ? `${label(ctx, ptr)} is now the false schema and rejects every value`
        : `${label(ctx, ptr)} was the false schema (never present) and may now hold a value`,
    );
    return;
  }
  const N: SchemaObject = n.schema === true ? UNIVERSAL : n.schema;
  const W: SchemaObject = w.schema;
  if (alreadyVisited(ctx, N, W)) return;

  const values = finiteValues(N);
  if (values !== undefined && values.length === 0) return;
  const nTypes = values ? new Set(values.map(jsonType)) : declaredTypes(N);
  const wTypes = declaredTypes(W);

  if (values) {
    compareFiniteValues(ctx, values, N, W, ptr);
  } else {
    compareTypes(ctx, nTypes, wTypes, ptr);
    compareEnum(ctx, W, ptr);
    if (acceptsType(nTypes, 'string') && acceptsType(wTypes, 'string')) {
      compareStrings(ctx, N, W, ptr);
    }
    if (acceptsType(nTypes, 'number') && acceptsType(wTypes, 'number')) {
      compareNumbers(ctx, N, W, ptr);
    }
  }
  if (acceptsType(nTypes, 'object') && acceptsType(wTypes, 'object')) {
    compareObjects(ctx, N, W, ptr);
  }
  if (acceptsType(nTypes, 'array') && acceptsType(wTypes, 'array')) {
    compareArrays(ctx, N, W, ptr);
  }
  compareApplicators(ctx, N, W, ptr);
}

function alreadyVisited(ctx: Context, narrow: object, wide: object): boolean {
  let partners = ctx.visited.get(narrow);
  if (!partners) {
    partners = new Set();
    ctx.visited.set(narrow, partners);
  }
  if (partners.has(wide)) return true;
  partners.add(wide);
  return false;
}

/**
 * Follows a `$ref` that is the schema's only assertion, so `{ $ref }` and its target compare the
 * same. When the followed side is the new one the pointer moves to the target, which is where a
 * fix belongs.
 */
function inlineRef(
  ctx: Context,
  schema: JsonSchema,
  root: JsonSchema,
  isNewSide: boolean,
  pointer: string,
): { readonly schema: JsonSchema; readonly pointer: string } {
  let current = schema;
  let ptr = pointer;
  const followed = new Set<JsonSchema>();
  while (isSchemaObject(current) && isRefOnly(current) && !followed.has(current)) {
    followed.add(current);
    const target = resolveRef(root, current.$ref);
    if (!target) break;
    current = target.schema;
    if (isNewSide) ptr = ctx.prefix + target.pointer;
  }
  return { schema: current, pointer: ptr };
}

function isRefOnly(s: SchemaObject): boolean {
  return typeof s.$ref === 'string' && Object.keys(s).every((k) => k === '$ref' || isIgnorable(k));
}

/** Only same-document JSON-pointer fragments resolve; authored schemas never fetch remote refs. */
function resolveRef(
  root: JsonSchema,
  ref: unknown,
): { readonly schema: JsonSchema; readonly pointer: string } | undefined {
  if (typeof ref !== 'string' || !ref.startsWith('#')) return undefined;
  let fragment: string;
  try {
    fragment = decodeURIComponent(ref.slice(1));
  } catch {
    return undefined;
  }
  if (fragment !== '' && !fragment.startsWith('/')) return undefined;
  let node: unknown = root;
  for (const raw of fragment === '' ? [] : fragment.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) {
      node = /^(0|[1-9]\d*)$/.test(token) ? node[Number(token)] : undefined;
    } else if (isSchemaObject(node) && hasOwn(node, token)) {
      node = node[token];
    } else {
      return undefined;
    }
  }
  return isSchema(node) ? { schema: node, pointer: fragment } : undefined;
}

// ---------------------------------------------------------------------------------------------
// type, enum, const

function compareTypes(
  ctx: Context,
  nTypes: ReadonlySet<string> | undefined,
  wTypes: ReadonlySet<string> | undefined,
  ptr: string,
): void {
  if (!wTypes) return;
  const lost = (nTypes ? [...nTypes] : [...ALL_TYPES])
    .filter((t) => !typeAccepts(wTypes, t))
    .sort();
  if (lost.length === 0) return;
  const { old, new: now } = oldNew(ctx, nTypes, wTypes);
  const change = `from ${formatTypes(old)} to ${formatTypes(now)}`;
  report(
    ctx,
    'type',
    ptr,
    newIsWide(ctx)
      ? `${label(ctx, ptr)} type narrowed ${change}; values of type ${lost.join(', ')} are now rejected`
      : `${label(ctx, ptr)} type changed ${change}; callers may now receive ${lost.join(', ')}`,
  );
}

function compareEnum(ctx: Context, W: SchemaObject, ptr: string): void {
  const allowed = enumeratedValues(W);
  if (!allowed) return;
  report(
    ctx,
    'enum',
    ptr,
    newIsWide(ctx)
      ? `${label(ctx, ptr)} is now restricted to ${formatValues(allowed)}; other values are rejected`
      : `${label(ctx, ptr)} was restricted to ${formatValues(allowed)} and no longer is; callers may receive other values`,
  );
}

/**
 * When the narrow side is a finite set (enum/const), each value is checked against the wide
 * side's assertions directly, which is exact where comparing keyword to keyword is not: enum
 * ["a"] stays compatible with a new `maxLength: 1`.
 */
function compareFiniteValues(
  ctx: Context,
  values: readonly unknown[],
  N: SchemaObject,
  W: SchemaObject,
  ptr: string,
): void {
  const failures = new Map<string, unknown[]>();
  for (const v of values) {
    for (const keyword of failedValueKeywords(v, W, N)) {
      const list = failures.get(keyword) ?? [];
      list.push(v);
      failures.set(keyword, list);
    }
  }
  for (const keyword of [...failures.keys()].sort()) {
    const rejected = failures.get(keyword) ?? [];
    const category: Category =
      keyword === 'type'
        ? 'type'
        : keyword === 'enum' || keyword === 'const'
          ? 'enum'
          : 'constraint';
    const what = formatValues(rejected);
    let message: string;
    if (newIsWide(ctx)) {
      message =
        category === 'enum'
          ? `${label(ctx, ptr)} no longer accepts ${what}`
          : `${label(ctx, ptr)} ${keyword} now rejects previously accepted ${what}`;
    } else {
      message =
        category === 'enum'
          ? `${label(ctx, ptr)} may now return ${what}, outside the old ${keyword}`
          : `${label(ctx, ptr)} may now return ${what}, which the old ${keyword} excluded`;
    }
    report(ctx, category, ptr, message);
  }
}

/** Keywords of `schema` that reject `value`; a keyword equal on `known` is already satisfied. */
function failedValueKeywords(value: unknown, schema: SchemaObject, known?: SchemaObject): string[] {
  const failed: string[] = [];
  const same = (k: string): boolean =>
    known !== undefined && hasOwn(known, k) && hasOwn(schema, k) && jsonEqual(known[k], schema[k]);
  const types = declaredTypes(schema);
  if (types && !typeAccepts(types, jsonType(value))) failed.push('type');
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => jsonEqual(e, value))) {
    failed.push('enum');
  }
  if (hasOwn(schema, 'const') && !jsonEqual(schema.const, value)) failed.push('const');
  if (typeof value === 'string') {
    const length = [...value].length;
    const min = num(schema, 'minLength');
    if (min !== undefined && length < min) failed.push('minLength');
    const max = num(schema, 'maxLength');
    if (max !== undefined && length > max) failed.push('maxLength');
    if (typeof schema.pattern === 'string' && !same('pattern') && !matches(schema.pattern, value)) {
      failed.push('pattern');
    }
    // Formats are not re-implemented here; only an unchanged format is known to hold.
    if (schema.format !== undefined && !same('format')) failed.push('format');
  }
  if (typeof value === 'number') {
    const lower = lowerBound(schema);
    if (lower && (value < lower.value || (lower.exclusive && value === lower.value))) {
      failed.push(lower.keyword);
    }
    const upper = upperBound(schema);
    if (upper && (value > upper.value || (upper.exclusive && value === upper.value))) {
      failed.push(upper.keyword);
    }
    const step = num(schema, 'multipleOf');
    if (step !== undefined && !same('multipleOf') && !isMultiple(value, step)) {
      failed.push('multipleOf');
    }
  }
  return failed;
}

function finiteValues(s: SchemaObject): unknown[] | undefined {
  const listed = enumeratedValues(s);
  // The schema's own other assertions can exclude listed values; those were never valid.
  return listed?.filter((v) => failedValueKeywords(v, s, s).length === 0);
}

function enumeratedValues(s: SchemaObject): unknown[] | undefined {
  const hasConst = hasOwn(s, 'const');
  const list = Array.isArray(s.enum) ? (s.enum as unknown[]) : undefined;
  if (!hasConst && !list) return undefined;
  if (!hasConst) return list;
  return list === undefined || list.some((e) => jsonEqual(e, s.const)) ? [s.const] : [];
}

// ---------------------------------------------------------------------------------------------
// strings and numbers

function compareStrings(ctx: Context, N: SchemaObject, W: SchemaObject, ptr: string): void {
  compareLowerCount(ctx, N, W, 'minLength', ptr);
  compareUpperCount(ctx, N, W, 'maxLength', ptr);
  for (const keyword of ['pattern', 'format']) {
    if (!hasOwn(W, keyword) || (hasOwn(N, keyword) && jsonEqual(N[keyword], W[keyword]))) continue;
    // Regex containment is undecidable in practice, so any other pattern counts as a change.
    constraintBreak(ctx, ptr, keyword, N[keyword], W[keyword]);
  }
}

function compareNumbers(ctx: Context, N: SchemaObject, W: SchemaObject, ptr: string): void {
  const nLow = lowerBound(N);
  const wLow = lowerBound(W);
  if (
    wLow &&
    (!nLow ||
      nLow.value < wLow.value ||
      (nLow.value === wLow.value && wLow.exclusive && !nLow.exclusive))
  ) {
    constraintBreak(ctx, ptr, 'lower bound', formatBound(nLow, '>'), formatBound(wLow, '>'));
  }
  const nHigh = upperBound(N);
  const wHigh = upperBound(W);
  if (
    wHigh &&
    (!nHigh ||
      nHigh.value > wHigh.value ||
      (nHigh.value === wHigh.value && wHigh.exclusive && !nHigh.exclusive))
  ) {
    constraintBreak(ctx, ptr, 'upper bound', formatBound(nHigh, '<'), formatBound(wHigh, '<'));
  }
  const wStep = num(W, 'multipleOf');
  const nStep = num(N, 'multipleOf');
  if (
    wStep !== undefined &&
    nStep !== wStep &&
    (nStep === undefined || !isMultiple(nStep, wStep))
  ) {
    constraintBreak(ctx, ptr, 'multipleOf', nStep, wStep);
  }
}

interface Bound {
  readonly value: number;
  readonly exclusive: boolean;
  readonly keyword: string;
}

function lowerBound(s: SchemaObject): Bound | undefined {
  return tightest(s, 'minimum', 'exclusiveMinimum', (a, b) => a > b);
}

function upperBound(s: SchemaObject): Bound | undefined {
  return tightest(s, 'maximum', 'exclusiveMaximum', (a, b) => a < b);
}

function tightest(
  s: SchemaObject,
  inclusiveKey: string,
  exclusiveKey: string,
  tighter: (a: number, b: number) => boolean,
): Bound | undefined {
  const inclusive = num(s, inclusiveKey);
  const exclusive = num(s, exclusiveKey);
  if (exclusive !== undefined && (inclusive === undefined || !tighter(inclusive, exclusive))) {
    return { value: exclusive, exclusive: true, keyword: exclusiveKey };
  }
  return inclusive === undefined
    ? undefined
    : { value: inclusive, exclusive: false, keyword: inclusiveKey };
}

function formatBound(b: Bound | undefined, strict: '>' | '<'): string | undefined {
  return b && `${b.exclusive ? strict : `${strict}=`} ${b.value}`;
}

function isMultiple(value: number, step: number): boolean {
  if (!(step > 0)) return false;
  const q = value / step;
  // Decimal steps such as 0.01 leave floating-point residue in the quotient.
  return Number.isFinite(q) && Math.abs(q - Math.round(q)) < 1e-9;
}

function compareLowerCount(
  ctx: Context,
  N: SchemaObject,
  W: SchemaObject,
  keyword: string,
  ptr: string,
): void {
  const w = num(W, keyword);
  const n = num(N, keyword);
  if (w !== undefined && w > (n ?? 0)) constraintBreak(ctx, ptr, keyword, n, w);
}

function compareUpperCount(
  ctx: Context,
  N: SchemaObject,
  W: SchemaObject,
  keyword: string,
  ptr: string,
): void {
  const w = num(W, keyword);
  const n = num(N, keyword);
  if (w !== undefined && (n === undefined || n > w)) constraintBreak(ctx, ptr, keyword, n, w);
}

function constraintBreak(
  ctx: Context,
  ptr: string,
  what: string,
  narrowValue: unknown,
  wideValue: unknown,
): void {
  const { old, new: now } = oldNew(ctx, narrowValue, wideValue);
  const change = `from ${formatSetting(old)} to ${formatSetting(now)}`;
  report(
    ctx,
    'constraint',
    ptr,
    newIsWide(ctx)
      ? `${label(ctx, ptr)} ${what} tightened ${change}; some previously valid values are now rejected`
      : `${label(ctx, ptr)} ${what} relaxed ${change}; callers may receive values the old contract excluded`,
  );
}

// ---------------------------------------------------------------------------------------------
// objects

function compareObjects(ctx: Context, N: SchemaObject, W: SchemaObject, ptr: string): void {
  const nPatterns = schemaMap(N, 'patternProperties');
  const wPatterns = schemaMap(W, 'patternProperties');
  if ((nPatterns || wPatterns) && !keywordEqual(ctx, 'patternProperties', N, W)) {
    // Patterns decide which keys additionalProperties governs, so no per-key argument is sound.
    opaqueBreak(ctx, ptr, 'patternProperties');
  }
  const nProps = schemaMap(N, 'properties') ?? {};
  const wProps = schemaMap(W, 'properties') ?? {};
  const removedFromOutput = new Set<string>();
  for (const name of sortedUnion(Object.keys(nProps), Object.keys(wProps))) {
    const pPtr = `${ptr}/properties/${escapeToken(name)}`;
    const nProp = hasOwn(nProps, name) ? nProps[name] : undefined;
    const wProp = hasOwn(wProps, name) ? wProps[name] : undefined;
    if (nProp !== undefined && wProp !== undefined) {
      compare(ctx, nProp, wProp, pPtr);
    } else if (nProp !== undefined) {
      const { schemas: governing, via } = governingSchemas(W, name);
      if (governing.length === 1 && governing[0] === false) {
        if (newIsWide(ctx)) {
          report(
            ctx,
            'removed',
            pPtr,
            `${label(ctx, pPtr)} was removed and additional properties are not allowed; inputs that send it are now rejected`,
          );
        }
        // An output property the old contract never mentioned is an addition callers ignore.
        continue;
      }
      const before = ctx.breaks.length;
      for (const g of governing) compare(ctx, nProp, g, pPtr);
      explainUndeclared(
        ctx,
        before,
        newIsWide(ctx)
          ? `'${name}' is no longer declared, so it now falls under ${via}`
          : `'${name}' was undeclared before, so the old contract promised it matched ${via}`,
      );
    } else if (wProp !== undefined) {
      if (!newIsWide(ctx)) {
        removedFromOutput.add(name);
        report(
          ctx,
          'removed',
          pPtr,
          `${label(ctx, pPtr)} was removed from the output; callers reading it will break`,
        );
        continue;
      }
      // Any one governing schema that fits suffices; the first is a sound, simple choice.
      const { schemas, via } = governingSchemas(N, name);
      const before = ctx.breaks.length;
      compare(ctx, schemas[0] ?? true, wProp, pPtr);
      explainUndeclared(
        ctx,
        before,
        `'${name}' is newly declared; the old schema accepted it under ${via}`,
      );
    }
  }

  const nExtra = schemaAt(N, 'additionalProperties') ?? true;
  const wExtra = schemaAt(W, 'additionalProperties') ?? true;
  const extraPtr = `${ptr}/additionalProperties`;
  if (wExtra === false) {
    if (nExtra !== false && newIsWide(ctx)) {
      report(
        ctx,
        'additional',
        extraPtr,
        `${label(ctx, ptr)} additionalProperties tightened to false; inputs with undeclared properties are now rejected`,
      );
    }
  } else if (!isUniversal(wExtra) && nExtra !== false && isUniversal(nExtra)) {
    report(
      ctx,
      'additional',
      extraPtr,
      newIsWide(ctx)
        ? `${label(ctx, ptr)} additionalProperties now constrained to a schema; previously any undeclared property value was accepted`
        : `${label(ctx, ptr)} additionalProperties no longer constrained; callers may receive undeclared properties of any value`,
    );
  } else {
    compare(ctx, nExtra, wExtra, extraPtr);
  }

  const nRequired = stringSet(N.required);
  for (const name of [...stringSet(W.required)].sort()) {
    if (nRequired.has(name) || removedFromOutput.has(name)) continue;
    const pPtr = `${ptr}/properties/${escapeToken(name)}`;
    report(
      ctx,
      'required',
      pPtr,
      newIsWide(ctx)
        ? `${label(ctx, pPtr)} is now required; inputs that omit it are rejected`
        : `${label(ctx, pPtr)} is no longer required in the output; callers may receive responses without it`,
    );
  }
  compareLowerCount(ctx, N, W, 'minProperties', ptr);
  compareUpperCount(ctx, N, W, 'maxProperties', ptr);
}

/**
 * The schemas a key not named in `properties` must satisfy: the matching patternProperties, else
 * additionalProperties.
 */
function governingSchemas(
  s: SchemaObject,
  name: string,
): { readonly schemas: JsonSchema[]; readonly via: string } {
  const patterns = schemaMap(s, 'patternProperties') ?? {};
  const matched = Object.keys(patterns)
    .sort()
    .filter((p) => matches(p, name))
    .map((p) => patterns[p] ?? true);
  return matched.length > 0
    ? { schemas: matched, via: 'patternProperties' }
    : { schemas: [schemaAt(s, 'additionalProperties') ?? true], via: 'additionalProperties' };
}

/** Breaks found against an undeclared property's fallback schema would puzzle without the why. */
function explainUndeclared(ctx: Context, from: number, why: string): void {
  for (let i = from; i < ctx.breaks.length; i++) {
    const b = ctx.breaks[i];
    if (b) ctx.breaks[i] = { ...b, message: `${b.message} (${why})` };
  }
}

// ---------------------------------------------------------------------------------------------
// arrays

function compareArrays(ctx: Context, N: SchemaObject, W: SchemaObject, ptr: string): void {
  if (Array.isArray(N.items) || Array.isArray(W.items)) {
    // Draft-07 tuple form; 2020-12 spells it prefixItems, so only an unchanged one passes.
    if (!keywordEqual(ctx, 'items', N, W)) opaqueBreak(ctx, ptr, 'items');
    return;
  }
  const nPrefix = schemaList(N, 'prefixItems');
  const wPrefix = schemaList(W, 'prefixItems');
  const nItems = schemaAt(N, 'items') ?? true;
  const wItems = schemaAt(W, 'items') ?? true;
  const nMaxItems = num(N, 'maxItems');
  const newPrefix = newIsWide(ctx) ? wPrefix : nPrefix;
  const newHasItems = hasOwn(newIsWide(ctx) ? W : N, 'items');
  const length = Math.max(nPrefix.length, wPrefix.length);
  for (let i = 0; i < length; i++) {
    // A position the narrow side never fills cannot break anything.
    if (nMaxItems !== undefined && nMaxItems <= i) break;
    const nAt = nPrefix[i] ?? nItems;
    const wAt = wPrefix[i] ?? wItems;
    const at = i < newPrefix.length || !newHasItems ? `${ptr}/prefixItems/${i}` : `${ptr}/items`;
    if (wAt === false && nAt !== false) {
      itemCountBreak(ctx, at, i);
    } else {
      compare(ctx, nAt, wAt, at);
    }
  }
  if (nMaxItems === undefined || nMaxItems > length) {
    if (wItems === false && nItems !== false) {
      itemCountBreak(ctx, `${ptr}/items`, length);
    } else {
      compare(ctx, nItems, wItems, `${ptr}/items`);
    }
  }
  compareLowerCount(ctx, N, W, 'minItems', ptr);
  compareUpperCount(ctx, N, W, 'maxItems', ptr);
  if (W.uniqueItems === true && N.uniqueItems !== true) {
    constraintBreak(ctx, ptr, 'uniqueItems', N.uniqueItems ?? false, true);
  }
}

function itemCountBreak(ctx: Context, ptr: string, index: number): void {
  report(
    ctx,
    'constraint',
    ptr,
    newIsWide(ctx)
      ? `${label(ctx, ptr)} no longer allows an item at index ${index}; longer arrays are now rejected`
      : `${label(ctx, ptr)} may now hold an item at index ${index}, where the old contract allowed none`,
  );
}

// ---------------------------------------------------------------------------------------------
// applicators and anything else that cannot be compared keyword by keyword

function compareApplicators(ctx: Context, N: SchemaObject, W: SchemaObject, ptr: string): void {
  compareRefWithSiblings(ctx, N, W, ptr);

  const wAnyOf = schemaList(W, 'anyOf');
  if (hasOwn(W, 'anyOf')) {
    const nAnyOf = schemaList(N, 'anyOf');
    // Adding a branch widens; every narrow branch must survive unchanged in the wide list.
    const covered =
      hasOwn(N, 'anyOf') &&
      nAnyOf.every((nb) => wAnyOf.some((wb) => schemaEqual(nb, wb, rootsOf(ctx))));
    if (!covered) opaqueBreak(ctx, ptr, 'anyOf');
  }
  if (hasOwn(W, 'allOf')) {
    const nAllOf = schemaList(N, 'allOf');
    // Dropping a conjunct widens; every wide conjunct must already be on the narrow side.
    const covered = schemaList(W, 'allOf').every((wb) =>
      nAllOf.some((nb) => schemaEqual(nb, wb, rootsOf(ctx))),
    );
    if (!covered) opaqueBreak(ctx, ptr, 'allOf');
  }
  for (const group of OPAQUE_GROUPS) {
    if (!group.some((k) => hasOwn(W, k))) continue;
    if (group.every((k) => keywordEqual(ctx, k, N, W))) continue;
    opaqueBreak(ctx, ptr, group.find((k) => hasOwn(newIsWide(ctx) ? W : N, k)) ?? group[0] ?? '');
  }
  for (const keyword of ['unevaluatedProperties', 'unevaluatedItems']) {
    // These depend on every other keyword at this level, so any change at all is unprovable.
    if ((hasOwn(N, keyword) || hasOwn(W, keyword)) && !schemaEqual(N, W, rootsOf(ctx))) {
      opaqueBreak(ctx, ptr, keyword);
    }
  }
  for (const keyword of sortedUnion(Object.keys(N), Object.keys(W))) {
    if (isIgnorable(keyword) || COMPARED.has(keyword) || OPAQUE_KEYWORDS.has(keyword)) continue;
    if (!keywordEqual(ctx, keyword, N, W)) opaqueBreak(ctx, ptr, keyword);
  }
}

/** A `$ref` beside other assertions is one more conjunct; its target must hold too. */
function compareRefWithSiblings(ctx: Context, N: SchemaObject, W: SchemaObject, ptr: string): void {
  if (!hasOwn(W, '$ref')) return;
  const wTarget = resolveRef(ctx.wideRoot, W.$ref);
  const nTarget = hasOwn(N, '$ref') ? resolveRef(ctx.narrowRoot, N.$ref) : undefined;
  if (!wTarget) {
    if (N.$ref !== W.$ref) opaqueBreak(ctx, ptr, '$ref');
    return;
  }
  // N implies its own target, so target-in-target is enough; without one, N itself must fit.
  const narrow = nTarget ? nTarget.schema : N;
  const newTarget = newIsWide(ctx) ? wTarget : nTarget;
  compare(ctx, narrow, wTarget.schema, newTarget ? ctx.prefix + newTarget.pointer : ptr);
}

function opaqueBreak(ctx: Context, ptr: string, keyword: string): void {
  const at = `${ptr}/${escapeToken(keyword)}`;
  report(
    ctx,
    'opaque',
    at,
    `${label(ctx, ptr)} ${keyword} changed in a way whose compatibility cannot be proven; treated as breaking`,
  );
}

// ---------------------------------------------------------------------------------------------
// semantic equality, ignoring annotations and the order of set-like arrays

interface Roots {
  readonly a: JsonSchema;
  readonly b: JsonSchema;
  readonly assumed: Map<object, Set<object>>;
}

function rootsOf(ctx: Context): Roots {
  return { a: ctx.narrowRoot, b: ctx.wideRoot, assumed: new Map() };
}

function keywordEqual(ctx: Context, keyword: string, a: SchemaObject, b: SchemaObject): boolean {
  const inA = hasOwn(a, keyword);
  if (inA !== hasOwn(b, keyword)) return false;
  return !inA || keywordValueEqual(keyword, a[keyword], b[keyword], rootsOf(ctx));
}

const SCHEMA_VALUED = new Set([
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
]);
const SCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf']);
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', 'dependentSchemas']);
const VALUE_SETS = new Set(['required', 'enum']);

function schemaEqual(a: unknown, b: unknown, roots: Roots): boolean {
  if (typeof a === 'boolean' || typeof b === 'boolean') {
    return a === b || (isUniversal(a) && isUniversal(b));
  }
  if (!isSchemaObject(a) || !isSchemaObject(b)) return false;
  let partners = roots.assumed.get(a);
  if (partners?.has(b)) return true;
  if (!partners) {
    partners = new Set();
    roots.assumed.set(a, partners);
  }
  partners.add(b);
  for (const k of sortedUnion(Object.keys(a), Object.keys(b))) {
    if (isIgnorable(k)) continue;
    if (hasOwn(a, k) !== hasOwn(b, k)) return false;
    if (!keywordValueEqual(k, a[k], b[k], roots)) return false;
  }
  return true;
}

function keywordValueEqual(keyword: string, a: unknown, b: unknown, roots: Roots): boolean {
  if (keyword === '$ref') {
    if (a !== b) return false;
    const ta = resolveRef(roots.a, a);
    const tb = resolveRef(roots.b, b);
    if (!ta || !tb) return ta === tb;
    return schemaEqual(ta.schema, tb.schema, roots);
  }
  if (keyword === 'type') return setEqual(typeList(a), typeList(b));
  if (VALUE_SETS.has(keyword)) {
    return Array.isArray(a) && Array.isArray(b) ? setEqual(a, b) : jsonEqual(a, b);
  }
  if (SCHEMA_VALUED.has(keyword) || (keyword === 'items' && !Array.isArray(a))) {
    return schemaEqual(a, b, roots);
  }
  if (keyword === 'prefixItems' || keyword === 'items') {
    return (
      Array.isArray(a) &&
      Array.isArray(b) &&
      a.length === b.length &&
      a.every((x, i) => schemaEqual(x, b[i], roots))
    );
  }
  if (SCHEMA_LISTS.has(keyword)) {
    return (
      Array.isArray(a) &&
      Array.isArray(b) &&
      a.every((x) => b.some((y) => schemaEqual(x, y, roots))) &&
      b.every((y) => a.some((x) => schemaEqual(x, y, roots)))
    );
  }
  if (SCHEMA_MAPS.has(keyword)) {
    if (!isSchemaObject(a) || !isSchemaObject(b)) return jsonEqual(a, b);
    const keys = sortedUnion(Object.keys(a), Object.keys(b));
    return keys.every((k) => hasOwn(a, k) && hasOwn(b, k) && schemaEqual(a[k], b[k], roots));
  }
  if (keyword === 'dependentRequired' && isSchemaObject(a) && isSchemaObject(b)) {
    const keys = sortedUnion(Object.keys(a), Object.keys(b));
    return keys.every((k) => {
      const x = a[k];
      const y = b[k];
      return Array.isArray(x) && Array.isArray(y) ? setEqual(x, y) : jsonEqual(x, y);
    });
  }
  return jsonEqual(a, b);
}

function setEqual(a: readonly unknown[], b: readonly unknown[]): boolean {
  return (
    a.every((x) => b.some((y) => jsonEqual(x, y))) && b.every((y) => a.some((x) => jsonEqual(x, y)))
  );
}

function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (!isSchemaObject(a) || !isSchemaObject(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => hasOwn(b, k) && jsonEqual(a[k], b[k]));
}

// ---------------------------------------------------------------------------------------------
// small helpers

function hasOwn(o: object, key: string): boolean {
  return Object.hasOwn(o, key);
}

function isSchemaObject(v: unknown): v is SchemaObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isSchema(v: unknown): v is JsonSchema {
  return typeof v === 'boolean' || isSchemaObject(v);
}

function isUniversal(s: unknown): boolean {
  return s === true || (isSchemaObject(s) && Object.keys(s).every(isIgnorable));
}

function num(s: SchemaObject, key: string): number | undefined {
  const v = s[key];
  return hasOwn(s, key) && typeof v === 'number' ? v : undefined;
}

function schemaAt(s: SchemaObject, key: string): JsonSchema | undefined {
  const v = s[key];
  return hasOwn(s, key) && isSchema(v) ? v : undefined;
}

function schemaList(s: SchemaObject, key: string): JsonSchema[] {
  const v = s[key];
  return hasOwn(s, key) && Array.isArray(v) ? v.filter(isSchema) : [];
}

function schemaMap(s: SchemaObject, key: string): Record<string, JsonSchema> | undefined {
  const v = s[key];
  if (!hasOwn(s, key) || !isSchemaObject(v)) return undefined;
  const out: Record<string, JsonSchema> = Object.create(null) as Record<string, JsonSchema>;
  for (const k of Object.keys(v)) {
    const sub = v[k];
    if (isSchema(sub)) out[k] = sub;
  }
  return out;
}

function stringSet(v: unknown): Set<string> {
  return new Set(Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
}

function typeList(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [v];
}

function declaredTypes(s: SchemaObject): Set<string> | undefined {
  if (!hasOwn(s, 'type')) return undefined;
  return new Set(typeList(s.type).filter((t): t is string => typeof t === 'string'));
}

function typeAccepts(types: ReadonlySet<string>, t: string): boolean {
  return types.has(t) || (t === 'integer' && types.has('number'));
}

/** Whether a schema with these declared types can hold values of this family at all. */
function acceptsType(types: ReadonlySet<string> | undefined, family: string): boolean {
  if (!types) return true;
  return family === 'number' ? types.has('number') || types.has('integer') : types.has(family);
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** Authored patterns run only on the linear-time engine; one it refuses matches nothing. */
function matches(pattern: string, value: string): boolean {
  try {
    return linearTest(pattern, value);
  } catch {
    return false;
  }
}

function sortedUnion(a: readonly string[], b: readonly string[]): string[] {
  return [...new Set([...a, ...b])].sort(cmpStrings);
}

function cmpStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function escapeToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

function formatTypes(types: ReadonlySet<string> | undefined): string {
  return types ? [...types].sort().join(' | ') || 'nothing' : 'any type';
}

function formatValues(values: readonly unknown[]): string {
  const shown = values.slice(0, 10).map((v) => JSON.stringify(v) ?? String(v));
  const more = values.length > 10 ? ` and ${values.length - 10} more` : '';
  return `${shown.join(', ')}${more}`;
}

function formatSetting(v: unknown): string {
  return v === undefined ? 'unset' : typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v));
}

/** A readable name for a pointer: `input 'to'`, `output 'items[].id'`, `input root`. */
function label(ctx: Context, pointer: string): string {
  const tokens = pointer
    .slice(ctx.prefix.length)
    .split('/')
    .slice(1)
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
  let path = '';
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] ?? '';
    const next = tokens[i + 1];
    if (token === 'properties' && next !== undefined) {
      path += path === '' ? next : `.${next}`;
      i++;
    } else if (token === 'items') {
      path += '[]';
    } else if (token === 'prefixItems' && next !== undefined) {
      path += `[${next}]`;
      i++;
    } else if (token === 'additionalProperties') {
      path += '{*}';
    } else {
      path += path === '' ? token : `.${token}`;
    }
  }
  return path === '' ? `${ctx.dir} root` : `${ctx.dir} '${path}'`;
}
