/**
 * @module Registration checks of one tool definition: completeness and shape (the published
 * schema), authored JSON Schemas that compile, and the cross-field rules that keep a definition
 * safe (approval floors, tier floors, egress hosts that are names, a sandbox for commands).
 * Pure: no I/O. Breaking-change checks need the catalog and live in catalog-service.ts.
 */
import { isIP } from 'node:net';
import semver from 'semver';
import {
  exceedsDepth,
  joinPointer,
  MAX_DOCUMENT_DEPTH,
  type Problem,
  problem,
} from '../../core/index.js';
import { destinationDomain, normaliseDestination, policyTargets } from '../policy/index.js';
import {
  ajvErrorsToProblems,
  createAuthoredSchemaAjv,
  createAuthoredSchemaAjvDraft07,
  createDocumentAjv,
} from './json-schema-validator.js';
import { checkRuntimeBindings } from './runtime-bindings.js';
import { compileAuthoredSchemaOnce } from './schema-compile-memo.js';
import { schemaModelTexts } from './schema-model-texts.js';
import {
  type ActionClass,
  APPROVAL_FLOOR,
  type Approval,
  DEFAULT_MAX_ARGUMENT_BYTES,
  DEFAULT_MAX_CALL_BYTES,
  DEFAULT_SANDBOX_LIMITS,
  type IsolationLevel,
  type JsonSchemaObject,
  type SandboxRequirements,
  type ToolDefinition,
} from './tool-definition.js';
import { toolDefinitionSchema } from './tool-definition-schema.js';

export type DefinitionCheck =
  | { readonly ok: true; readonly definition: ToolDefinition }
  | { readonly ok: false; readonly problems: readonly Problem[] };

let shapeCheck: ReturnType<ReturnType<typeof createDocumentAjv>['compile']> | null = null; // at first use
/**
 * Ajv's code-generation scope keeps growing with every schema an instance compiles, even after
 * removeSchema, which makes each compile slower than the last. Registration only needs to know
 * that a schema compiles, so the instance is replaced after a fixed number of compiles (and made
 * at the first registration, not at load: most processes, a CLI command, register nothing). */
const COMPILES_PER_INSTANCE = 256;
let authored: { ajv: ReturnType<typeof createAuthoredSchemaAjv>; compiles: number } | null = null;
function authoredAjv(): ReturnType<typeof createAuthoredSchemaAjv> {
  if (!authored || authored.compiles >= COMPILES_PER_INSTANCE)
    authored = { ajv: createAuthoredSchemaAjv(), compiles: 0 };
  authored.compiles += 1;
  return authored.ajv;
}
/** Draft-07 schemas (kept as an upstream MCP server lists them) get their own instance. */
let authored07: {
  ajv: ReturnType<typeof createAuthoredSchemaAjvDraft07>;
  compiles: number;
} | null = null;
function authoredAjvFor(
  dialect: '2020-12' | 'draft-07',
): ReturnType<typeof createAuthoredSchemaAjv> | ReturnType<typeof createAuthoredSchemaAjvDraft07> {
  if (dialect === '2020-12') return authoredAjv();
  if (!authored07 || authored07.compiles >= COMPILES_PER_INSTANCE)
    authored07 = { ajv: createAuthoredSchemaAjvDraft07(), compiles: 0 };
  authored07.compiles += 1;
  return authored07.ajv;
}

const APPROVAL_STRENGTH = { none: 0, conditional: 1, always: 2 } as const;

/**
 * Definitions this module produced, so a caller that checked a whole file first (apply) is not
 * charged for a second check at registration. Only objects returned by checkToolDefinition are
 * in it; JSON from outside never is.
 */
const checkedDefinitions = new WeakSet<ToolDefinition>();

/** Returns the definition if `value` is one checkToolDefinition produced, else null. */
export function alreadyChecked(value: unknown): ToolDefinition | null {
  return typeof value === 'object' &&
    value !== null &&
    checkedDefinitions.has(value as ToolDefinition)
    ? (value as ToolDefinition)
    : null;
}

/** Validates and normalizes (fills every default). Lists every problem it can find at once. */
export function checkToolDefinition(input: unknown): DefinitionCheck {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return {
      ok: false,
      problems: [problem('', 'a tool definition must be an object', 'schema.type')],
    };
  }
  // Before anything walks it recursively (Ajv, canonical JSON): a hostile nesting depth would
  // otherwise overflow the stack.
  if (exceedsDepth(input)) {
    return {
      ok: false,
      problems: [problem('', `nests deeper than ${MAX_DOCUMENT_DEPTH} levels`, 'depth')],
    };
  }
  shapeCheck ??= createDocumentAjv().compile(toolDefinitionSchema);
  const problems: Problem[] = shapeCheck(input) ? [] : ajvErrorsToProblems(shapeCheck.errors);
  // Cross-field checks run on every field that passed the shape check, so one answer lists
  // every problem; a check whose fields are malformed is skipped (its fields already failed).
  const malformed = new Set(problems.map((p) => p.pointer.split('/')[1] ?? ''));
  const wellFormed = (...fields: (keyof RawDefinition)[]) => fields.every((f) => !malformed.has(f));
  // The shape check (or the guards above) guarantees the field types used below.
  const raw = input as unknown as RawDefinition;

  if (wellFormed('version') && semver.valid(raw.version) === null) {
    problems.push(problem('/version', 'must be a SemVer 2.0.0 version', 'semver'));
  }
  if (wellFormed('input_schema', 'output_schema')) problems.push(...checkSchemaTextSize(raw));
  if (wellFormed('input_schema', 'probe'))
    problems.push(...checkInputSchema(raw.input_schema, raw.probe));
  if (wellFormed('input_schema', 'arguments_policy')) problems.push(...checkPathRoots(raw));
  if (wellFormed('input_schema')) problems.push(...checkCodeMarks(raw.input_schema));
  if (wellFormed('output_schema')) problems.push(...checkOutputSchema(raw.output_schema));
  if (wellFormed('input_schema', 'cost')) problems.push(...checkCost(raw));
  if (wellFormed('egress', 'runtime')) problems.push(...checkEgress(raw));
  if (wellFormed('input_schema', 'destinations')) problems.push(...checkDestinations(raw));
  if (wellFormed('input_schema', 'destinations', 'egress', 'action_class')) {
    problems.push(...checkConstrainedClaim(raw));
  }
  if (wellFormed('probe', 'egress', 'action_class', 'runtime')) problems.push(...checkProbe(raw));
  if (wellFormed('action_class', 'access_tier')) {
    problems.push(...checkTierFloor(raw.action_class, raw.access_tier));
  }
  const approval = wellFormed('action_class', 'approval') ? normalizeApproval(raw, problems) : null;
  const sandbox = wellFormed('runtime', 'egress', 'data_access', 'sandbox')
    ? normalizeSandbox(raw, problems)
    : null;
  problems.push(...checkRuntimeBindings(raw, wellFormed));
  if (problems.length > 0 || !approval || !sandbox) return { ok: false, problems };

  const definition: ToolDefinition = {
    ...raw,
    arguments_policy: {
      ...(raw.arguments_policy?.path_roots ? { path_roots: raw.arguments_policy.path_roots } : {}),
      max_argument_bytes: raw.arguments_policy?.max_argument_bytes ?? DEFAULT_MAX_ARGUMENT_BYTES,
      max_call_bytes: raw.arguments_policy?.max_call_bytes ?? DEFAULT_MAX_CALL_BYTES,
    },
    tags: raw.tags ?? [],
    approval,
    idempotent: raw.idempotent ?? raw.action_class === 'read',
    sandbox,
  };
  // Frozen so that nothing can change it between this check and its registration.
  checkedDefinitions.add(deepFreeze(definition));
  return { ok: true, definition };
}

type RawDefinition = Omit<
  ToolDefinition,
  'tags' | 'approval' | 'idempotent' | 'sandbox' | 'arguments_policy'
> & {
  readonly arguments_policy?: Partial<ToolDefinition['arguments_policy']>;
  readonly tags?: readonly string[];
  readonly approval?: Partial<Approval> & { readonly mode: Approval['mode'] };
  readonly idempotent?: boolean;
  readonly sandbox?: {
    readonly isolation: IsolationLevel;
    readonly network?: SandboxRequirements['network'];
    readonly limits?: Partial<SandboxRequirements['limits']>;
  };
};

/**
 * Per text and per definition, over every string and key a model reads in the schemas (all of
 * them are scanned for poisoning), so scanning a definition has a bounded cost.
 */
export const MAX_SCHEMA_TEXT_CHARS = 4096;
export const MAX_SCHEMA_TEXT_TOTAL_CHARS = 65_536;

function checkSchemaTextSize(raw: RawDefinition): Problem[] {
  const texts = [
    ...schemaModelTexts(raw.input_schema, '/input_schema'),
    ...schemaModelTexts(raw.output_schema, '/output_schema'),
  ];
  const problems = texts
    .filter((t) => t.text.length > MAX_SCHEMA_TEXT_CHARS)
    .map((t) =>
      problem(t.field, `is longer than ${MAX_SCHEMA_TEXT_CHARS} characters`, 'size.text'),
    );
  const total = texts.reduce((n, t) => n + t.text.length, 0);
  if (total > MAX_SCHEMA_TEXT_TOTAL_CHARS) {
    problems.push(
      problem(
        '',
        `schema strings and property names total ${total} characters, over ${MAX_SCHEMA_TEXT_TOTAL_CHARS}`,
        'size.text',
      ),
    );
  }
  return problems;
}

/**
 * `"x-toolgate-code"` marks a string that holds code: on a schema that does not say `type:
 * "string"` the guard would be asked to judge values that are not code at all. The language is
 * the keyword's meta-schema's to check. Every node is visited, wherever it sits.
 */
function checkCodeMarks(schema: unknown): Problem[] {
  const problems: Problem[] = [];
  const stack: [unknown, string][] = [[schema, '/input_schema']];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [node, pointer] = next;
    if (typeof node !== 'object' || node === null) continue;
    const entries = Array.isArray(node)
      ? node.map((v, i): [string, unknown] => [String(i), v])
      : Object.entries(node);
    const record = node as Record<string, unknown>;
    // A property named `x-toolgate-code` (an object under `properties`) is not a mark.
    if (!Array.isArray(node) && typeof record['x-toolgate-code'] === 'string') {
      if (record.type !== 'string') {
        problems.push(
          problem(
            joinPointer(pointer, 'x-toolgate-code'),
            'marks code only on a schema with type "string"',
            'policy.code_type',
          ),
        );
      }
    }
    for (const [key, value] of entries) stack.push([value, joinPointer(pointer, key)]);
  }
  return problems;
}

/** Path arguments are contained under roots the tool declares; without roots none is allowed. */
function checkPathRoots(raw: RawDefinition): Problem[] {
  let targets: ReturnType<typeof policyTargets>;
  try {
    targets = policyTargets(raw.input_schema);
  } catch (err) {
    // A schema too large to walk could not have its URL and path arguments checked per call.
    const message = err instanceof Error ? err.message : String(err);
    return [
      problem(
        '/input_schema',
        `cannot be analysed for argument policy: ${message}`,
        'policy.targets',
      ),
    ];
  }
  const paths = targets.filter((t) => t.kind === 'path');
  if (paths.length > 0 && !raw.arguments_policy?.path_roots) {
    return [
      problem(
        '/arguments_policy/path_roots',
        `is required: arguments ${paths.map((p) => p.pointer).join(', ')} are marked as paths`,
        'policy.path_roots',
      ),
    ];
  }
  return [];
}

function checkInputSchema(schema: JsonSchemaObject, probe: RawDefinition['probe']): Problem[] {
  const compiled = compileAuthoredSchemaOnce(authoredAjvFor, schema, '/input_schema');
  const problems = [...compiled.problems];
  // A call probe's fixed arguments are checked once, here, against the schema just compiled:
  // the monitor then never compiles a schema per tool (docs/architecture.md §8, C14).
  if (probe?.kind === 'call' && compiled.validate && !compiled.validate(probe.arguments)) {
    problems.push(
      problem('/probe/arguments', "must match the tool's input schema", 'probe.arguments'),
    );
  }
  if (schema.type !== 'object') {
    problems.push(
      problem('/input_schema/type', 'must be "object": arguments are named', 'input.object'),
    );
  }
  // Unknown arguments are how smuggled parameters reach a tool; refuse them at the top level.
  if (schema.additionalProperties !== false && schema.unevaluatedProperties !== false) {
    problems.push(
      problem(
        '/input_schema/additionalProperties',
        'must be false: the top level of an input schema may not allow unknown properties',
        'input.closed',
      ),
    );
  }
  return problems;
}

/**
 * A cost taken from an argument must be one every call carries, as a number that cannot be
 * negative (a negative cost would give budget back): a required top-level property typed
 * `integer` (cents) or `number`/`integer` (major units), with `minimum` ≥ 0.
 */
function checkCost(raw: RawDefinition): Problem[] {
  const cost = raw.cost;
  if (cost === undefined || !('argument' in cost)) return [];
  const schema = raw.input_schema as {
    properties?: Record<string, unknown>;
    required?: unknown;
  };
  const name = cost.argument;
  const property =
    typeof schema.properties === 'object' &&
    schema.properties !== null &&
    Object.hasOwn(schema.properties, name)
      ? (schema.properties[name] as Record<string, unknown>)
      : undefined;
  const required = Array.isArray(schema.required) && schema.required.includes(name);
  const types = cost.unit === 'cents' ? ['integer'] : ['integer', 'number'];
  const fail = (why: string) => [problem('/cost/argument', why, 'cost.argument')];
  if (property === undefined || typeof property !== 'object' || property === null || !required) {
    return fail(
      `must name a required property of input_schema (${JSON.stringify(name)} is not one)`,
    );
  }
  if (typeof property.type !== 'string' || !types.includes(property.type)) {
    return fail(
      `input_schema property ${JSON.stringify(name)} must have type ${types.join(' or ')}`,
    );
  }
  const floor = property.minimum ?? property.exclusiveMinimum;
  if (typeof floor !== 'number' || floor < 0) {
    return fail(
      `input_schema property ${JSON.stringify(name)} needs minimum ≥ 0: a cost cannot be negative`,
    );
  }
  return [];
}

function checkOutputSchema(schema: JsonSchemaObject): Problem[] {
  const compiled = compileAuthoredSchemaOnce(authoredAjvFor, schema, '/output_schema');
  const problems = [...compiled.problems];
  if (schema.type !== 'object') {
    problems.push(
      problem('/output_schema/type', 'must be "object" (MCP structured content)', 'output.object'),
    );
  }
  return problems;
}

/** A host name whose labels are all digits or that parses as an address is an IP literal. */
function isIpLiteralHost(host: string): boolean {
  if (isIP(host) !== 0) return true;
  const last = host.split('.').at(-1) ?? '';
  return /^[0-9]+$/.test(last) || /^0x[0-9a-f]+$/i.test(last);
}

function checkEgress(raw: RawDefinition): Problem[] {
  const problems: Problem[] = [];
  const hosts = raw.egress.mode === 'constrained' ? raw.egress.hosts : [];
  hosts.forEach((host, i) => {
    if (isIpLiteralHost(host)) {
      problems.push(
        problem(
          `/egress/hosts/${i}`,
          'must be a host name, not an IP address',
          'egress.ip_literal',
        ),
      );
    }
  });
  if (raw.runtime.kind === 'http') {
    problems.push(
      ...upstreamUrlProblems(raw.runtime.base_url, hosts, '/runtime/base_url', 'runtime.base_url'),
    );
  }
  return problems;
}

/**
 * An upstream URL toolgate itself connects to (an http runtime's base URL, a health URL): https
 * on the default port, no user information, query or fragment, on one of the tool's egress hosts.
 */
function upstreamUrlProblems(
  text: string,
  hosts: readonly string[],
  pointer: string,
  rule: string,
): Problem[] {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return [problem(pointer, 'is not a valid URL', rule)];
  }
  const why =
    url.protocol !== 'https:'
      ? 'must use https'
      : url.username !== '' || url.password !== ''
        ? 'must not carry user information'
        : url.port !== ''
          ? 'must use the default port'
          : url.search !== '' || url.hash !== ''
            ? 'must not have a query or fragment'
            : !hosts.includes(url.hostname)
              ? `host ${url.hostname} must be listed in egress.hosts (mode constrained)`
              : null;
  return why ? [problem(pointer, why, rule)] : [];
}

/**
 * The schema at a rule's argument pointer: `properties` for a name, `items` for `*` or an index.
 * Null when the input schema has no such argument (a rule on it would constrain nothing).
 */
function schemaAt(schema: JsonSchemaObject, pointer: string): Record<string, unknown> | null {
  let node: unknown = schema;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (typeof node !== 'object' || node === null) return null;
    const n = node as Record<string, unknown>;
    if (token === '*' || /^(0|[1-9][0-9]*)$/.test(token)) {
      node = n.items;
      continue;
    }
    const props = n.properties;
    if (typeof props !== 'object' || props === null || !Object.hasOwn(props, token)) return null;
    node = (props as Record<string, unknown>)[token];
  }
  return typeof node === 'object' && node !== null ? (node as Record<string, unknown>) : null;
}

/**
 * A string argument, or an array of strings (checked element by element). The string may be
 * nullable — `type: ["string", "null"]`, or `anyOf`/`oneOf` of a string schema and `{type: null}`
 * — where null means no recipient: the gate checks every string the argument carries, and a null
 * names nobody (policy step), so it constrains as much as a plain string does.
 */
function holdsStrings(node: Record<string, unknown>): boolean {
  if (node.type === 'string' || nullableString(node)) return true;
  const items = node.items as Record<string, unknown> | undefined;
  return node.type === 'array' && typeof items === 'object' && items?.type === 'string';
}

/** `string | null` in either JSON Schema spelling, and nothing wider. */
function nullableString(node: Record<string, unknown>): boolean {
  const t = node.type;
  if (Array.isArray(t)) {
    return t.length === 2 && t.includes('string') && t.includes('null');
  }
  if (t !== undefined) return false;
  const branches = Array.isArray(node.anyOf)
    ? node.anyOf
    : Array.isArray(node.oneOf)
      ? node.oneOf
      : null;
  if (branches === null || branches.length !== 2) return false;
  const types = branches.map((b) =>
    typeof b === 'object' && b !== null ? (b as Record<string, unknown>).type : undefined,
  );
  return types.includes('string') && types.includes('null');
}

/**
 * Each destination rule names an argument the input schema has (a string or an array of
 * strings), lists only well-formed values of its kind, and uses the e-mail domain rule only for
 * e-mail (docs/architecture.md §3 step `policy`). That the named sets exist is the catalog's check.
 */
function checkDestinations(raw: RawDefinition): Problem[] {
  const problems: Problem[] = [];
  (raw.destinations ?? []).forEach((rule, i) => {
    const at = `/destinations/${i}`;
    const node = schemaAt(raw.input_schema, rule.argument);
    if (node === null) {
      problems.push(
        problem(
          `${at}/argument`,
          `names ${JSON.stringify(rule.argument)}, which the input schema does not have`,
          'destinations.argument',
        ),
      );
    } else if (!holdsStrings(node)) {
      problems.push(
        problem(
          `${at}/argument`,
          'must name a string argument or an array of strings',
          'destinations.argument',
        ),
      );
    }
    (rule.allow.values ?? []).forEach((v, j) => {
      const n = normaliseDestination(rule.kind, v);
      if (!n.ok) {
        problems.push(problem(`${at}/allow/values/${j}`, n.message, 'destinations.value'));
      }
    });
    if (rule.allow.email_domains !== undefined && rule.kind !== 'email') {
      problems.push(
        problem(
          `${at}/allow/email_domains`,
          'applies to kind "email" only',
          'destinations.email_domain',
        ),
      );
    }
    (rule.allow.email_domains ?? []).forEach((d, j) => {
      const domain = destinationDomain(d.startsWith('*.') ? d.slice(2) : d);
      if (!domain.ok || domain.value !== (d.startsWith('*.') ? d.slice(2) : d)) {
        problems.push(
          problem(
            `${at}/allow/email_domains/${j}`,
            `must be a lower-case domain or *.domain (${domain.ok ? 'not lower case' : domain.message})`,
            'destinations.email_domain',
          ),
        );
      }
    });
  });
  return problems;
}

/**
 * Argument names that say "where this goes" for a sending or state-changing tool. With a
 * `format: email` (or `idn-email`) argument they are what a constrained egress claim must cover:
 * a relay's host constrains nothing when the relay sends anywhere.
 */
export const RECIPIENT_ARGUMENT_NAMES: readonly string[] = [
  'to',
  'cc',
  'bcc',
  'recipient',
  'recipients',
  'email',
  'email_address',
  'phone',
  'phone_number',
  'iban',
  'account',
  'account_number',
  'channel',
  'channel_id',
];
const RECIPIENT_NAMES = new Set(RECIPIENT_ARGUMENT_NAMES);

/** Top-level arguments shaped like a recipient (by name, or by an e-mail format on it or its items). */
function recipientArguments(schema: JsonSchemaObject): string[] {
  const props = schema.properties;
  if (typeof props !== 'object' || props === null) return [];
  const found: string[] = [];
  for (const [name, node] of Object.entries(props as Record<string, unknown>)) {
    if (typeof node !== 'object' || node === null) continue;
    const n = node as Record<string, unknown>;
    const items = n.items as Record<string, unknown> | undefined;
    const format = n.format ?? (typeof items === 'object' ? items?.format : undefined);
    if (RECIPIENT_NAMES.has(name.toLowerCase()) || format === 'email' || format === 'idn-email') {
      found.push(joinPointer('', name));
    }
  }
  return found;
}

/**
 * A sending or state-changing tool that declares its egress `constrained` must name what
 * constrains it: every recipient-shaped argument needs a destinations rule, since the hosts it
 * reaches (a mail relay, a payments API) do not bound where the relay sends.
 */
function checkConstrainedClaim(raw: RawDefinition): Problem[] {
  if (raw.egress.mode !== 'constrained' || raw.action_class === 'read') return [];
  const covered = new Set<string>();
  for (const rule of raw.destinations ?? []) {
    covered.add(rule.argument.endsWith('/*') ? rule.argument.slice(0, -2) : rule.argument);
  }
  return recipientArguments(raw.input_schema)
    .filter((pointer) => !covered.has(pointer))
    .map((pointer) =>
      problem(
        '/destinations',
        `must constrain argument ${pointer}: egress is declared constrained, but the hosts ${JSON.stringify(
          raw.egress.mode === 'constrained' ? raw.egress.hosts : [],
        )} do not bound where ${pointer} sends`,
        'egress.unverified_constraint',
      ),
    );
}

/**
 * A probe must be harmless (C14): a call probe only of a `read` tool; a health URL only to a host
 * the tool may already reach (egress.hosts), https on the default port, no userinfo — the same
 * rules as an http runtime's base URL, since the probe runs under the same egress rules.
 */
function checkProbe(raw: RawDefinition): Problem[] {
  const probe = raw.probe;
  if (!probe) return [];
  if (probe.kind === 'call') {
    return raw.action_class === 'read'
      ? []
      : [problem('/probe/kind', 'only a read tool may be probed by a call', 'probe.not_harmless')];
  }
  if (raw.runtime.kind === 'mcp') {
    return [
      problem(
        '/probe/kind',
        "an upstream MCP provider's tools are probed by listing the provider",
        'probe.kind',
      ),
    ];
  }
  const hosts = raw.egress.mode === 'constrained' ? raw.egress.hosts : [];
  return upstreamUrlProblems(probe.url, hosts, '/probe/url', 'probe.url');
}

function checkTierFloor(actionClass: ActionClass, tier: string): Problem[] {
  if (actionClass === 'permission_change' && tier !== 'privileged') {
    return [problem('/access_tier', 'permission_change tools must be privileged', 'tier.floor')];
  }
  if (actionClass === 'irreversible' && tier === 'public') {
    return [
      problem('/access_tier', 'irreversible tools must be restricted or privileged', 'tier.floor'),
    ];
  }
  return [];
}

/** Fills the action class's default gate and refuses anything weaker than it. */
function normalizeApproval(raw: RawDefinition, problems: Problem[]): Approval {
  const floor = APPROVAL_FLOOR[raw.action_class];
  const given = raw.approval;
  if (!given) return floor;
  const approval: Approval = {
    mode: given.mode,
    ...(given.conditions ? { conditions: given.conditions } : {}),
    second_factor: given.second_factor ?? floor.second_factor,
    out_of_band: given.out_of_band ?? floor.out_of_band,
  };
  const weakest =
    raw.action_class === 'permission_change'
      ? 'always'
      : floor.mode === 'always'
        ? 'conditional'
        : 'none';
  if (APPROVAL_STRENGTH[approval.mode] < APPROVAL_STRENGTH[weakest]) {
    problems.push(
      problem(
        '/approval/mode',
        `${raw.action_class} tools need approval mode ${weakest === 'always' ? '"always"' : '"always" or "conditional"'}`,
        'approval.floor',
      ),
    );
  }
  if (approval.mode === 'conditional' && !approval.conditions) {
    problems.push(
      problem(
        '/approval/conditions',
        'is required when mode is "conditional"',
        'approval.conditions',
      ),
    );
  }
  if (approval.mode !== 'conditional' && approval.conditions) {
    problems.push(
      problem(
        '/approval/conditions',
        'is only allowed when mode is "conditional"',
        'approval.conditions',
      ),
    );
  }
  if (floor.second_factor && !approval.second_factor) {
    problems.push(
      problem(
        '/approval/second_factor',
        `${raw.action_class} tools need a second factor`,
        'approval.floor',
      ),
    );
  }
  if (floor.out_of_band && !approval.out_of_band) {
    problems.push(
      problem(
        '/approval/out_of_band',
        `${raw.action_class} tools are approved out of band only`,
        'approval.floor',
      ),
    );
  }
  return approval;
}

function defaultIsolation(raw: RawDefinition): IsolationLevel {
  switch (raw.runtime.kind) {
    case 'command':
    case 'mcp':
      return 'namespace';
    case 'http':
    case 'inline':
      return 'none';
  }
}

function normalizeSandbox(raw: RawDefinition, problems: Problem[]): SandboxRequirements {
  const isolation = raw.sandbox?.isolation ?? defaultIsolation(raw);
  const needsNetwork = raw.egress.mode !== 'none';
  const network = raw.sandbox?.network ?? (needsNetwork ? 'egress_proxy' : 'none');
  if (network === 'egress_proxy' && !needsNetwork) {
    problems.push(
      problem('/sandbox/network', 'egress_proxy needs egress other than "none"', 'sandbox.network'),
    );
  }
  if (network === 'none' && needsNetwork && raw.runtime.kind !== 'http') {
    problems.push(
      problem(
        '/sandbox/network',
        'a tool with egress reaches the network only through the egress proxy',
        'sandbox.network',
      ),
    );
  }
  // Only pure transforms may run without namespaces (C9); commands always need a sandbox.
  const pure = raw.data_access === 'none' && raw.egress.mode === 'none';
  if (raw.runtime.kind === 'command' || raw.runtime.kind === 'mcp') {
    if (isolation === 'none' || (isolation === 'process' && !pure)) {
      problems.push(
        problem(
          '/sandbox/isolation',
          `${raw.runtime.kind} runtimes need namespace or gvisor isolation${pure ? ' (or process for pure transforms)' : ''}`,
          'sandbox.isolation',
        ),
      );
    }
  }
  return { isolation, network, limits: { ...DEFAULT_SANDBOX_LIMITS, ...raw.sandbox?.limits } };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
