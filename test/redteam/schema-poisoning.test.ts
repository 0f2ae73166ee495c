/**
 * @module Poisoning hidden in schemas never reaches a model: each schema-shaped entry of the
 * poisoned corpus (instructions in enum, const, default, examples, patterns, property names,
 * letter-spaced or encoded) is registered over REST and stored quarantined with findings inside
 * its schema; it is in no export — MCP tools/list through the official SDK client, REST
 * `?format=openai` and `?format=anthropic`. Each clean schema entry (ordinary enums, examples,
 * defaults, links to the tool's own host) is offered, its schema exported verbatim.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Actor } from '../../src/core/index.js';
import { backends } from '../support/backends.js';
import { validTool } from '../support/tools.js';
import { connectMcp, openWorld, restClient, type World } from '../support/world.js';

interface CorpusEntry {
  readonly name: string;
  readonly description: string;
  readonly input_schema?: Record<string, unknown>;
  readonly output_schema?: Record<string, unknown>;
  readonly ownHosts?: readonly string[];
}

const load = (file: string) =>
  (
    JSON.parse(
      readFileSync(new URL(`../fixtures/descriptions/${file}`, import.meta.url), 'utf8'),
    ) as CorpusEntry[]
  ).filter(
    // Schema shapes only; another dialect is an upstream's (definitions are 2020-12).
    (e) =>
      (e.input_schema !== undefined || e.output_schema !== undefined) &&
      e.input_schema?.$schema === undefined,
  );
const poisoned = load('poisoned.json');
const clean = load('clean.json');

const ADMIN_TOKEN = 'schema-poisoning-admin-token-0123456789abcdef';
const admin: Actor = { id: 'test-admin', via: 'library' };

/** A tool definition carrying the entry's texts; own hosts become its egress and http runtime. */
function definitionOf(entry: CorpusEntry): Record<string, unknown> {
  const host = entry.ownHosts?.[0];
  return validTool({
    id: entry.name,
    name: entry.name,
    description: entry.description,
    data_access: 'public',
    required_capabilities: ['corpus:read'],
    input_schema: entry.input_schema ?? {
      type: 'object',
      additionalProperties: false,
      properties: {},
    },
    output_schema: entry.output_schema ?? { type: 'object' },
    ...(host
      ? {
          egress: { mode: 'constrained', hosts: [...(entry.ownHosts ?? [])] },
          runtime: { kind: 'http', base_url: `https://${host}`, method: 'GET', path: '/' },
        }
      : {}),
  });
}

for (const backend of backends()) {
  describe(`poisoning hidden in schemas is quarantined, never exported (${backend.name})`, () => {
    let world: World;
    let base = '';
    let key = '';
    let client: Client | undefined;

    const send = restClient(() => base);
    const rest = (method: string, path: string, token: string, body?: unknown) =>
      send(method, path, body, token);

    before(async () => {
      world = await openWorld({
        backend,
        actor: admin,
        agents: [
          {
            id: 'corpus-bot',
            display_name: 'Corpus agent',
            description: 'Reads the corpus tools.',
            owner: 'platform-team',
            capabilities: ['corpus:read'],
          },
        ],
        rest: { adminToken: ADMIN_TOKEN },
      });
      ({ base } = world);
      key = world.keys['corpus-bot'] as string;
    });

    after(async () => {
      await client?.close().catch(() => {});
      await world.close();
    });

    test('the corpus has schema shapes on both sides', () => {
      assert.ok(poisoned.length >= 10, `${poisoned.length} poisoned schema entries`);
      assert.ok(clean.length >= 6, `${clean.length} clean schema entries`);
    });

    test('each poisoned schema is stored quarantined with findings inside its schemas', async () => {
      for (const entry of poisoned) {
        const res = await rest('POST', '/v1/tools', ADMIN_TOKEN, definitionOf(entry));
        assert.equal(res.status, 201, `${entry.name}: ${JSON.stringify(res.body)}`);
        const tool = res.body.tool as { quarantined: boolean; findings: { field: string }[] };
        assert.equal(tool.quarantined, true, entry.name);
        assert.ok(
          tool.findings.some(
            (f) => f.field.startsWith('/input_schema') || f.field.startsWith('/output_schema'),
          ) || entry.input_schema === undefined,
          `${entry.name}: ${JSON.stringify(tool.findings)}`,
        );
      }
    });

    test('each clean schema is offered', async () => {
      for (const entry of clean) {
        const res = await rest('POST', '/v1/tools', ADMIN_TOKEN, definitionOf(entry));
        assert.equal(res.status, 201, `${entry.name}: ${JSON.stringify(res.body)}`);
        const tool = res.body.tool as { quarantined: boolean; findings: unknown[] };
        assert.equal(tool.quarantined, false, `${entry.name}: ${JSON.stringify(tool.findings)}`);
      }
    });

    test('exports hold exactly the clean tools, schemas verbatim: MCP tools/list, OpenAI, Anthropic', async () => {
      const expected = clean.map((e) => e.name).sort();
      client = await connectMcp(base, key, 'poisoning-test');
      const listed = (await client.listTools()).tools;
      assert.deepEqual(listed.map((t) => t.name).sort(), expected);

      const session = await rest('POST', '/v1/sessions', key, {});
      const sid = String(session.body.id);
      const openai = await rest('GET', `/v1/sessions/${sid}/tools?format=openai`, key);
      const functions = (
        openai.body.tools as { function: { name: string; parameters: unknown } }[]
      ).map((t) => t.function);
      assert.deepEqual(functions.map((f) => f.name).sort(), expected);
      const anthropic = await rest('GET', `/v1/sessions/${sid}/tools?format=anthropic`, key);
      const tools = anthropic.body.tools as { name: string; input_schema: unknown }[];
      assert.deepEqual(tools.map((t) => t.name).sort(), expected);

      for (const entry of clean) {
        const want = definitionOf(entry).input_schema;
        assert.deepEqual(listed.find((t) => t.name === entry.name)?.inputSchema, want);
        assert.deepEqual(functions.find((f) => f.name === entry.name)?.parameters, want);
        assert.deepEqual(tools.find((t) => t.name === entry.name)?.input_schema, want);
      }
    });
  });
}
