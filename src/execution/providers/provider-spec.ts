/**
 * @module `kind: Provider`: an upstream MCP server reached over stdio, its command run
 * inside the sandbox with the isolation it declares. The spec names everything the upstream may
 * see: its argv, read-only folders, at most one writable workspace, a fixed environment. Nothing of
 * toolgate's own environment reaches it.
 */

import {
  AGENT_ID_PATTERN,
  CAPABILITY_PATTERN,
  canonicalJson,
  OWNER_PATTERN,
  type Problem,
  problem,
  sha256Hex,
  ToolgateError,
} from '../../core/index.js';
import {
  ACCESS_TIERS,
  ACTION_CLASSES,
  compileDocumentValidator,
  DATA_ACCESS,
  DEFAULT_SANDBOX_LIMITS,
  DOC_HOSTS_SCHEMA,
  type JsonSchemaObject,
  type SandboxLimits,
} from '../../domain/catalog/index.js';
import { checkProviderUrl } from './checked-fetch.js';
import { workspaceOverlapProblems } from './workspace-overlap.js';

export interface ProviderBind {
  /** Absolute host path. */
  readonly source: string;
  /** Absolute path inside the sandbox; default: the same as `source`. */
  readonly target?: string;
}

export interface ProviderSpec {
  /** Lower-case; the prefix of every imported tool id (`name.tool`). */
  readonly name: string;
  readonly owner: string;
  readonly description?: string;
  /** Documentation hosts of the server's tools: links there pass the description scan. */
  readonly doc_hosts?: readonly string[];
  /** `stdio`: `command` run in the sandbox; `http`: a Streamable HTTP endpoint at `url`. */
  readonly transport: 'stdio' | 'http';
  /** argv of the server; never a shell string (stdio). */
  readonly command?: readonly string[];
  /** https URL of the MCP endpoint (http); its exact host is the only one reached. */
  readonly url?: string;
  readonly isolation: 'namespace' | 'gvisor';
  /** Host folders or files visible read-only (the server's code and its node_modules). */
  readonly binds?: readonly ProviderBind[];
  /** The one folder the server may write to. */
  readonly workspace?: ProviderBind;
  /** Fixed, non-secret variables; the sandbox's defaults (PATH, HOME, TMPDIR, LANG) besides. */
  readonly env?: Readonly<Record<string, string>>;
  /** Limits of the long-lived process (memory, files, processes, CPU over its whole life). */
  readonly limits?: Partial<
    Pick<SandboxLimits, 'memory_mb' | 'open_files' | 'processes' | 'cpu_ms' | 'scratch_mb'>
  >;
  /** A per-session process unused this long is closed (default 300 000 ms). */
  readonly idle_timeout_ms?: number;
}

/**
 * What runs behind a provider and where its calls go: transport, argv, URL, isolation, binds,
 * workspace and variables, hashed (RFC 8785). An imported tool's definition carries it
 * (`runtime.launch`), so the review of the tool binds the program as well as its listing, and a
 * call is refused (`provider.changed`) once the provider is updated to run something else: a
 * new program needs a new classification and, for a third-party tool, a new review. Its limits,
 * idle timeout, owner and documentation hosts change nothing that runs.
 */
export function launchHash(spec: ProviderSpec): string {
  const launch = {
    transport: spec.transport,
    command: spec.command ?? null,
    url: spec.url ?? null,
    isolation: spec.isolation,
    binds: spec.binds ?? [],
    workspace: spec.workspace ?? null,
    env: spec.env ?? {},
  };
  return `sha256:${sha256Hex(canonicalJson(launch))}`;
}

/** The launch hash of a stored spec; null when it no longer reads as a spec (then it changed). */
export function storedLaunchHash(json: string): string | null {
  try {
    return launchHash(normalizeProviderSpec(JSON.parse(json) as unknown));
  } catch {
    return null;
  }
}

/** Defaults for a long-lived Node-based MCP server: more files and memory than a one-shot tool. */
export const PROVIDER_LIMITS: SandboxLimits = {
  ...DEFAULT_SANDBOX_LIMITS,
  memory_mb: 2048,
  open_files: 512,
  processes: 64,
  cpu_ms: 3_600_000,
};

export const DEFAULT_IDLE_TIMEOUT_MS = 300_000;

const absolutePath = { type: 'string', pattern: '^/', maxLength: 4096 } as const;
const bindSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['source'],
  properties: { source: absolutePath, target: absolutePath },
} as const;

export const providerSpecSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'owner'],
  properties: {
    name: { type: 'string', pattern: AGENT_ID_PATTERN },
    owner: { type: 'string', pattern: OWNER_PATTERN },
    description: { type: 'string', maxLength: 2000 },
    doc_hosts: DOC_HOSTS_SCHEMA,
    transport: { enum: ['stdio', 'http'] },
    url: { type: 'string', pattern: '^https://', maxLength: 2048 },
    command: {
      type: 'array',
      minItems: 1,
      maxItems: 64,
      items: { type: 'string', minLength: 1, maxLength: 4096 },
    },
    isolation: { enum: ['namespace', 'gvisor'] },
    binds: { type: 'array', maxItems: 32, items: bindSchema },
    workspace: bindSchema,
    env: {
      type: 'object',
      maxProperties: 64,
      propertyNames: { pattern: '^[A-Za-z_][A-Za-z0-9_]{0,127}$' },
      additionalProperties: { type: 'string', maxLength: 4096 },
    },
    limits: {
      type: 'object',
      additionalProperties: false,
      properties: {
        memory_mb: { type: 'integer', minimum: 16, maximum: 65_536 },
        open_files: { type: 'integer', minimum: 16, maximum: 65_536 },
        processes: { type: 'integer', minimum: 1, maximum: 4096 },
        cpu_ms: { type: 'integer', minimum: 1000, maximum: 86_400_000 },
        scratch_mb: { type: 'integer', minimum: 1, maximum: 65_536 },
      },
    },
    idle_timeout_ms: { type: 'integer', minimum: 1000, maximum: 86_400_000 },
  },
} as const satisfies JsonSchemaObject;

/** What an admin decides for one imported tool before it can be offered. */
export interface ToolClassification {
  readonly action_class: (typeof ACTION_CLASSES)[number];
  readonly data_access: (typeof DATA_ACCESS)[number];
  readonly egress:
    | { readonly mode: 'none' }
    | { readonly mode: 'constrained'; readonly hosts: readonly string[] }
    | { readonly mode: 'unconstrained' };
  readonly access_tier: (typeof ACCESS_TIERS)[number];
  readonly required_capabilities: readonly string[];
  /** Top-level arguments that name files: marked `"x-toolgate": "path"` for the path policy. */
  readonly path_arguments?: readonly string[];
  /** Absolute roots those arguments must resolve under (host view of the workspace). */
  readonly path_roots?: readonly string[];
  /** How long one call may take before it is abandoned (default 10 000 ms). */
  readonly wall_time_ms?: number;
  readonly tags?: readonly string[];
}

export const classificationSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['action_class', 'data_access', 'egress', 'access_tier', 'required_capabilities'],
  properties: {
    action_class: { enum: [...ACTION_CLASSES] },
    data_access: { enum: [...DATA_ACCESS] },
    egress: {
      type: 'object',
      required: ['mode'],
      properties: {
        mode: { enum: ['none', 'constrained', 'unconstrained'] },
        hosts: { type: 'array', items: { type: 'string' } },
      },
    },
    access_tier: { enum: [...ACCESS_TIERS] },
    required_capabilities: {
      type: 'array',
      maxItems: 32,
      items: { type: 'string', pattern: CAPABILITY_PATTERN },
    },
    path_arguments: { type: 'array', maxItems: 32, items: { type: 'string', maxLength: 128 } },
    path_roots: { type: 'array', maxItems: 32, items: absolutePath },
    wall_time_ms: { type: 'integer', minimum: 100, maximum: 3_600_000 },
    tags: { type: 'array', maxItems: 32, items: { type: 'string', maxLength: 64 } },
  },
} as const satisfies JsonSchemaObject;

const validateSpec = compileDocumentValidator(providerSpecSchema);
const validateClassification = compileDocumentValidator(classificationSchema);

export function checkProviderSpec(input: unknown): Problem[] {
  const problems = validateSpec(input);
  if (problems.length > 0) return problems;
  const spec = input as ProviderSpec;
  const transport = spec.transport ?? 'stdio';
  if (transport === 'stdio' && spec.command === undefined) {
    problems.push(problem('/command', 'a stdio provider needs its command', 'required'));
  }
  if (transport === 'http') {
    if (spec.url === undefined)
      problems.push(problem('/url', 'an http provider needs its url', 'required'));
    else {
      try {
        checkProviderUrl(spec.url);
      } catch (err) {
        problems.push(
          problem('/url', err instanceof Error ? err.message : 'refused', 'provider.url'),
        );
      }
    }
    for (const field of ['command', 'binds', 'workspace', 'env'] as const) {
      if (spec[field] !== undefined) {
        problems.push(
          problem(`/${field}`, 'only stdio providers run a command', 'provider.transport'),
        );
      }
    }
  }
  for (const b of [...(spec.binds ?? []), ...(spec.workspace ? [spec.workspace] : [])]) {
    for (const p of [b.source, b.target ?? b.source]) {
      if (p.split('/').includes('..'))
        problems.push(problem('/binds', `${p} has ..`, 'provider.bind'));
    }
  }
  if (
    spec.workspace &&
    ['/', '/etc', '/usr', '/proc', '/dev'].includes(spec.workspace.target ?? spec.workspace.source)
  ) {
    problems.push(
      problem('/workspace/target', 'must not cover a system folder', 'provider.workspace'),
    );
  }
  problems.push(...workspaceOverlapProblems(spec));
  return problems;
}

/** The spec with its defaults filled in (what is stored and hashed). */
export function normalizeProviderSpec(input: unknown): ProviderSpec {
  const problems = checkProviderSpec(input);
  if (problems.length > 0) {
    throw new ToolgateError(
      'INPUT_INVALID',
      `provider spec refused: ${problems[0]?.pointer} ${problems[0]?.message}`,
      {
        problems,
      },
    );
  }
  const spec = input as ProviderSpec;
  return {
    ...spec,
    transport: spec.transport ?? 'stdio',
    isolation: spec.isolation ?? 'namespace',
  };
}

export function checkClassification(input: unknown): ToolClassification {
  const problems = validateClassification(input);
  if (problems.length > 0) {
    throw new ToolgateError(
      'INPUT_INVALID',
      `classification refused: ${problems[0]?.pointer} ${problems[0]?.message}`,
      {
        problems,
      },
    );
  }
  return input as ToolClassification;
}
