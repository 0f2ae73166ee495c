/**
 * @module The published JSON Schema (2020-12) of a tool definition as an author writes it, served at
 * /v1/schemas/tool.json. Fields with defaults are optional here and filled in by normalization.
 */
import { CAPABILITY_PATTERN, OWNER_PATTERN, TOOL_ID_PATTERN } from '../../core/index.js';
import { DESTINATION_KINDS, DESTINATION_SET_NAME_PATTERN } from '../policy/index.js';
import {
  ACCESS_TIERS,
  ACTION_CLASSES,
  DATA_ACCESS,
  ISOLATION_LEVELS,
  PROVENANCES,
  RESULT_ACTIONS,
} from './tool-definition.js';

const entryText = { type: 'string', minLength: 1, maxLength: 2048 } as const;

/** An upstream resource, resource template or prompt behind an mcp runtime (McpEntry). */
const mcpEntrySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['kind', 'name'],
  properties: {
    kind: { enum: ['resource', 'resource_template', 'prompt'] },
    name: { type: 'string', minLength: 1, maxLength: 256 },
    title: { type: 'string', maxLength: 256 },
    uri: entryText,
    uri_template: entryText,
    mime_type: { type: 'string', maxLength: 256 },
    arguments: {
      type: 'array',
      maxItems: 64,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name'],
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 128 },
          description: { type: 'string', maxLength: 4096 },
          required: { type: 'boolean' },
        },
      },
    },
  },
} as const;

export const TOOL_SCHEMA_ID = 'https://toolgate.dev/schemas/tool.json';

/** Tool names follow the strictest of the MCP, OpenAI and Anthropic rules so every export works. */
export const TOOL_NAME_PATTERN = '^[a-zA-Z][a-zA-Z0-9_-]{0,63}$';
/** Exact host names only: no scheme, port, wildcard or trailing dot. */
const HOST_PATTERN =
  '^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$';
/**
 * Documentation hosts an owner declares: links there are not findings of the description scan
 * even with a query string (a query that names the data it carries, or a slot for the model to
 * fill, still is). The tool does not reach them: egress is declared apart.
 */
export const DOC_HOSTS_SCHEMA = {
  type: 'array',
  maxItems: 16,
  uniqueItems: true,
  items: {
    type: 'string',
    pattern: HOST_PATTERN,
    'x-hint':
      'an exact lower-case host name with a dot (no scheme, port, wildcard or trailing dot)',
  },
} as const;
const SEMVER_PATTERN =
  '^(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)(?:-((?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\\.(?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\\+([0-9a-zA-Z-]+(?:\\.[0-9a-zA-Z-]+)*))?$';

const positiveInt = (max: number) => ({ type: 'integer', minimum: 1, maximum: max });

export const toolDefinitionSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: TOOL_SCHEMA_ID,
  title: 'toolgate tool definition',
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'version',
    'name',
    'description',
    'owner',
    'input_schema',
    'output_schema',
    'action_class',
    'data_access',
    'egress',
    'access_tier',
    'required_capabilities',
    'runtime',
    'provenance',
  ],
  properties: {
    id: {
      type: 'string',
      pattern: TOOL_ID_PATTERN,
      'x-hint':
        'lower-case letters, digits, _ or -, starting with a letter, optionally dot-separated (search_tickets, github.create_issue)',
      maxLength: 200,
      description: 'Globally unique, lower-case, dotted for imported tools (provider.tool).',
    },
    version: {
      type: 'string',
      pattern: SEMVER_PATTERN,
      'x-hint': 'a SemVer 2.0.0 version such as 1.0.0 or 2.1.0-rc.1',
      maxLength: 64,
      description: 'SemVer 2.0.0',
    },
    name: {
      type: 'string',
      pattern: TOOL_NAME_PATTERN,
      'x-hint': 'letters, digits, _ or -, starting with a letter, at most 64 characters',
      description: 'Name shown to the model.',
    },
    description: { type: 'string', minLength: 1, maxLength: 4096 },
    doc_hosts: DOC_HOSTS_SCHEMA,
    tags: {
      type: 'array',
      maxItems: 32,
      uniqueItems: true,
      items: {
        type: 'string',
        pattern: '^[a-z0-9][a-z0-9_.-]{0,39}$',
        'x-hint': 'a lower-case tag of at most 40 characters',
      },
    },
    owner: {
      type: 'string',
      pattern: OWNER_PATTERN,
      'x-hint': 'a team name: letters, digits, _ . @ or -',
      description: 'Owning team.',
    },
    input_schema: { type: 'object', description: 'JSON Schema 2020-12 of the arguments.' },
    output_schema: { type: 'object', description: 'JSON Schema 2020-12 of the result.' },
    action_class: { enum: [...ACTION_CLASSES] },
    data_access: { enum: [...DATA_ACCESS] },
    egress: {
      type: 'object',
      required: ['mode'],
      discriminator: { propertyName: 'mode' },
      oneOf: [
        {
          type: 'object',
          additionalProperties: false,
          required: ['mode'],
          properties: { mode: { enum: ['none', 'unconstrained'] } },
        },
        {
          type: 'object',
          additionalProperties: false,
          required: ['mode', 'hosts'],
          properties: {
            mode: { const: 'constrained' },
            hosts: {
              type: 'array',
              minItems: 1,
              maxItems: 64,
              uniqueItems: true,
              items: {
                type: 'string',
                pattern: HOST_PATTERN,
                'x-hint':
                  'an exact lower-case host name with a dot (no scheme, port, wildcard or trailing dot)',
              },
            },
          },
        },
      ],
    },
    access_tier: { enum: [...ACCESS_TIERS] },
    required_capabilities: {
      type: 'array',
      minItems: 1,
      maxItems: 16,
      uniqueItems: true,
      items: {
        type: 'string',
        pattern: CAPABILITY_PATTERN,
        maxLength: 100,
        'x-hint': 'a capability such as tickets:read',
      },
      description: 'An agent must hold every one; at least one, so no tool is open to all.',
    },
    approval: {
      type: 'object',
      additionalProperties: false,
      required: ['mode'],
      properties: {
        mode: { enum: ['none', 'always', 'conditional'] },
        conditions: {
          type: 'array',
          minItems: 1,
          maxItems: 16,
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['argument', 'op', 'value'],
            properties: {
              argument: { type: 'string', pattern: '^(/[^/]*)+$' },
              op: { enum: ['gt', 'gte', 'lt', 'lte', 'eq', 'ne'] },
              value: { type: ['number', 'string', 'boolean'] },
            },
          },
        },
        second_factor: { type: 'boolean' },
        out_of_band: { type: 'boolean' },
      },
    },
    rate_limit: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      properties: {
        per_run: positiveInt(1_000_000),
        per_window: {
          type: 'object',
          additionalProperties: false,
          required: ['limit', 'window_seconds'],
          properties: {
            limit: positiveInt(1_000_000_000),
            window_seconds: positiveInt(31_536_000),
          },
        },
      },
    },
    cost: {
      oneOf: [
        {
          type: 'object',
          additionalProperties: false,
          required: ['fixed_cents'],
          properties: { fixed_cents: { type: 'integer', minimum: 0, maximum: 100_000_000_000 } },
        },
        {
          type: 'object',
          additionalProperties: false,
          required: ['argument', 'unit'],
          properties: {
            argument: { type: 'string', minLength: 1, maxLength: 200 },
            unit: { enum: ['cents', 'major'] },
          },
        },
      ],
    },
    idempotent: { type: 'boolean' },
    sla: {
      type: 'object',
      additionalProperties: false,
      required: ['target_latency_ms', 'availability_percent'],
      properties: {
        target_latency_ms: positiveInt(3_600_000),
        availability_percent: { type: 'number', exclusiveMinimum: 0, maximum: 100 },
      },
    },
    sandbox: {
      type: 'object',
      additionalProperties: false,
      required: ['isolation'],
      properties: {
        isolation: { enum: [...ISOLATION_LEVELS] },
        network: { enum: ['none', 'egress_proxy'] },
        limits: {
          type: 'object',
          additionalProperties: false,
          properties: {
            wall_time_ms: positiveInt(3_600_000),
            cpu_ms: positiveInt(3_600_000),
            memory_mb: positiveInt(65_536),
            processes: positiveInt(4096),
            open_files: positiveInt(65_536),
            output_bytes: positiveInt(1_073_741_824),
            scratch_mb: positiveInt(65_536),
          },
        },
      },
    },
    credentials: {
      type: 'object',
      additionalProperties: false,
      required: ['secret', 'inject', 'as'],
      properties: {
        secret: { type: 'string', pattern: '^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,99}$' },
        inject: { enum: ['env', 'header', 'minted_jwt'] },
        as: { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9_-]{0,99}$' },
      },
    },
    runtime: {
      type: 'object',
      required: ['kind'],
      discriminator: { propertyName: 'kind' },
      oneOf: [
        {
          additionalProperties: false,
          required: ['kind', 'argv'],
          properties: {
            kind: { const: 'command' },
            argv: {
              type: 'array',
              minItems: 1,
              maxItems: 64,
              items: { type: 'string', minLength: 1, maxLength: 4096 },
            },
          },
        },
        {
          additionalProperties: false,
          required: ['kind', 'base_url', 'method', 'path'],
          properties: {
            kind: { const: 'http' },
            base_url: {
              type: 'string',
              pattern: '^https://',
              maxLength: 2048,
              'x-hint': 'an https:// URL',
            },
            method: { enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] },
            path: {
              type: 'string',
              pattern: '^/',
              maxLength: 2048,
              'x-hint': 'a path starting with /',
            },
          },
        },
        {
          additionalProperties: false,
          required: ['kind', 'provider', 'tool'],
          properties: {
            kind: { const: 'mcp' },
            provider: { type: 'string', pattern: '^[a-z][a-z0-9_-]{0,62}$' },
            tool: { type: 'string', minLength: 1, maxLength: 128 },
            entry: mcpEntrySchema,
            launch: { type: 'string', pattern: '^sha256:[0-9a-f]{64}$' },
          },
        },
        {
          additionalProperties: false,
          required: ['kind', 'handler'],
          properties: {
            kind: { const: 'inline' },
            handler: { type: 'string', pattern: '^[a-z][a-z0-9_.-]{0,99}$' },
          },
        },
      ],
    },
    provenance: { enum: [...PROVENANCES] },
    destinations: {
      type: 'array',
      minItems: 1,
      maxItems: 32,
      description:
        'Arguments that name a destination (recipient, account, phone, channel), each constrained element by element to an allow-list.',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['argument', 'kind', 'allow'],
        properties: {
          argument: {
            type: 'string',
            pattern: '^(/[^/]+)+$',
            maxLength: 256,
            'x-hint': 'a JSON pointer to the argument, e.g. /to or /recipients',
          },
          kind: { enum: [...DESTINATION_KINDS] },
          allow: {
            type: 'object',
            additionalProperties: false,
            minProperties: 1,
            properties: {
              values: {
                type: 'array',
                minItems: 1,
                maxItems: 1024,
                uniqueItems: true,
                items: { type: 'string', minLength: 1, maxLength: 512 },
              },
              email_domains: {
                type: 'array',
                minItems: 1,
                maxItems: 64,
                uniqueItems: true,
                items: {
                  type: 'string',
                  pattern: '^(\\*\\.)?[a-z0-9.-]{1,253}$',
                  'x-hint': 'a lower-case domain, or *.domain for its sub-domains',
                },
              },
              sets: {
                type: 'array',
                minItems: 1,
                maxItems: 16,
                uniqueItems: true,
                items: { type: 'string', pattern: DESTINATION_SET_NAME_PATTERN },
              },
            },
          },
        },
      },
    },
    result_policy: {
      type: 'object',
      additionalProperties: false,
      properties: {
        source: { enum: ['trusted', 'untrusted'] },
        injection: { enum: [...RESULT_ACTIONS] },
        secrets: { enum: [...RESULT_ACTIONS] },
        personal_data: { enum: [...RESULT_ACTIONS] },
      },
    },
    arguments_policy: {
      type: 'object',
      additionalProperties: false,
      properties: {
        path_roots: {
          type: 'array',
          minItems: 1,
          maxItems: 16,
          uniqueItems: true,
          items: {
            type: 'string',
            pattern: '^/',
            maxLength: 1024,
            'x-hint': 'an absolute directory',
          },
        },
        max_argument_bytes: positiveInt(16_777_216),
        max_call_bytes: positiveInt(67_108_864),
      },
    },
    probe: {
      type: 'object',
      required: ['kind'],
      discriminator: { propertyName: 'kind' },
      oneOf: [
        {
          additionalProperties: false,
          required: ['kind', 'arguments'],
          properties: {
            kind: { const: 'call' },
            arguments: { type: 'object', maxProperties: 64 },
          },
        },
        {
          additionalProperties: false,
          required: ['kind', 'url'],
          properties: {
            kind: { const: 'http' },
            url: {
              type: 'string',
              pattern: '^https://',
              maxLength: 2048,
              'x-hint': 'an https:// URL',
            },
          },
        },
      ],
    },
    preview: {
      type: 'object',
      additionalProperties: false,
      required: ['tool', 'arguments'],
      properties: {
        tool: {
          type: 'string',
          pattern: TOOL_ID_PATTERN,
          maxLength: 200,
          'x-hint': 'the id of a registered read tool',
        },
        arguments: {
          type: 'object',
          maxProperties: 32,
          propertyNames: { maxLength: 128 },
          additionalProperties: {
            type: 'string',
            pattern: '^(/.*)?$',
            maxLength: 1024,
            'x-hint': "a JSON pointer into the waiting call's arguments",
          },
        },
      },
    },
    code_hash: {
      type: 'string',
      pattern: '^sha256:[0-9a-f]{64}$',
      'x-hint': 'sha256: followed by 64 hex digits',
    },
  },
} as const;
