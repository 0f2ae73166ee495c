/**
 * @module The gateway's own tools: definitions an operator registers like any other (so they
 * are granted, gated, audited and scanned like any other), run by handlers toolgate ships
 * (runtime `inline`, names under `toolgate.`). docs/architecture.md §6, "Discovery for agents".
 */

/** The handler, and the id, of the agent-discovery tool. */
export const DISCOVER_TOOLS_HANDLER = 'toolgate.discover_tools';
/** The capability the shipped definition asks for: an admin grants it to agents that may search. */
export const DISCOVER_TOOLS_CAPABILITY = 'catalog:discover';

/**
 * The discovery tool as `examples/discover-tools.yaml` ships it. It reads nothing outside the
 * calling session's permitted set and reaches nothing outside the gateway.
 */
export function discoverToolsDefinition(): Record<string, unknown> {
  return {
    id: DISCOVER_TOOLS_HANDLER,
    version: '1.0.0',
    name: 'discover_tools',
    description:
      'Search the tools this session may call by the capability needed (words or tags). Results are ranked by match, health, SLA and access tier; a degraded tool is marked and lists healthy alternatives.',
    tags: ['discovery', 'catalog'],
    owner: 'platform-team',
    input_schema: {
      type: 'object',
      additionalProperties: false,
      properties: {
        query: { type: 'string', maxLength: 500, description: 'What the tool should do' },
        tags: {
          type: 'array',
          maxItems: 10,
          items: { type: 'string', maxLength: 100 },
          description: 'Every tag listed must be on the tool',
        },
        limit: { type: 'integer', minimum: 1, maximum: 50 },
      },
    },
    output_schema: {
      type: 'object',
      required: ['results'],
      properties: { results: { type: 'array', items: { type: 'object' } } },
    },
    action_class: 'read',
    data_access: 'public',
    egress: { mode: 'none' },
    access_tier: 'public',
    required_capabilities: [DISCOVER_TOOLS_CAPABILITY],
    idempotent: true,
    runtime: { kind: 'inline', handler: DISCOVER_TOOLS_HANDLER },
    provenance: 'internal',
    result_policy: { source: 'trusted' },
  };
}
