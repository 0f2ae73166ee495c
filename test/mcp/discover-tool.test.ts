/**
 * The built-in discovery tool over MCP, driven by the official SDK client
 * (@modelcontextprotocol/sdk) over Streamable HTTP: registered from examples/discover-tools.yaml,
 * it is in an agent's tools/list only when granted, every call goes through the gate and is
 * audited, and it finds only the calling session's permitted set (docs/architecture.md §6).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { parseAllDocuments } from 'yaml';
import type { Actor } from '../../src/core/index.js';
import {
  DISCOVER_TOOLS_HANDLER,
  discoverToolsDefinition,
  type HealthReader,
  type ToolHealthView,
} from '../../src/domain/catalog/index.js';
import { buildServer } from '../../src/edge/rest/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { ROOT } from '../support/cli.js';
import { approvePendingReviews } from '../support/reviews.js';
import { validTool } from '../support/tools.js';
import { connectModernMcp } from '../support/world.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef0123456789';
const EXAMPLE = readFileSync(join(ROOT, 'examples', 'discover-tools.yaml'), 'utf8');

/** The documented health input: answers the test sets. */
const states = new Map<string, ToolHealthView>();
const health: HealthReader = {
  healthOf: (id) => states.get(id) ?? { state: 'unchecked', score: 0 },
};

let dir: string;
let tg: Gateway;
let app: FastifyInstance;
let base: string;
const keys: Record<string, string> = {};
const clients: { close(): Promise<void> }[] = [];

async function connect(key: string): Promise<Client> {
  const client = new Client({ name: 'discover-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  clients.push(client);
  return client;
}

function resultsOf(
  result: unknown,
): { id: string; degraded: boolean; alternatives?: { id: string }[] }[] {
  const r = result as CallToolResult;
  assert.equal(r.isError ?? false, false, JSON.stringify(r));
  return (r.structuredContent as { results: { id: string; degraded: boolean }[] }).results;
}

const tool = (id: string, description: string, caps: string[], extra = {}) =>
  validTool({
    id,
    name: id,
    description,
    data_access: 'public',
    required_capabilities: caps,
    ...extra,
  });

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-discover-'));
  tg = await openGateway({ db: `sqlite:${join(dir, 'tg.db')}`, discoveryHealth: health });
  await tg.config.applyText(EXAMPLE, admin);
  await tg.config.apply(
    [
      {
        kind: 'Agent',
        spec: { id: 'finder', display_name: 'Finder', owner: 'billing-team', tier: 'public' },
      },
      {
        kind: 'Agent',
        spec: { id: 'plain', display_name: 'Plain', owner: 'billing-team', tier: 'public' },
      },
      {
        kind: 'Grant',
        spec: { agent: 'finder', capabilities: ['catalog:discover', 'billing:read'] },
      },
      { kind: 'Grant', spec: { agent: 'plain', capabilities: ['billing:read'] } },
      {
        kind: 'Tool',
        spec: tool('invoice_lookup', 'Look up one invoice by its number.', ['billing:read'], {
          tags: ['billing'],
        }),
      },
      {
        kind: 'Tool',
        spec: tool('invoice_search', 'Look up one invoice by its number.', ['billing:read'], {
          tags: ['billing'],
        }),
      },
      {
        kind: 'Tool',
        spec: tool('payroll_invoice_export', 'Export every payroll invoice.', ['payroll:read'], {
          tags: ['billing'],
        }),
      },
    ],
    admin,
  );
  await approvePendingReviews(tg);
  keys.finder = (await tg.keys.issue('finder', admin)).apiKey;
  keys.plain = (await tg.keys.issue('plain', admin)).apiKey;
  app = await buildServer(tg, { adminToken: ADMIN_TOKEN });
  base = await app.listen({ host: '127.0.0.1', port: 0 });
});

after(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await app.close();
  await tg.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

test('the shipped example is exactly the built-in definition', () => {
  const [doc] = parseAllDocuments(EXAMPLE).map((d) => d.toJS() as { spec: unknown });
  assert.deepEqual(doc?.spec, discoverToolsDefinition());
});

test('a granted agent has discover_tools in tools/list; one without the grant does not', async () => {
  const finder = await connect(keys.finder ?? '');
  const plain = await connect(keys.plain ?? '');
  const listed = (await finder.listTools()).tools.map((t) => t.name).sort();
  assert.deepEqual(listed, ['discover_tools', 'invoice_lookup', 'invoice_search']);
  assert.ok(!(await plain.listTools()).tools.some((t) => t.name === 'discover_tools'));
});

test("discover_tools finds only the session's set, ranked, and is audited as a call", async () => {
  states.clear();
  states.set('invoice_lookup', { state: 'degraded', score: 0.3 });
  states.set('invoice_search', { state: 'healthy', score: 0.95 });
  states.set('payroll_invoice_export', { state: 'healthy', score: 1 });
  const finder = await connect(keys.finder ?? '');
  const result = await finder.callTool({ name: 'discover_tools', arguments: { query: 'invoice' } });
  const hits = resultsOf(result);
  assert.deepEqual(
    hits.map((h) => h.id),
    ['invoice_search', 'invoice_lookup'],
  );
  const degraded = hits.find((h) => h.id === 'invoice_lookup');
  assert.equal(degraded?.degraded, true);
  assert.deepEqual(
    degraded?.alternatives?.map((a) => a.id),
    ['invoice_search'],
  );
  assert.ok(!JSON.stringify(result).includes('payroll'), 'nothing of the hidden tool');
  await tg.gate.flush();
  const records = await tg.admin.auditRecords.search(
    { tool: DISCOVER_TOOLS_HANDLER, agent: 'finder' },
    { limit: 10 },
  );
  assert.ok(
    records.items.some((r) => r.decision === 'allow'),
    JSON.stringify(records.items.map((r) => [r.kind, r.decision])),
  );
});

test('the same answer over MCP and over REST in that session', async () => {
  states.clear();
  const finder = await connect(keys.finder ?? '');
  const mcp = resultsOf(
    await finder.callTool({ name: 'discover_tools', arguments: { query: 'look up invoice' } }),
  );
  const rest = (await (
    await fetch(`${base}/v1/discover?q=look+up+invoice`, {
      headers: { authorization: `Bearer ${keys.finder}` },
    })
  ).json()) as { results: { id: string }[] };
  // The REST set has no discover_tools of its own words; the invoice tools are the same.
  assert.deepEqual(
    mcp.map((h) => h.id),
    rest.results.map((h) => h.id),
  );
});

test('attack: a word only a hidden tool uses finds nothing, as a word nobody uses', async () => {
  const finder = await connect(keys.finder ?? '');
  const hidden = await finder.callTool({ name: 'discover_tools', arguments: { query: 'payroll' } });
  const nobody = await finder.callTool({ name: 'discover_tools', arguments: { query: 'qwxyzzy' } });
  assert.deepEqual(resultsOf(hidden), []);
  assert.deepEqual(hidden.structuredContent, nobody.structuredContent);
});

test('attack: an agent without the grant is told the tool is not registered, and it is audited', async () => {
  const plain = await connect(keys.plain ?? '');
  const result = (await plain.callTool({
    name: 'discover_tools',
    arguments: { query: 'invoice' },
  })) as CallToolResult;
  assert.equal(result.isError, true);
  const decision = (result._meta as Record<string, { code?: string }>)['toolgate/decision'];
  assert.equal(decision?.code, 'TOOL_NOT_REGISTERED');
  assert.ok(!JSON.stringify(result).includes('invoice_search'));
  await tg.gate.flush();
  const denied = await tg.admin.auditRecords.search(
    { agent: 'plain', decision: 'deny' },
    { limit: 10 },
  );
  assert.ok(denied.items.length > 0);
});

test("bad arguments are refused by the gate's schema step and run nothing", async () => {
  const finder = await connect(keys.finder ?? '');
  const result = (await finder.callTool({
    name: 'discover_tools',
    arguments: { query: 'invoice', limit: 500 },
  })) as CallToolResult;
  assert.equal(result.isError, true);
  const decision = (result._meta as Record<string, { code?: string }>)['toolgate/decision'];
  assert.equal(decision?.code, 'INPUT_INVALID');
});

test('the 2026-07-28 era (the v2 SDK client, stateless runs) gets the same tool and answer', async () => {
  states.clear();
  const client = await connectModernMcp(base, keys.finder, 'discover-modern');
  clients.push(client);
  const listed = (await client.listTools()).tools.map((t) => t.name);
  assert.ok(listed.includes('discover_tools'), listed.join(','));
  const modern = await client.callTool({
    name: 'discover_tools',
    arguments: { query: 'look up invoice' },
  });
  const legacy = await (await connect(keys.finder ?? '')).callTool({
    name: 'discover_tools',
    arguments: { query: 'look up invoice' },
  });
  assert.deepEqual(resultsOf(modern), resultsOf(legacy));
  assert.ok(!JSON.stringify(modern).includes('payroll'));
});
