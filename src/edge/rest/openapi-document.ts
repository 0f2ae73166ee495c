/**
 * @module The OpenAPI 3.1 document the REST front serves at /openapi.json (@fastify/swagger): its
 * header (info with the licence, servers, security schemes) and the finishing pass over what the
 * route schemas produce. Every documented route names its `operationId` in its schema (a route
 * without one is refused at start-up, server.ts); console pages are hidden from it. The document
 * lints clean with `redocly lint` under redocly.yaml (test/http/openapi-lint.test.ts).
 */
import type { SwaggerOptions } from '@fastify/swagger';
import { PROBLEM_JSON } from '../../core/index.js';

type Content = Record<string, { schema?: unknown }>;

interface OpenApiDocument {
  components?: { schemas?: Record<string, unknown> };
  paths?: Record<
    string,
    Record<
      string,
      {
        requestBody?: { content?: Content };
        responses?: Record<string, { content?: Content }>;
      }
    >
  >;
}

const ERROR_BODY_REF = '#/components/schemas/ErrorBody';

/** RFC 9457 problem details as the REST front sends them (docs/errors.md, core/problem-details.ts). */
const problemDetailsSchema = {
  type: 'object',
  description:
    'RFC 9457 problem details, sent instead of `{ code, message, details }` when the request accepts `application/problem+json`',
  required: ['type', 'title', 'status', 'detail', 'instance', 'code'],
  properties: {
    type: { type: 'string', description: '`https://toolgate.dev/errors/<code>` (never fetched)' },
    title: { type: 'string', description: "The code's summary from the catalogue" },
    status: { type: 'integer' },
    detail: { type: 'string', description: 'The default body’s `message`' },
    instance: { type: 'string', description: 'The request path' },
    code: { type: 'string', description: 'Stable code from docs/errors.md' },
    details: { type: 'object', additionalProperties: true },
  },
  additionalProperties: true,
} as const;

/**
 * Every error answer the routes document (`errors(...)`, the default `{ code, message, details }`)
 * is also offered as `application/problem+json`. Done on the document only: the routes' error
 * schemas stay the serializers of the default shape, and problem details are sent serialized.
 */
function withProblemDetails(doc: OpenApiDocument): OpenApiDocument {
  doc.components = {
    ...doc.components,
    schemas: { ...doc.components?.schemas, ProblemDetails: problemDetailsSchema },
  };
  for (const item of Object.values(doc.paths ?? {}))
    for (const op of Object.values(item))
      for (const response of Object.values(op.responses ?? {})) {
        const json = response.content?.['application/json']?.schema as
          | { $ref?: string }
          | undefined;
        if (response.content && json?.$ref === ERROR_BODY_REF)
          response.content[PROBLEM_JSON] = {
            schema: { $ref: '#/components/schemas/ProblemDetails' },
          };
      }
  return doc;
}

interface Discriminated {
  discriminator?: { propertyName: string; mapping?: Record<string, string> };
  oneOf?: { properties?: Record<string, { const?: unknown; enum?: unknown[] }> }[];
}

const capitalised = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);

/**
 * Each branch of a discriminated `oneOf` of the tool definition becomes a named schema
 * (`ToolRuntimeCommand`, `ToolEgressNoneOrUnconstrained`…) with a mapping from each tag value:
 * OpenAPI's discriminator selects named schemas only, and clients generated from the document
 * then get one type per branch. The catalog's own validator (Ajv) keeps the inline schema.
 */
function namedBranches(
  schema: Record<string, unknown>,
  named: Record<string, unknown>,
): Record<string, unknown> {
  const properties: Record<string, unknown> = { ...(schema.properties as object) };
  for (const [name, property] of Object.entries(properties as Record<string, Discriminated>)) {
    const tag = property.discriminator?.propertyName;
    if (tag === undefined || property.oneOf === undefined) continue;
    const mapping: Record<string, string> = {};
    const oneOf = property.oneOf.map((branch) => {
      const values = [branch.properties?.[tag]?.const ?? branch.properties?.[tag]?.enum]
        .flat()
        .map(String);
      const id = `Tool${capitalised(name)}${values.map(capitalised).join('Or')}`;
      named[id] = branch;
      const ref = `#/components/schemas/${id}`;
      for (const value of values) mapping[value] = ref;
      return { $ref: ref };
    });
    properties[name] = { ...property, oneOf, discriminator: { propertyName: tag, mapping } };
  }
  return { ...schema, properties };
}

/**
 * The tool definition is validated by the catalog (JSON Schema 2020-12, every problem listed),
 * not by Fastify, so its schema is added to the document here: the docs show the real shape.
 */
function withToolDefinitionSchema(
  doc: OpenApiDocument,
  toolDefinitionSchema: Record<string, unknown>,
): OpenApiDocument {
  const { $schema: _dialect, $id: _id, ...schema } = toolDefinitionSchema;
  const named: Record<string, unknown> = {};
  const definition = namedBranches(schema, named);
  doc.components = {
    ...doc.components,
    schemas: { ...doc.components?.schemas, ToolDefinition: definition, ...named },
  };
  const content = doc.paths?.['/v1/tools']?.post?.requestBody?.content ?? {};
  for (const media of Object.values(content))
    media.schema = { $ref: '#/components/schemas/ToolDefinition' };
  return doc;
}

/** What @fastify/swagger is registered with: the document's header and its finishing pass. */
export function openApiOptions(options: {
  readonly version?: string | undefined;
  readonly publicUrl?: string | undefined;
  /** The catalog's JSON Schema of a tool definition (/v1/schemas/tool.json). */
  readonly toolDefinitionSchema: Record<string, unknown>;
}): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'toolgate',
        version: options.version ?? '0.0.0',
        description:
          'A governed tool gateway for AI agents. Admin routes need `Authorization: Bearer <admin token>`. Every error body is `{ code, message, details }`, or RFC 9457 problem details when the request accepts `application/problem+json`; codes are listed in docs/errors.md.',
        license: { name: 'Apache 2.0', identifier: 'Apache-2.0' },
      },
      // Where operators reach the gateway when it is configured; otherwise the document's own
      // origin (a relative URL, OpenAPI 3.1 §4.8.5), which is right wherever it is served from.
      servers: [{ url: options.publicUrl ?? '/', description: 'this gateway' }],
      components: {
        securitySchemes: {
          adminToken: {
            type: 'http',
            scheme: 'bearer',
            description: 'A personal operator token (tgo_…) or the bootstrap admin token',
          },
          agentKey: { type: 'http', scheme: 'bearer', description: 'An agent API key (tgk_…)' },
        },
      },
      security: [{ adminToken: [] }],
    },
    refResolver: {
      buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`),
    },
    transformObject: (documentObject) => {
      const doc =
        'openapiObject' in documentObject
          ? documentObject.openapiObject
          : documentObject.swaggerObject;
      return withProblemDetails(
        withToolDefinitionSchema(doc as OpenApiDocument, options.toolDefinitionSchema),
      ) as typeof doc;
    },
  };
}

/**
 * A documented route without an operationId is a programming mistake caught at start-up: the id
 * is what generated clients call the operation by, so it is written, never derived from the URL.
 */
export function checkOperationId(route: { readonly url: string; readonly schema?: unknown }): void {
  const schema = route.schema as { hide?: boolean; operationId?: unknown } | undefined;
  if (schema?.hide === true) return;
  if (typeof schema?.operationId !== 'string' || !/^[a-z][A-Za-z0-9]*$/.test(schema.operationId))
    throw new Error(`route ${route.url}: name a camelCase operationId in its schema (OpenAPI)`);
}
