/**
 * @module The catalog definition of an upstream tool under an admin's classification (C3): its
 * listing as pinned (`code_hash`), the classification's facts, and the provider's launch
 * (`runtime.launch`), so a review of it binds the program that runs as well as what it lists.
 */
import type { JsonSchemaObject } from '../../domain/catalog/index.js';
import { launchHash, type ProviderSpec, type ToolClassification } from './provider-spec.js';

/** An upstream tool as listed and pinned (tool-pin.ts). */
export interface PinnedTool {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema: JsonSchemaObject;
  readonly outputSchema?: JsonSchemaObject;
  readonly pin: string;
}

/** A call's wall time when the classification sets none. */
const DEFAULT_CALL_WALL_MS = 10_000;

/**
 * The input schema as the catalog keeps it: every keyword the upstream listed, `$schema`, `$id`,
 * `$defs`, `$comment` and the rest included (the gate validates under the dialect it names). Two
 * additions only: `"x-toolgate": "path"` on the arguments the admin classified as paths, and a
 * closed top level where the upstream left it open (unknown arguments are refused at the gate,
 * whatever the upstream would accept); a schema closed by `additionalProperties: false` or
 * `unevaluatedProperties: false` is left as it is.
 */
function importedInputSchema(
  listed: JsonSchemaObject,
  pathArguments: readonly string[],
): Record<string, unknown> {
  const input: Record<string, unknown> = { ...listed, type: 'object' };
  if (pathArguments.length > 0) {
    const properties = { ...((input.properties as Record<string, JsonSchemaObject>) ?? {}) };
    for (const arg of pathArguments) {
      const prop = properties[arg];
      if (prop) properties[arg] = { ...prop, 'x-toolgate': 'path' };
    }
    input.properties = properties;
  }
  if (input.additionalProperties !== false && input.unevaluatedProperties !== false) {
    input.additionalProperties = false;
  }
  return input;
}

/** The catalog definition of an imported tool under an admin's classification. */
export function importedDefinition(
  spec: ProviderSpec,
  toolId: string,
  version: string,
  listed: PinnedTool,
  c: ToolClassification,
): Record<string, unknown> {
  const inputSchema = importedInputSchema(listed.inputSchema, c.path_arguments ?? []);
  const outputSchema = listed.outputSchema
    ? { ...listed.outputSchema }
    : { type: 'object', 'x-toolgate': 'unstructured' };
  const description = (listed.description ?? '').trim() || `${listed.name} (from ${spec.name})`;
  return {
    id: toolId,
    version,
    name: listed.name,
    description: description.slice(0, 4096),
    ...(spec.doc_hosts && spec.doc_hosts.length > 0 ? { doc_hosts: [...spec.doc_hosts] } : {}),
    tags: ['mcp', spec.name, ...(c.tags ?? []).filter((t) => t !== 'mcp' && t !== spec.name)],
    owner: spec.owner,
    input_schema: inputSchema,
    output_schema: outputSchema,
    action_class: c.action_class,
    data_access: c.data_access,
    egress: c.egress,
    access_tier: c.access_tier,
    required_capabilities: [...c.required_capabilities],
    sandbox: {
      isolation: spec.isolation,
      limits: { wall_time_ms: c.wall_time_ms ?? DEFAULT_CALL_WALL_MS },
    },
    runtime: { kind: 'mcp', provider: spec.name, tool: listed.name, launch: launchHash(spec) },
    provenance: 'third_party',
    code_hash: listed.pin,
    ...(c.path_roots ? { arguments_policy: { path_roots: [...c.path_roots] } } : {}),
  };
}
