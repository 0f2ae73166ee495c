/**
 * @module The Ajv instances toolgate uses: one for its own documents (definitions, config), one for
 * the JSON Schemas tool authors write (2020-12, strict, no remote $ref ever fetched). Patterns
 * someone else wrote (authored, imported) are matched by the linear-time engine (linear-regexp.ts),
 * never V8's backtracking one; toolgate's own document schemas keep V8's (their fixed, reviewed
 * patterns use lookahead, which RE2 lacks).
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsImport from 'ajv-formats';
import { joinPointer, type Problem, problem } from '../core/index.js';
import { linearRegExp, UnsupportedPatternError } from './linear-regexp.js';
import { unsupportedPatternProblems } from './schema-patterns.js';
import type { JsonSchemaObject } from './tool-definition.js';

// ajv-formats is CJS with `export default`; NodeNext sees the module object.
const addFormats = addFormatsImport as unknown as (ajv: Ajv2020) => Ajv2020;

export const JSON_SCHEMA_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

/** Validates toolgate's own document schemas; reports every error, not only the first. */
export function createDocumentAjv(): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: true,
    discriminator: true,
    strict: true,
    // A discriminator's tag is required at the top and defined in each branch.
    strictRequired: false,
    allowUnionTypes: true,
    // Errors carry their schema so a pattern failure can be explained in words (`x-hint`).
    verbose: true,
  });
  addFormats(ajv);
  ajv.addKeyword({ keyword: 'x-hint', schemaType: 'string' });
  return ajv;
}

/**
 * `"x-toolgate": "path"` marks a string argument as a path the gate must contain under the
 * tool's roots (URL arguments are marked by `format: uri`). `"x-toolgate": "unstructured"` on an
 * output schema says the tool (an upstream MCP tool) declared none: MCP clients are not told of
 * one. Annotation only: it validates nothing.
 */
export function addToolgateKeywords(ajv: Ajv2020): void {
  ajv.addKeyword({ keyword: 'x-toolgate', metaSchema: { enum: ['path', 'unstructured'] } });
}

/** Runtime validators for tool arguments and results: every error, messages on. */
export function createRuntimeAjv(): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: true,
    strict: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    // Strict mode's "a property matches a patternProperties pattern" lint runs each pattern with
    // V8's backtracking RegExp at compile time, outside the engine below: a catastrophic pattern
    // and a long property name would stall the event loop while compiling.
    allowMatchingProperties: true,
    code: { regExp: linearRegExp },
  });
  addFormats(ajv);
  addToolgateKeywords(ajv);
  return ajv;
}

/**
 * For schemas authored by tool owners. Strict mode refuses unknown keywords (a typo such as
 * `requried` would otherwise silently validate nothing); loadSchema is never set, so a remote
 * `$ref` fails to compile instead of fetching.
 */
export function createAuthoredSchemaAjv(): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: false,
    strict: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    // compileAuthoredSchema validates against the meta-schema itself first (to locate problems),
    // so compile() need not do it again.
    validateSchema: false,
    addUsedSchema: false,
    // Registration only needs to know that the schema compiles; the gate compiles its own
    // validators. Skipping message generation and code optimization halves the compile time.
    messages: false,
    allowMatchingProperties: true,
    code: { optimize: false, regExp: linearRegExp },
  });
  addFormats(ajv);
  addToolgateKeywords(ajv);
  return ajv;
}

function hintOf(schema: unknown): unknown {
  return typeof schema === 'object' && schema !== null
    ? (schema as Record<string, unknown>)['x-hint']
    : undefined;
}

/** Turns Ajv errors into problems with JSON pointers, naming the missing or extra property. */
export function ajvErrorsToProblems(
  errors: readonly ErrorObject[] | null | undefined,
  base = '',
): Problem[] {
  if (!errors) return [];
  const seen = new Set<string>();
  const out: Problem[] = [];
  for (const e of errors) {
    // oneOf/anyOf summaries repeat what the branch errors already say.
    if (e.keyword === 'oneOf' || e.keyword === 'anyOf' || e.keyword === 'if') continue;
    let pointer = base + e.instancePath;
    let message = e.message ?? 'is invalid';
    const params = e.params as Record<string, unknown>;
    if (e.keyword === 'required' && typeof params.missingProperty === 'string') {
      pointer = joinPointer(pointer, params.missingProperty);
      message = 'is required';
    } else if (
      e.keyword === 'additionalProperties' &&
      typeof params.additionalProperty === 'string'
    ) {
      pointer = joinPointer(pointer, params.additionalProperty);
      message = 'is not an allowed property';
    } else if (e.keyword === 'enum' && Array.isArray(params.allowedValues)) {
      message = `must be one of ${params.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    } else if (e.keyword === 'pattern' && typeof hintOf(e.parentSchema) === 'string') {
      message = `must be ${hintOf(e.parentSchema)}`;
    } else if (e.keyword === 'discriminator') {
      const tag = typeof params.tag === 'string' ? params.tag : 'kind';
      pointer = joinPointer(pointer, tag);
      message = `has an unknown value; see ${e.schemaPath.replace('/discriminator', '/oneOf')}`;
    }
    const key = `${pointer}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(problem(pointer, message, `schema.${e.keyword}`));
  }
  return out;
}

/**
 * Checks that `schema` is valid JSON Schema 2020-12 and compiles; returns the compiled validator
 * or the problems, located under `base`. Never leaves the schema cached in the shared instance.
 */
export function compileAuthoredSchema(
  ajv: Ajv2020,
  schema: JsonSchemaObject,
  base: string,
): { validate: ValidateFunction; problems: [] } | { validate: null; problems: Problem[] } {
  const declared = schema.$schema;
  if (
    declared !== undefined &&
    declared !== JSON_SCHEMA_2020_12 &&
    declared !== `${JSON_SCHEMA_2020_12}#`
  ) {
    return {
      validate: null,
      problems: [
        problem(`${base}/$schema`, `must be ${JSON_SCHEMA_2020_12} (or absent)`, 'schema.dialect'),
      ],
    };
  }
  const meta = ajv.validateSchema(schema);
  if (meta !== true) {
    return { validate: null, problems: ajvErrorsToProblems(ajv.errors, base) };
  }
  // Each pattern the engine refuses, under its own pointer (compile would stop at the first).
  const patterns = unsupportedPatternProblems(schema, base);
  if (patterns.length > 0) return { validate: null, problems: patterns };
  try {
    const validate = ajv.compile(schema);
    return { validate, problems: [] };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return {
      validate: null,
      problems: [
        problem(
          base,
          `does not compile: ${message}`,
          err instanceof UnsupportedPatternError ? 'schema.pattern_unsupported' : 'schema.compile',
        ),
      ],
    };
  } finally {
    ajv.removeSchema(schema);
  }
}

const sharedDocumentAjv = createDocumentAjv();

/** Compiles one of toolgate's own document schemas into a function returning every problem. */
export function compileDocumentValidator(schema: JsonSchemaObject): (value: unknown) => Problem[] {
  const validate = sharedDocumentAjv.compile(schema);
  return (value) => (validate(value) ? [] : ajvErrorsToProblems(validate.errors));
}
