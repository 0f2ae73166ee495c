/**
 * @module Configuration as data (docs/architecture.md §2): the documents `apply -f` and POST /v1/apply
 * accept, their published JSON Schema, and a parser for YAML (multi-document) or JSON text.
 */
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { ToolgateError, textPosition } from '../../core/index.js';
import { TOOL_SCHEMA_ID } from '../../domain/catalog/index.js';
import { agentSpecSchema, grantSpecSchema, userSpecSchema } from '../../domain/identity/index.js';
import { operatorDocumentSchema } from '../../domain/operators/index.js';
import { destinationSetDocumentSchema, policySpecSchema } from '../../domain/policy/index.js';
import { providerSpecSchema } from '../../execution/providers/index.js';
import { ownerChannelDocumentSchema } from '../owners/index.js';

export const SUPPORTED_KINDS = [
  'Tool',
  'Agent',
  'User',
  'Grant',
  'Policy',
  'Provider',
  'DestinationSet',
  'Operator',
  'OwnerChannel',
] as const;
/** Kinds the format reserves for later work; a file using them is refused with this reason. */
export const RESERVED_KINDS = ['Secret'] as const;
export type ConfigKind = (typeof SUPPORTED_KINDS)[number];

export interface ConfigDocument {
  readonly kind: ConfigKind;
  readonly spec: unknown;
}

export const CONFIG_SCHEMA_ID = 'https://toolgate.dev/schemas/config.json';

/** One document of a configuration file; a file is one document or a list of them. */
export const configDocumentSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: CONFIG_SCHEMA_ID,
  title: 'toolgate configuration document',
  type: 'object',
  required: ['kind', 'spec'],
  discriminator: { propertyName: 'kind' },
  oneOf: [
    {
      additionalProperties: false,
      required: ['kind', 'spec'],
      properties: {
        apiVersion: { const: 'toolgate/v1' },
        kind: { const: 'Tool' },
        spec: { $ref: TOOL_SCHEMA_ID },
      },
    },
    {
      additionalProperties: false,
      required: ['kind', 'spec'],
      properties: {
        apiVersion: { const: 'toolgate/v1' },
        kind: { const: 'Agent' },
        spec: agentSpecSchema,
      },
    },
    {
      additionalProperties: false,
      required: ['kind', 'spec'],
      properties: {
        apiVersion: { const: 'toolgate/v1' },
        kind: { const: 'User' },
        spec: userSpecSchema,
      },
    },
    {
      additionalProperties: false,
      required: ['kind', 'spec'],
      properties: {
        apiVersion: { const: 'toolgate/v1' },
        kind: { const: 'Grant' },
        spec: grantSpecSchema,
      },
    },
    {
      additionalProperties: false,
      required: ['kind', 'spec'],
      properties: {
        apiVersion: { const: 'toolgate/v1' },
        kind: { const: 'Policy' },
        spec: policySpecSchema,
      },
    },
    {
      additionalProperties: false,
      required: ['kind', 'spec'],
      properties: {
        apiVersion: { const: 'toolgate/v1' },
        kind: { const: 'Provider' },
        spec: providerSpecSchema,
      },
    },
    {
      additionalProperties: false,
      required: ['kind', 'spec'],
      properties: {
        apiVersion: { const: 'toolgate/v1' },
        kind: { const: 'DestinationSet' },
        spec: destinationSetDocumentSchema,
      },
    },
    {
      additionalProperties: false,
      required: ['kind', 'spec'],
      properties: {
        apiVersion: { const: 'toolgate/v1' },
        kind: { const: 'Operator' },
        spec: operatorDocumentSchema,
      },
    },
    {
      additionalProperties: false,
      required: ['kind', 'spec'],
      properties: {
        apiVersion: { const: 'toolgate/v1' },
        kind: { const: 'OwnerChannel' },
        spec: ownerChannelDocumentSchema,
      },
    },
  ],
} as const;

/** The demo folder shipped with toolgate (its catalog, tool scripts and sample workspace). */
export const DEMO_FOLDER = fileURLToPath(new URL('../../../demo', import.meta.url));
/** In any string of a configuration document, this stands for DEMO_FOLDER. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: the variable's literal spelling
export const DEMO_FOLDER_VARIABLE = '${TOOLGATE_DEMO}';

/**
 * Puts the demo folder in for `${TOOLGATE_DEMO}` in every string (values only, never keys), so
 * the demo's tool scripts and workspace resolve wherever toolgate is installed. Returns the input
 * itself when nothing changes; never alters the caller's objects.
 */
export function expandDemoFolder(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') {
    return value.includes(DEMO_FOLDER_VARIABLE)
      ? value.replaceAll(DEMO_FOLDER_VARIABLE, DEMO_FOLDER)
      : value;
  }
  if (typeof value !== 'object' || value === null || depth > 64) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | null = null;
    value.forEach((item, i) => {
      const expanded = expandDemoFolder(item, depth + 1);
      if (expanded !== item) {
        out ??= [...value];
        out[i] = expanded;
      }
    });
    return out ?? value;
  }
  let out: Record<string, unknown> | null = null;
  for (const [key, item] of Object.entries(value)) {
    const expanded = expandDemoFolder(item, depth + 1);
    if (expanded === item) continue;
    if (!out) {
      out = {};
      for (const [k, v] of Object.entries(value)) {
        Object.defineProperty(out, k, {
          value: v,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
    }
    Object.defineProperty(out, key, {
      value: expanded,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out ?? value;
}

export const MAX_CONFIG_BYTES = 10 * 1024 * 1024;

/** The YAML parser's commonest mistakes in words (its other codes are shown as they are). */
const YAML_WORDS: Readonly<Record<string, string>> = {
  DUPLICATE_KEY: 'a key appears twice in one mapping (keys must be unique)',
  BAD_INDENT: 'the indentation is wrong',
  MISSING_CHAR: 'a closing character is missing',
  MULTILINE_IMPLICIT_KEY: 'a key spans lines (a quote or a colon is missing)',
  UNEXPECTED_TOKEN: 'an unexpected character',
};
export const MAX_CONFIG_DOCUMENTS = 20_000;

/**
 * Parses YAML or JSON into a list of raw documents (not yet validated). Malformed text is
 * INPUT_MALFORMED with the line; never returns a partial list.
 */
export function parseConfigText(text: string): unknown[] {
  if (Buffer.byteLength(text, 'utf8') > MAX_CONFIG_BYTES) {
    throw new ToolgateError('PAYLOAD_TOO_LARGE', 'configuration text is over the limit', {
      limitBytes: MAX_CONFIG_BYTES,
    });
  }
  // YAML 1.2 core schema: JSON is a subset, and `yes`/`no` stay strings (no YAML 1.1 surprises).
  const docs = parseAllDocuments(text, {
    schema: 'core',
    uniqueKeys: true,
    merge: false,
    prettyErrors: false,
    strict: true,
  });
  const out: unknown[] = [];
  for (const doc of docs) {
    const error = doc.errors[0];
    if (error) {
      // The parser's kind of mistake and where it is, never the text around it: a file may hold
      // credentials (an owner channel's URL, a value wrongly put in an operator document), and
      // the error goes to a terminal, a CI log and the REST answer (attack round 22, Y1).
      const reason = `${YAML_WORDS[error.code] ?? error.code}${textPosition(text, error.pos[0])}`;
      throw new ToolgateError('INPUT_MALFORMED', `the text is not valid YAML or JSON (${reason})`, {
        reason,
      });
    }
    let value: unknown;
    try {
      // maxAliasCount bounds alias expansion ("billion laughs"); the parser throws past it.
      value = doc.toJS({ maxAliasCount: 100 });
    } catch {
      const reason = 'too many alias expansions, or nested too deep';
      throw new ToolgateError('INPUT_MALFORMED', `the YAML cannot be expanded safely: ${reason}`, {
        reason,
      });
    }
    if (value === null || value === undefined) continue;
    if (Array.isArray(value)) out.push(...value);
    else out.push(value);
  }
  if (out.length > MAX_CONFIG_DOCUMENTS) {
    throw new ToolgateError('PAYLOAD_TOO_LARGE', `more than ${MAX_CONFIG_DOCUMENTS} documents`, {
      limitBytes: MAX_CONFIG_BYTES,
    });
  }
  return out;
}
