/**
 * @module The Ajv instances toolgate uses: one for its own documents (definitions, config), one for
 * the JSON Schemas tool authors write (2020-12, strict, no remote $ref ever fetched). Patterns
 * someone else wrote (authored, imported) are matched by the linear-time engine (linear-regexp.ts),
 * never V8's backtracking one; toolgate's own document schemas keep V8's (their fixed, reviewed
 * patterns use lookahead, which RE2 lacks).
 */
import { Ajv as AjvDraft07, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsImport from 'ajv-formats';
import { joinPointer, type Problem, problem } from '../../core/index.js';
import { CODE_LANGUAGES, URL_FORMATS } from '../policy/index.js';
import { linearRegExp, UnsupportedPatternError } from './linear-regexp.js';
import { unsupportedPatternProblems } from './schema-patterns.js';
import type { JsonSchemaObject } from './tool-definition.js';

// ajv-formats is CJS with `export default`; NodeNext sees the module object.
const addFormats = addFormatsImport as unknown as <A extends Ajv2020 | AjvDraft07>(ajv: A) => A;

export const JSON_SCHEMA_2020_12 = 'https://json-schema.org/draft/2020-12/schema';
export const JSON_SCHEMA_DRAFT_07 = 'http://json-schema.org/draft-07/schema#';

/**
 * The dialect a tool schema declares: 2020-12 (also when it declares none, as MCP says), or
 * draft-07, which MCP servers built with the TypeScript SDK 1.x list; `null` for anything else.
 * Imported schemas keep their `$schema`, so each is validated under the dialect it names.
 */
export function schemaDialect(schema: JsonSchemaObject): '2020-12' | 'draft-07' | null {
  const declared = schema.$schema;
  if (declared === undefined) return '2020-12';
  if (declared === JSON_SCHEMA_2020_12 || declared === `${JSON_SCHEMA_2020_12}#`) return '2020-12';
  if (declared === JSON_SCHEMA_DRAFT_07 || declared === JSON_SCHEMA_DRAFT_07.slice(0, -1)) {
    return 'draft-07';
  }
  return null;
}

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
 * tool's roots; `"x-toolgate": "url"` marks a URL argument for the URL policy (`format: uri`,
 * `url` or `iri` still mark one too, as older definitions and upstream tools do).
 * `"x-toolgate": "unstructured"` on an output schema says the tool (an upstream MCP tool)
 * declared none: MCP clients are not told of one. Annotation only: it validates nothing.
 */
export function addToolgateKeywords(ajv: Ajv2020 | AjvDraft07): void {
  ajv.addKeyword({ keyword: 'x-toolgate', metaSchema: { enum: ['path', 'url', 'unstructured'] } });
  // A string argument holding code in this language: the gate's static code guard parses it and
  // refuses what it must not do before any sandbox starts. Annotation only here.
  ajv.addKeyword({ keyword: 'x-toolgate-code', metaSchema: { enum: [...CODE_LANGUAGES] } });
  // MCP 2026-07-28: the argument is mirrored into an `Mcp-Param-<name>` header. Annotation only;
  // the MCP front checks the header against the argument.
  ajv.addKeyword({ keyword: 'x-mcp-header', schemaType: 'string' });
}

const RUNTIME_OPTIONS = {
  allErrors: true,
  // An upstream's schema may carry an `$id`: two versions of one tool must not collide in the
  // instance, so compiled schemas are never registered under their ids.
  addUsedSchema: false,
  strict: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  // Strict mode's "a property matches a patternProperties pattern" lint runs each pattern with
  // V8's backtracking RegExp at compile time, outside the engine below: a catastrophic pattern
  // and a long property name would stall the event loop while compiling.
  allowMatchingProperties: true,
  code: { regExp: linearRegExp },
} as const;

/**
 * `$anchor` is a 2020-12 core keyword: Ajv resolves `$ref: "#name"` to it, but does not list it
 * as a keyword, so strict mode would refuse every schema that names an anchor (the MCP
 * conformance suite's 2020-12 tool does). Declared here, it validates nothing by itself.
 */
function add2020CoreKeywords(ajv: Ajv2020): void {
  ajv.addKeyword({ keyword: '$anchor', schemaType: 'string' });
}

/**
 * Runtime validators for tool arguments and results: every error, messages on; with `allErrors`
 * false, the first error only (the gate's check of arguments too large to list every problem of).
 */
export function createRuntimeAjv(allErrors = true): Ajv2020 {
  const ajv = new Ajv2020({ ...RUNTIME_OPTIONS, allErrors });
  addFormats(ajv);
  addToolgateKeywords(ajv);
  add2020CoreKeywords(ajv);
  return ajv;
}

/** The runtime instance for draft-07 tool schemas (same options as the 2020-12 one). */
export function createRuntimeAjvDraft07(allErrors = true): AjvDraft07 {
  const ajv = new AjvDraft07({ ...RUNTIME_OPTIONS, allErrors });
  addFormats(ajv);
  addToolgateKeywords(ajv);
  return ajv;
}

/**
 * For input schemas: the formats that mark URL arguments validate nothing here, because the
 * gate's URL policy checks every value they mark (WHATWG parser, a named `url.*` rule, the
 * normalised value passed on). Ajv's `uri` check would refuse URLs the policy allows (an
 * unencoded `[]` in a query) with a vague `schema.format`, before the policy could name its rule.
 */
function leaveUrlFormatsToPolicy(ajv: Ajv2020 | AjvDraft07): void {
  for (const format of URL_FORMATS) ajv.addFormat(format, true);
}

/**
 * Compiles tool schemas for the gate, each under the dialect it declares. `inputs` compiles
 * input schemas, whose URL formats are the URL policy's (leaveUrlFormatsToPolicy); output
 * schemas keep Ajv's checks. `firstError` compiles validators that stop at the first error
 * (Ajv's allErrors off): their work on invalid input ends there, instead of one error per bad
 * member. `reset` forgets every compiled schema (after a catalog change). Throws for a schema
 * that does not compile.
 */
export function createToolSchemaCompiler(
  options: { readonly inputs?: boolean; readonly firstError?: boolean } = {},
): {
  compile(schema: JsonSchemaObject): ValidateFunction;
  reset(): void;
} {
  // Each instance is made at its first compile: a process that checks no call (a CLI command)
  // does not pay for building them.
  let v2020: Ajv2020 | null = null;
  let draft07: AjvDraft07 | null = null;
  return {
    compile(schema) {
      if (schemaDialect(schema) !== 'draft-07') {
        if (v2020 === null) {
          v2020 = createRuntimeAjv(options.firstError !== true);
          if (options.inputs === true) leaveUrlFormatsToPolicy(v2020);
        }
        return v2020.compile(schema);
      }
      if (draft07 === null) {
        draft07 = createRuntimeAjvDraft07(options.firstError !== true);
        if (options.inputs === true) leaveUrlFormatsToPolicy(draft07);
      }
      return draft07.compile(schema);
    },
    reset() {
      v2020?.removeSchema();
      draft07?.removeSchema();
    },
  };
}

const AUTHORED_OPTIONS = {
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
} as const;

/**
 * For schemas authored by tool owners. Strict mode refuses unknown keywords (a typo such as
 * `requried` would otherwise silently validate nothing); loadSchema is never set, so a remote
 * `$ref` fails to compile instead of fetching.
 */
export function createAuthoredSchemaAjv(): Ajv2020 {
  const ajv = new Ajv2020(AUTHORED_OPTIONS);
  addFormats(ajv);
  addToolgateKeywords(ajv);
  add2020CoreKeywords(ajv);
  return ajv;
}

/** The same for schemas that declare draft-07 (an upstream MCP server's, kept as listed). */
export function createAuthoredSchemaAjvDraft07(): AjvDraft07 {
  const ajv = new AjvDraft07(AUTHORED_OPTIONS);
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
  ajvFor: (dialect: '2020-12' | 'draft-07') => Ajv2020 | AjvDraft07,
  schema: JsonSchemaObject,
  base: string,
): { validate: ValidateFunction; problems: [] } | { validate: null; problems: Problem[] } {
  const dialect = schemaDialect(schema);
  if (dialect === null) {
    return {
      validate: null,
      problems: [
        problem(
          `${base}/$schema`,
          `must be ${JSON_SCHEMA_2020_12}, ${JSON_SCHEMA_DRAFT_07} or absent`,
          'schema.dialect',
        ),
      ],
    };
  }
  const ajv = ajvFor(dialect);
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

let sharedDocumentAjv: Ajv2020 | null = null;

/**
 * Compiles one of toolgate's own document schemas into a function returning every problem. The
 * compile waits for the first value: modules declare their validators at load time, and a CLI
 * command that reads no such document should not pay for compiling it (each compile is
 * milliseconds of code generation).
 */
export function compileDocumentValidator(schema: JsonSchemaObject): (value: unknown) => Problem[] {
  let validate: ValidateFunction | null = null;
  return (value) => {
    sharedDocumentAjv ??= createDocumentAjv();
    validate ??= sharedDocumentAjv.compile(schema);
    return validate(value) ? [] : ajvErrorsToProblems(validate.errors);
  };
}
