/**
 * @module Organisation policies in Cedar (C6): loads policy sets, validated against the
 * toolgate schema, and answers allow or deny for one call. Policies only restrict: grants decide
 * who may call what, and a matching `forbid` takes that away.
 */

import { createRequire } from 'node:module';
import type {
  AuthorizationAnswer,
  DetailedError,
  PolicyJson,
  ValidationError,
} from '@cedar-policy/cedar-wasm/nodejs';
import { sha256Hex } from '../../../core/canonical-json.js';
import type { CedarRequest } from './cedar-request.js';
import { exactIn, toCedarCall } from './cedar-request.js';
import { TOOLGATE_CEDAR_SCHEMA } from './cedar-schema.js';
import { type NumericReads, numericReads, readsNoNumbers } from './numeric-reads.js';
import { type Fact, factKey, factsRead, wellTyped } from './request-facts.js';
import type { ToolFacts, ToolScope } from './tool-scope.js';
import { compileToolScope } from './tool-scope.js';

type CedarWasm = typeof import('@cedar-policy/cedar-wasm/nodejs');
let wasm: CedarWasm | null = null;

/**
 * Cedar's WebAssembly build, compiled on first use (about 80 ms): every CLI command paid for it
 * at start, though only one that evaluates or checks a policy needs it. The package is CommonJS,
 * so a synchronous require keeps every caller synchronous (the gate's hot path awaits nothing).
 */
function cedar(): CedarWasm {
  wasm ??= createRequire(import.meta.url)('@cedar-policy/cedar-wasm/nodejs') as CedarWasm;
  return wasm;
}

export type {
  CedarAgent,
  CedarContext,
  CedarRequest,
  CedarTool,
  CedarUser,
} from './cedar-request.js';
export type { ToolFacts } from './tool-scope.js';

/** One Cedar policy set per configuration document; `id` names the document in problems and ids. */
export interface PolicySource {
  readonly id: string;
  readonly text: string;
}

export type CedarDecision =
  | { readonly decision: 'allow' }
  | {
      readonly decision: 'deny';
      /** Ids of the forbid policies that matched or failed to evaluate; empty when the request itself was refused. */
      readonly policies: readonly string[];
      /** One line each, for people: the policy's `@reason`, or what went wrong. */
      readonly reasons: readonly string[];
      /** Set when the refusal is not a policy matching (`cedar.number_inexact`). */
      readonly rule?: string;
    };

export interface CedarLoadProblem {
  /** The PolicySource id the problem is in. */
  readonly source: string;
  readonly message: string;
}

export type CedarLoadResult =
  | { readonly ok: true; readonly engine: CedarPolicyEngine }
  | { readonly ok: false; readonly problems: CedarLoadProblem[] };

/** The permit every call starts from: the grant check already decided this agent may call this tool. */
const BASE_PERMIT_ID = 'toolgate:base-permit';
const BASE_PERMIT = 'permit (principal, action == Toolgate::Action::"invoke", resource);';

/** Decisions kept per loaded policy set; past this the cache starts over. */
const DECISION_CACHE_MAX = 4096;
const DECISION_KEY_MAX_CHARS = 2048;
/** Context members the gate has to read fresh from the session when a policy reads them. */
const SESSION_COUNTERS = [
  'private_data_read',
  'external_sends',
  'egress_bytes',
  'spend_cents',
  'untrusted_sources',
  'injection_seen',
];

/** Longest Cedar message quoted in a deny reason: it may echo request values. */
const MAX_REASON_CHARS = 300;

interface LoadedPolicy {
  readonly id: string;
  readonly source: string;
  readonly text: string;
  /** UTF-16 offset of the policy's text in its source, to turn Cedar's locations into lines. */
  readonly offset: number;
  readonly json: PolicyJson;
}

interface Forbid {
  readonly id: string;
  readonly reason: string;
  readonly scope: ToolScope;
  /** Arguments it reads as numbers; null when none. */
  readonly numbers: NumericReads | null;
}

/** The deny rule for a number a policy reads but its view cannot hold exactly. */
export const NUMBER_INEXACT_RULE = 'cedar.number_inexact';

let schemaName: string | undefined;

/**
 * Preparses the schema once per process (cedar-wasm caches it by name in WASM memory); undefined
 * only if toolgate's own schema were broken.
 */
function preparedSchema(): string | undefined {
  if (schemaName !== undefined) return schemaName;
  const name = `toolgate-schema-${sha256Hex(TOOLGATE_CEDAR_SCHEMA).slice(0, 16)}`;
  if (cedar().preparseSchema(name, TOOLGATE_CEDAR_SCHEMA).type !== 'success') return undefined;
  schemaName = name;
  return name;
}

/**
 * Authors may write `permit` policies; they are parsed and validated like the rest but change no
 * decision, because the base permit already allows every call that reached this stage and a
 * `forbid` always wins over any permit. They are therefore not evaluated at all.
 *
 * A deny names the forbids by their `@id("…")` annotation, else `<source id>#<n>` (n counts the
 * source's policies from 0, Cedar's own numbering), and gives each one's `@reason("…")`.
 */
export class CedarPolicyEngine {
  readonly #policySetId: string;
  readonly #schemaName: string;
  readonly #forbids: ReadonlyMap<string, Forbid>;
  readonly #numeric: readonly Forbid[];
  readonly #order: ReadonlyMap<string, number>;
  /** What the forbids read (sorted), or null when decisions must not be reused. */
  readonly #facts: readonly Fact[] | null;
  readonly #decisions = new Map<string, CedarDecision>();
  #hits = 0;

  private constructor(
    policySetId: string,
    schema: string,
    forbids: readonly Forbid[],
    facts: readonly Fact[] | null,
  ) {
    this.#policySetId = policySetId;
    this.#schemaName = schema;
    this.#forbids = new Map(forbids.map((f) => [f.id, f]));
    this.#numeric = forbids.filter((f) => f.numbers !== null);
    this.#order = new Map(forbids.map((f, i) => [f.id, i]));
    this.#facts = facts;
  }

  /**
   * Parses every source and validates it (strict mode) against the toolgate schema. Any error, and
   * any validator warning (an impossible policy is a rule that silently never fires; confusable or
   * bidi characters hide what a rule says), refuses the whole set: never loads part of it.
   */
  static load(
    sources: readonly PolicySource[],
    options: { readonly reuseDecisions?: boolean } = {},
  ): CedarLoadResult {
    const problems: CedarLoadProblem[] = [];
    const policies: LoadedPolicy[] = [];
    const seenSources = new Set<string>();
    const parsedSources: PolicySource[] = [];
    for (const source of sources) {
      if (source.id === '' || seenSources.has(source.id)) {
        problems.push({
          source: source.id,
          message: 'policy source ids must be unique and non-empty',
        });
        continue;
      }
      seenSources.add(source.id);
      const parsed = guarded(source, () => parseSource(source));
      if (parsed.ok) {
        policies.push(...parsed.policies);
        parsedSources.push(source);
      } else {
        problems.push(...parsed.problems);
      }
    }
    problems.push(...duplicateIds(policies));
    // Validate every source that parsed, so one load reports all that is wrong.
    for (const source of parsedSources) {
      const own = policies.filter((p) => p.source === source.id);
      const checked = guarded(source, () => ({ ok: false, problems: validateSource(source, own) }));
      if (!checked.ok) problems.push(...checked.problems);
    }
    if (problems.length > 0) return { ok: false, problems };

    const forbidden = policies.filter((p) => p.json.effect === 'forbid');
    const staticPolicies: Record<string, string> = { [BASE_PERMIT_ID]: BASE_PERMIT };
    for (const p of forbidden) staticPolicies[p.id] = p.text;
    // Keyed by content: reloading the same policies reuses the cached set instead of adding one.
    const policySetId = `toolgate-policies-${sha256Hex(JSON.stringify(staticPolicies))}`;
    const prepared = cedar().preparsePolicySet(policySetId, { staticPolicies });
    const schema = preparedSchema();
    if (prepared.type !== 'success' || schema === undefined) {
      const errors = prepared.type === 'success' ? [] : prepared.errors.map((e) => describe(e));
      const message = `internal: could not prepare the policy set ${errors.join('; ')}`;
      return { ok: false, problems: [{ source: '', message }] };
    }
    const forbids = forbidden.map((p) => {
      const numbers = numericReads(p.json);
      return {
        id: p.id,
        reason: annotation(p.json, 'reason') ?? `forbidden by policy ${p.id}`,
        scope: compileToolScope(p.json),
        numbers: readsNoNumbers(numbers) ? null : numbers,
      };
    });
    const read = factsRead(forbidden.map((p) => p.json));
    const facts = read.all || options.reuseDecisions === false ? null : [...read.facts].sort();
    return { ok: true, engine: new CedarPolicyEngine(policySetId, schema, forbids, facts) };
  }

  /** Ids of the loaded forbid policies, in load order. */
  get forbidIds(): readonly string[] {
    return [...this.#forbids.keys()];
  }

  /**
   * False only when no loaded forbid can match a call to this tool, nor fail while evaluating one,
   * whatever the agent, user, session or arguments; then evaluate() would certainly allow and the
   * gate may skip it. Anything the analysis does not understand counts as "may apply".
   */
  appliesTo(tool: ToolFacts): boolean {
    for (const forbid of this.#forbids.values()) {
      if (forbid.scope(tool)) return true;
    }
    return false;
  }

  /**
   * False when no loaded forbid reads the session's counters (private_data_read, external_sends,
   * egress_bytes, spend_cents): a caller may then build the request from a cached session row.
   */
  get readsSessionCounters(): boolean {
    if (this.#facts === null) return true;
    return this.#facts.some(
      (f) => f === 'context.*' || SESSION_COUNTERS.some((c) => f === `context.${c}`),
    );
  }

  /** The facts of a request the forbids read, sorted; null when decisions are not reused. */
  get factsRead(): readonly string[] | null {
    return this.#facts;
  }

  /** Decisions answered from the cache since load (for benchmarks and tests). */
  get cacheHits(): number {
    return this.#hits;
  }

  /**
   * Never throws. Fails closed: a request Cedar refuses (wrong types, a non-integer number) and a
   * forbid whose evaluation fails (integer overflow, an extension function error) both deny, where
   * Cedar alone would skip the failing forbid and allow. So does a number argument a forbid that
   * may apply reads through a view that cannot hold it exactly (100.5 as a Long, 0.00001 as a
   * decimal): Cedar would see no tag and the forbid would not fire.
   */
  evaluate(request: CedarRequest): CedarDecision {
    try {
      const built = toCedarCall(request);
      if (!built.ok) return refused(built.message);
      // Requests that agree on every fact a forbid reads get the same answer from Cedar: reuse
      // it. Only for requests of the schema's types (Cedar itself refuses the others).
      let key: string | undefined;
      if (this.#facts !== null && wellTyped(request)) {
        key = factKey(request, this.#facts);
        // A key that holds large arguments is not kept: the cache stays small.
        if (key.length > DECISION_KEY_MAX_CHARS) key = undefined;
      }
      if (key !== undefined) {
        const hit = this.#decisions.get(key);
        if (hit !== undefined) {
          this.#hits += 1;
          return hit;
        }
      }
      // Whether a number is exact depends only on facts the key holds (the argument, and the
      // tool facts a forbid's scope reads), so this refusal is reused like Cedar's answers.
      const decision =
        this.#inexactNumber(request) ??
        this.#interpret(
          cedar().statefulIsAuthorized({
            ...built.call,
            preparsedPolicySetId: this.#policySetId,
            preparsedSchemaName: this.#schemaName,
            validateRequest: true,
          }),
        );
      if (key !== undefined) {
        if (this.#decisions.size >= DECISION_CACHE_MAX) this.#decisions.clear();
        this.#decisions.set(key, freeze(decision));
      }
      return decision;
    } catch (error) {
      return refused(error instanceof Error ? error.message : 'evaluation failed');
    }
  }

  /** The refusal for the first number a forbid reads inexactly, or null when every one is exact. */
  #inexactNumber(request: CedarRequest): CedarDecision | null {
    if (this.#numeric.length === 0) return null;
    const args = request.context.arguments;
    for (const forbid of this.#numeric) {
      const reads = forbid.numbers;
      if (reads === null || !forbid.scope(request.tool)) continue;
      for (const view of ['long', 'decimal'] as const) {
        const names = reads[view] === 'all' ? Object.keys(args) : reads[view];
        for (const name of names) {
          if (!Object.hasOwn(args, name)) continue;
          const value = args[name];
          if (typeof value !== 'number' || exactIn(view, value)) continue;
          const as =
            view === 'long'
              ? 'a Cedar Long (an integer within ±9007199254740991)'
              : 'a Cedar decimal (at most 4 decimal places, within ±922337203685477.5807)';
          return {
            decision: 'deny',
            policies: [forbid.id],
            reasons: [
              clip(
                `argument ${JSON.stringify(name)} is read by policy ${forbid.id} but is not exactly ${as}; refused rather than rounded`,
              ),
            ],
            rule: NUMBER_INEXACT_RULE,
          };
        }
      }
    }
    return null;
  }

  #interpret(answer: AuthorizationAnswer): CedarDecision {
    if (answer.type !== 'success') {
      return refused(answer.errors.map((e) => e.message).join('; ') || 'evaluation failed');
    }
    const { decision, diagnostics } = answer.response;
    const hits = new Map<string, string>();
    for (const id of diagnostics.reason) {
      const forbid = this.#forbids.get(id);
      if (forbid !== undefined) hits.set(id, forbid.reason);
    }
    for (const { policyId, error } of diagnostics.errors) {
      if (hits.has(policyId)) continue;
      hits.set(policyId, clip(`policy ${policyId} failed to evaluate: ${error.message}`));
    }
    if (hits.size === 0) {
      if (decision === 'allow') return { decision: 'allow' };
      return refused('no policy permitted the call');
    }
    const ids = [...hits.keys()].sort(
      (a, b) => (this.#order.get(a) ?? Infinity) - (this.#order.get(b) ?? Infinity),
    );
    return { decision: 'deny', policies: ids, reasons: ids.map((id) => hits.get(id) ?? '') };
  }
}

/** A shared decision nobody can change under another caller. */
function freeze(decision: CedarDecision): CedarDecision {
  if (decision.decision === 'deny') {
    Object.freeze(decision.policies);
    Object.freeze(decision.reasons);
  }
  return Object.freeze(decision);
}

function refused(message: string): CedarDecision {
  return {
    decision: 'deny',
    policies: [],
    reasons: [clip(`policy evaluation refused: ${message}`)],
  };
}

function clip(text: string): string {
  return text.length <= MAX_REASON_CHARS ? text : `${text.slice(0, MAX_REASON_CHARS)}…`;
}

function annotation(policy: PolicyJson, name: string): string | undefined {
  const value: unknown = policy.annotations?.[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** In a `u` regex a well-formed pair is one code point, so only an unpaired half is category Cs. */
const LONE_SURROGATE = /\p{Cs}/u;

type Parsed =
  | { readonly ok: true; readonly policies: LoadedPolicy[] }
  | { readonly ok: false; readonly problems: CedarLoadProblem[] };

/** cedar-wasm throws on input it cannot even deserialise (a lone UTF-16 surrogate): a problem too. */
function guarded(source: PolicySource, run: () => Parsed): Parsed {
  try {
    return run();
  } catch (error) {
    const message = error instanceof Error ? error.message : 'Cedar could not read the policy text';
    return { ok: false, problems: [{ source: source.id, message }] };
  }
}

function parseSource(source: PolicySource): Parsed {
  const fail = (message: string): Parsed => ({
    ok: false,
    problems: [{ source: source.id, message }],
  });
  // Cedar reads text as UTF-8 and would quietly replace a lone surrogate with U+FFFD.
  if (LONE_SURROGATE.test(source.text))
    return fail('policy text is not valid Unicode (lone surrogate)');
  const parts = cedar().policySetTextToParts(source.text);
  if (parts.type !== 'success') {
    return {
      ok: false,
      problems: parts.errors.map((e) => ({
        source: source.id,
        message: describe(e, source.text, 0),
      })),
    };
  }
  if (parts.policy_templates.length > 0) {
    return fail('policy templates (`?principal`, `?resource`) are not supported');
  }
  const texts = inSourceOrder(parts.policies);
  const policies: LoadedPolicy[] = [];
  let from = 0;
  for (const [n, text] of texts.entries()) {
    // Parts are verbatim slices of the source; finding each after the previous one both locates
    // it for error messages and proves the reconstructed order (and so `#n`) is right.
    const offset = source.text.indexOf(text, from);
    if (offset < 0) return fail('internal: could not locate a parsed policy in its source');
    from = offset + text.length;
    const json = cedar().policyToJson(text);
    if (json.type !== 'success') {
      return fail(json.errors.map((e) => describe(e, source.text, offset)).join('; '));
    }
    const explicit = json.json.annotations?.id;
    if (explicit !== undefined && (typeof explicit !== 'string' || explicit === '')) {
      return fail(`policy ${source.id}#${n}: @id needs a non-empty value`);
    }
    const id = explicit ?? `${source.id}#${n}`;
    policies.push({ id, source: source.id, text, offset, json: json.json });
  }
  return { ok: true, policies };
}

/**
 * policySetTextToParts returns policies sorted by Cedar's ids `policy0`, `policy1`, … as strings
 * (so `policy10` before `policy2`); sorting the same names the same way maps each back to its
 * position. parseSource checks the result against the source text.
 */
function inSourceOrder(sorted: readonly string[]): string[] {
  const names = sorted.map((_, i) => `policy${i}`);
  const byName = [...names].sort();
  const out: string[] = new Array<string>(sorted.length);
  for (const [k, name] of byName.entries()) {
    out[Number(name.slice('policy'.length))] = sorted[k] ?? '';
  }
  return out;
}

function duplicateIds(policies: readonly LoadedPolicy[]): CedarLoadProblem[] {
  const problems: CedarLoadProblem[] = [];
  const seen = new Set<string>([BASE_PERMIT_ID]);
  for (const p of policies) {
    if (seen.has(p.id))
      problems.push({ source: p.source, message: `policy id ${p.id} is used twice` });
    seen.add(p.id);
  }
  return problems;
}

function validateSource(
  source: PolicySource,
  policies: readonly LoadedPolicy[],
): CedarLoadProblem[] {
  if (policies.length === 0) return [];
  const byId = new Map(policies.map((p) => [p.id, p]));
  const answer = cedar().validate({
    schema: TOOLGATE_CEDAR_SCHEMA,
    policies: { staticPolicies: Object.fromEntries(policies.map((p) => [p.id, p.text])) },
    validationSettings: { mode: 'strict' },
  });
  if (answer.type !== 'success') {
    return answer.errors.map((e) => ({ source: source.id, message: describe(e) }));
  }
  const located = (v: ValidationError): CedarLoadProblem => {
    const offset = byId.get(v.policyId)?.offset ?? 0;
    return { source: source.id, message: describe(v.error, source.text, offset) };
  };
  return [...answer.validationErrors, ...answer.validationWarnings].map(located);
}

/** Cedar's message and help, with the line and column in the source when Cedar gives a location. */
function describe(error: DetailedError, text?: string, offset = 0): string {
  const start = error.sourceLocations?.[0]?.start;
  let where = '';
  if (text !== undefined && start !== undefined) {
    // Cedar counts bytes of UTF-8; map back to the source's characters.
    const policyText = text.slice(offset);
    const chars = Buffer.from(policyText, 'utf8').subarray(0, start).toString('utf8').length;
    const before = text.slice(0, offset + chars).split('\n');
    where = ` (line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1})`;
  }
  const help = error.help === null || error.help === '' ? '' : ` (${error.help})`;
  return `${error.message}${help}${where}`;
}
