/** @module The tool definition (C1) as a type; its JSON Schema is in tool-definition-schema.ts. */
import type { DestinationRule } from '../policy/index.js';

export type JsonSchemaObject = { readonly [keyword: string]: unknown };

export const ACTION_CLASSES = [
  'read',
  'reversible_write',
  'external_send',
  'irreversible',
  'permission_change',
] as const;
export type ActionClass = (typeof ACTION_CLASSES)[number];

export const DATA_ACCESS = ['none', 'public', 'private'] as const;
export type DataAccess = (typeof DATA_ACCESS)[number];

export const ACCESS_TIERS = ['public', 'restricted', 'privileged'] as const;
export type AccessTier = (typeof ACCESS_TIERS)[number];

export const PROVENANCES = ['internal', 'third_party', 'oss'] as const;
export type Provenance = (typeof PROVENANCES)[number];

export const ISOLATION_LEVELS = ['none', 'process', 'namespace', 'gvisor'] as const;
export type IsolationLevel = (typeof ISOLATION_LEVELS)[number];

export const LIFECYCLE_STATES = ['draft', 'active', 'deprecated', 'retired'] as const;
export type LifecycleState = (typeof LIFECYCLE_STATES)[number];

export type Egress =
  | { readonly mode: 'none' }
  | { readonly mode: 'constrained'; readonly hosts: readonly string[] }
  | { readonly mode: 'unconstrained' };

export interface ApprovalCondition {
  /** JSON pointer into the call's arguments, e.g. `/amount`. */
  readonly argument: string;
  readonly op: 'gt' | 'gte' | 'lt' | 'lte' | 'eq' | 'ne';
  readonly value: number | string | boolean;
}

export interface Approval {
  /** `none`: never asks; `always`: every call; `conditional`: when any condition holds. */
  readonly mode: 'none' | 'always' | 'conditional';
  readonly conditions?: readonly ApprovalCondition[];
  readonly second_factor: boolean;
  readonly out_of_band: boolean;
}

export interface RateLimit {
  readonly per_run?: number;
  readonly per_window?: { readonly limit: number; readonly window_seconds: number };
}

/**
 * What one allowed call costs, charged to the spend budgets before it runs: a fixed
 * amount in minor units (cents), or taken from a required numeric argument, either already in
 * cents (`unit: cents`, an integer) or in major units with at most two decimal places
 * (`unit: major`, 12.34 → 1234 cents, exactly; a third place is refused, never rounded).
 */
export type Cost =
  | { readonly fixed_cents: number }
  | { readonly argument: string; readonly unit: 'cents' | 'major' };

export interface Sla {
  readonly target_latency_ms: number;
  readonly availability_percent: number;
}

export interface SandboxLimits {
  readonly wall_time_ms: number;
  readonly cpu_ms: number;
  readonly memory_mb: number;
  readonly processes: number;
  readonly open_files: number;
  readonly output_bytes: number;
  readonly scratch_mb: number;
}

export interface SandboxRequirements {
  readonly isolation: IsolationLevel;
  readonly network: 'none' | 'egress_proxy';
  readonly limits: SandboxLimits;
}

export interface CredentialRef {
  /** Name of the secret in the secrets store; never the value. */
  readonly secret: string;
  readonly inject: 'env' | 'header' | 'minted_jwt';
  /** Environment variable or header name that receives it. */
  readonly as: string;
}

export type Runtime =
  | { readonly kind: 'command'; readonly argv: readonly string[] }
  | {
      readonly kind: 'http';
      readonly base_url: string;
      readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
      readonly path: string;
    }
  | {
      readonly kind: 'mcp';
      readonly provider: string;
      /** The upstream tool; for an entry, its name (the entry says what is read). */
      readonly tool: string;
      /** Set for an upstream resource, resource template or prompt (not a tool). */
      readonly entry?: McpEntry;
      /**
       * The hash of what runs behind the provider when the tool was classified (its launch:
       * argv or URL, isolation, binds, variables). A call is refused once the provider runs
       * something else (`provider.changed`).
       */
      readonly launch?: string;
    }
  | { readonly kind: 'inline'; readonly handler: string };

/**
 * An upstream MCP resource, resource template or prompt, governed as a catalog entry: the gate
 * decides a `resources/read` or `prompts/get` of it as it decides a tool call (docs/architecture.md
 * §6). What the MCP listing shows besides the definition's description lives here.
 */
export type McpEntry =
  | {
      readonly kind: 'resource';
      readonly name: string;
      readonly uri: string;
      readonly title?: string;
      readonly mime_type?: string;
    }
  | {
      readonly kind: 'resource_template';
      readonly name: string;
      readonly uri_template: string;
      readonly title?: string;
      readonly mime_type?: string;
    }
  | {
      readonly kind: 'prompt';
      readonly name: string;
      readonly title?: string;
      readonly arguments: readonly {
        readonly name: string;
        readonly description?: string;
        readonly required?: boolean;
      }[];
    };

/** Semantic argument checks (C6) beyond the JSON Schema. */
export interface ArgumentsPolicy {
  /** Absolute directories that arguments marked `"x-toolgate": "path"` must resolve under. */
  readonly path_roots?: readonly string[];
  /** UTF-8 bytes of any one top-level argument, and of the whole call. */
  readonly max_argument_bytes: number;
  readonly max_call_bytes: number;
}

export const DEFAULT_MAX_ARGUMENT_BYTES = 65_536;
export const DEFAULT_MAX_CALL_BYTES = 262_144;

/** What the gate does with a finding in a tool's result (docs/architecture.md §3, step `result`). */
export const RESULT_ACTIONS = ['label', 'redact', 'block'] as const;
export type ResultAction = (typeof RESULT_ACTIONS)[number];

/**
 * How a tool's results are treated. `source` says whether what it returns may carry text someone
 * outside the organisation wrote (a web page, an e-mail, an upstream's reply); left out, it is
 * derived (`untrusted` unless the tool is internal and reaches nothing outside). Each kind of
 * finding has an action; left out, the defaults in content/result-policy.ts apply. Not filled in
 * at registration, so definitions registered before it existed keep their hash.
 */
export interface ResultPolicy {
  readonly source?: 'trusted' | 'untrusted';
  readonly injection?: ResultAction;
  readonly secrets?: ResultAction;
  readonly personal_data?: ResultAction;
}

/**
 * A harmless check of a tool's health (C14, docs/architecture.md §8): a call with fixed arguments,
 * run through the tool's own runtime and sandbox with its own credential (never an agent's), or
 * a GET of its upstream's health URL under the egress rules. Only a `read` tool may be probed by
 * a call. Not filled in at registration, so definitions registered before it existed keep their
 * hash. Tools of an upstream MCP provider are probed by listing the provider, probe or not.
 */
export type Probe =
  | { readonly kind: 'call'; readonly arguments: Readonly<Record<string, unknown>> }
  | { readonly kind: 'http'; readonly url: string };

/**
 * A read-only preview of the state a mutation would change, for its reviewer (docs/architecture.md
 * §3, "Previews"): when a call of this tool waits for approval, the gate calls `tool` in the
 * caller's own session, under every rule a call of it meets (grant, policy, sandbox, egress,
 * limits, audit, the result scan), with `arguments` taken from the waiting call's resolved
 * arguments (preview argument name → JSON pointer). Only a `read` that needs no approval runs;
 * its result is shown as untrusted text and never used for a decision. Not filled in at
 * registration, so definitions registered before it existed keep their hash.
 */
export interface PreviewDeclaration {
  readonly tool: string;
  readonly arguments: Readonly<Record<string, string>>;
}

/** A definition as registered, with every default filled in (what is stored and hashed). */
export interface ToolDefinition {
  readonly id: string;
  readonly version: string;
  readonly name: string;
  readonly description: string;
  /** Documentation hosts the owner declares; links there are allowed in descriptions. */
  readonly doc_hosts?: readonly string[];
  readonly tags: readonly string[];
  readonly owner: string;
  readonly input_schema: JsonSchemaObject;
  readonly output_schema: JsonSchemaObject;
  readonly action_class: ActionClass;
  readonly data_access: DataAccess;
  readonly egress: Egress;
  readonly access_tier: AccessTier;
  readonly required_capabilities: readonly string[];
  readonly approval: Approval;
  readonly rate_limit?: RateLimit;
  readonly cost?: Cost;
  readonly idempotent: boolean;
  readonly sla?: Sla;
  readonly sandbox: SandboxRequirements;
  readonly credentials?: CredentialRef;
  readonly runtime: Runtime;
  readonly provenance: Provenance;
  readonly code_hash?: string;
  readonly arguments_policy: ArgumentsPolicy;
  readonly result_policy?: ResultPolicy;
  /**
   * Arguments that name a destination other than a network host (a recipient, an account, a
   * phone, a chat channel), each constrained element by element to an allow-list (C6,
   * docs/architecture.md §3 step `policy`). Not filled in at registration, so older definitions keep
   * their hash.
   */
  readonly destinations?: readonly DestinationRule[];
  readonly probe?: Probe;
  readonly preview?: PreviewDeclaration;
}

/**
 * The default gate of each action class (the table in docs/architecture.md §1); a definition may
 * tighten it, never loosen it.
 */
export const APPROVAL_FLOOR: Readonly<Record<ActionClass, Approval>> = {
  read: { mode: 'none', second_factor: false, out_of_band: false },
  reversible_write: { mode: 'none', second_factor: false, out_of_band: false },
  external_send: { mode: 'always', second_factor: false, out_of_band: false },
  irreversible: { mode: 'always', second_factor: true, out_of_band: false },
  permission_change: { mode: 'always', second_factor: false, out_of_band: true },
};

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = {
  wall_time_ms: 10_000,
  cpu_ms: 5_000,
  memory_mb: 256,
  processes: 32,
  open_files: 64,
  output_bytes: 1_048_576,
  scratch_mb: 16,
};
