/**
 * @module The gate's cache of compiled tools (each version's input and output validators, policy
 * targets and mirrored-header declarations) and of the org policy engine. Both are dropped
 * together whenever the catalog or a policy changes: a tool is never checked against a schema or
 * policy it no longer has, and a new version is a new entry.
 */
import type { ValidateFunction } from 'ajv';
import {
  type CatalogService,
  createToolSchemaCompiler,
  type ParamDeclaration,
  paramDeclarations,
  type ToolVersionDetail,
} from '../domain/catalog/index.js';
import {
  type PolicyEngine,
  type PolicySupplier,
  type PolicyTarget,
  policyTargets,
} from '../domain/policy/index.js';

export interface CompiledTool {
  readonly detail: ToolVersionDetail;
  readonly validateInput: ValidateFunction;
  /**
   * The same input schema, checked up to the first error only, compiled on first use: for
   * arguments too large to list every problem of (step `schema`), where one error per member
   * would be work and memory the caller chooses.
   */
  firstErrorInput(): ValidateFunction;
  readonly validateOutput: ValidateFunction;
  readonly targets: readonly PolicyTarget[];
  /** Its input schema's `x-mcp-header` declarations, read once per version (step `headers`). */
  readonly paramHeaders: readonly ParamDeclaration[];
}

const NO_ENGINE: Promise<PolicyEngine | null> = Promise.resolve(null);

export class ToolCache {
  readonly #catalog: CatalogService;
  readonly #policies: PolicySupplier | undefined;
  // Each tool schema is compiled under the dialect it declares (2020-12, or an upstream's draft-07);
  // input schemas leave their URL formats to the URL policy (step `policy`).
  readonly #inputs = createToolSchemaCompiler({ inputs: true });
  readonly #firstErrorInputs = createToolSchemaCompiler({ inputs: true, firstError: true });
  readonly #outputs = createToolSchemaCompiler();
  #cache = new Map<string, CompiledTool>();
  #engine: Promise<PolicyEngine | null> | null = null;
  /** The engine #engine resolved to; undefined until it has (or after it failed). */
  #loadedEngine: PolicyEngine | null | undefined = undefined;

  constructor(catalog: CatalogService, policies?: PolicySupplier) {
    this.#catalog = catalog;
    this.#policies = policies;
  }

  /** Drops every compiled tool and the loaded policy engine. */
  invalidate(): void {
    this.#cache = new Map();
    this.#engine = null;
    this.#loadedEngine = undefined;
    this.#inputs.reset();
    this.#firstErrorInputs.reset();
    this.#outputs.reset();
  }

  /** The tool version if it is compiled already: the hot path decides without an await. */
  cached(id: string, version: string): CompiledTool | undefined {
    return this.#cache.get(`${id}@${version}`);
  }

  /** The tool version compiled, or null when it is not in the catalog (or cannot be compiled). */
  async compiled(id: string, version: string): Promise<CompiledTool | null> {
    const key = `${id}@${version}`;
    const hit = this.#cache.get(key);
    if (hit) return hit;
    let detail: ToolVersionDetail;
    try {
      detail = await this.#catalog.get(id, version);
    } catch {
      return null;
    }
    let compiled: CompiledTool;
    const schema = detail.definition.input_schema;
    const firstErrors = this.#firstErrorInputs;
    let firstError: ValidateFunction | null = null;
    try {
      compiled = {
        detail,
        validateInput: this.#inputs.compile(schema),
        // The schema compiled once already: this compile cannot fail where that one did not.
        firstErrorInput: () => {
          firstError ??= firstErrors.compile(schema);
          return firstError;
        },
        validateOutput: this.#outputs.compile(detail.definition.output_schema),
        targets: policyTargets(schema),
        paramHeaders: paramDeclarations(schema),
      };
    } catch {
      // Registration refuses such schemas; one that slipped through is treated as absent.
      return null;
    }
    this.#cache.set(key, compiled);
    return compiled;
  }

  /**
   * Every stored version of a tool, read now (not cached: only a pin to a major the session does
   * not offer, or a retired version's successor, asks). Empty when the tool is unknown.
   */
  async versions(id: string): Promise<ToolVersionDetail[]> {
    return this.#catalog.versions(id).catch(() => []);
  }

  /** The org policy engine, loaded once per catalog revision; may reject (never means "none"). */
  policyEngine(): Promise<PolicyEngine | null> {
    if (this.#engine) return this.#engine;
    const loading = this.#policies ? this.#policies() : NO_ENGINE;
    this.#engine = loading;
    // Kept only while it is still the current load (not invalidated or dropped meanwhile).
    loading.then(
      (engine) => {
        if (this.#engine === loading) this.#loadedEngine = engine;
      },
      () => {},
    );
    return loading;
  }

  /** The engine once loaded (null: no org policies); undefined while it has to be awaited. */
  get loadedPolicyEngine(): PolicyEngine | null | undefined {
    return this.#loadedEngine;
  }

  /** Forgets an engine that failed to load, so the next call tries again. */
  dropPolicyEngine(): void {
    this.#engine = null;
    this.#loadedEngine = undefined;
  }
}
