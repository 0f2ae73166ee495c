/**
 * @module What an agent's MCP client sees of an upstream MCP server behind toolgate, over
 * Streamable HTTP and over stdio (`toolgate mcp`), with the official SDK client: upstream schemas
 * come back keyword for keyword (the conformance suite's JSON Schema 2020-12 tool, a schema using
 * the whole 2020-12 vocabulary, server-everything's draft-07 schemas) and are what the gate
 * enforces; the agent's progress token brings the upstream's progress back (the conformance
 * fixture's progress tool, server-everything's long-running operation); the agent's cancellation
 * reaches the upstream, which keeps running for the next call, and is audited as `cancelled`.
 * Upstreams run in the namespace sandbox.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  CallToolResult,
  JSONRPCMessage,
  Progress,
  Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import type { Actor } from '../../src/core/index.js';
import { upstreamResult } from '../../src/edge/mcp/index.js';
import { buildServer } from '../../src/edge/rest/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import {
  JSON_SCHEMA_2020_12_INPUT_SCHEMA,
  RICH_INPUT_SCHEMA,
  RICH_OUTPUT_SCHEMA,
} from '../fixtures/mcp/conformance-schemas.mjs';
import {
  classifyReadPublic,
  EVERYTHING,
  fixtureProvider,
  nodeProvider,
} from '../providers/provider-support.js';
import { cleanEnv, ensureBuilt, MAIN } from '../support/cli.js';
import { initializeRequest, mcpHeaders } from '../support/world.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef0123456789';
const FIXTURE_TOOLS = [
  'json_schema_2020_12_tool',
  'rich_schema_tool',
  'test_tool_with_progress',
  'wait_for_cancel',
  'cancellations',
];
const EVERYTHING_TOOLS = ['get-sum', 'trigger-long-running-operation'];
/** The reason an agent gives when it cancels; it must never reach an upstream. */
const AGENT_REASON = 'agent reason carrying sk_live_do_not_forward';

let dir: string;
let dbUrl: string;
let tg: Gateway;
let inspector: Store;
let app: FastifyInstance;
let base: string;
let key: string;
const clients: Client[] = [];

function text(result: unknown): string {
  const content = (result as CallToolResult).content ?? [];
  return content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

function decisionOf(result: unknown): Record<string, unknown> {
  const meta = (result as CallToolResult)._meta as Record<string, unknown> | undefined;
  return (meta?.['toolgate/decision'] ?? {}) as Record<string, unknown>;
}

async function waitFor<T>(probe: () => Promise<T | null>, ms = 10_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The schema of an npm server's tool as the server itself lists it (no toolgate in between). */
async function listedByEverything(name: string): Promise<Tool> {
  const client = new Client({ name: 'direct', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, 'stdio'] }),
  );
  try {
    const tool = (await client.listTools()).tools.find((t) => t.name === name);
    assert.ok(tool, `${name} listed by server-everything`);
    return tool;
  } finally {
    await client.close();
  }
}

async function connectHttp(): Promise<Client> {
  const client = new Client({ name: 'protocol-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  clients.push(client);
  return client;
}

/**
 * `toolgate mcp` with the SDK client, and every message its transport hands the client, in order
 * (the SDK client itself may drop a progress report read together with its response, SDK issue
 * #2580; what toolgate wrote, and in which order, is what this front controls).
 */
async function connectStdio(): Promise<{ client: Client; received: JSONRPCMessage[] }> {
  const client = new Client({ name: 'protocol-test-stdio', version: '1.0.0' });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MAIN, '--db', dbUrl, '--data-dir', join(dir, 'data'), 'mcp'],
    env: { ...(cleanEnv() as Record<string, string>), TOOLGATE_AGENT_KEY: key },
    stderr: 'pipe',
  });
  await client.connect(transport);
  clients.push(client);
  const received: JSONRPCMessage[] = [];
  const deliver = transport.onmessage;
  transport.onmessage = (message: JSONRPCMessage) => {
    received.push(message);
    deliver?.(message);
  };
  return { client, received };
}

/** What the upstream process of this MCP session saw cancelled, and how many calls it started. */
async function upstreamSaw(
  client: Client,
): Promise<{ cancelled: { reason: string }[]; started: number }> {
  const result = await client.callTool({ name: 'cancellations', arguments: {} });
  assert.notEqual((result as CallToolResult).isError, true, JSON.stringify(result));
  return JSON.parse(text(result)) as { cancelled: { reason: string }[]; started: number };
}

/** Calls wait_for_cancel and cancels it as soon as the upstream reports that it started. */
async function callAndCancel(client: Client): Promise<unknown> {
  const controller = new AbortController();
  const call = client.callTool({ name: 'wait_for_cancel', arguments: {} }, undefined, {
    signal: controller.signal,
    onprogress: (p) => {
      if (p.message === 'started') controller.abort(AGENT_REASON);
    },
  });
  return call.then(
    () => assert.fail('a cancelled call has no result'),
    (err: unknown) => err,
  );
}

async function cancelledPostRecords(): Promise<{ code: string | null; rule: string | null }[]> {
  await tg.gate.flush();
  return inspector.db
    .selectFrom('audit_log')
    .select(['code', 'rule', 'outcome', 'decision'])
    .where('kind', '=', 'call.post')
    .where('tool_id', '=', 'fixtures.wait_for_cancel')
    .where('outcome', '=', 'cancelled')
    .execute();
}

before(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-mcp-proto-'));
  dbUrl = `sqlite:${join(dir, 'tg.db')}`;
  tg = await openGateway({ db: dbUrl });
  inspector = await openStore(dbUrl);
  await tg.config.apply(
    [
      {
        kind: 'Agent',
        spec: {
          id: 'proto-bot',
          display_name: 'Protocol agent',
          description: 'Calls upstream MCP tools through toolgate.',
          owner: 'platform-team',
        },
      },
      { kind: 'Grant', spec: { agent: 'proto-bot', capabilities: ['everything:use'] } },
    ],
    admin,
  );
  await tg.providers.register(fixtureProvider('fixtures', 'conformance-server.mjs'), admin);
  await tg.providers.register(nodeProvider('everything', EVERYTHING, ['stdio']), admin);
  for (const [provider, tools] of [
    ['fixtures', FIXTURE_TOOLS],
    ['everything', EVERYTHING_TOOLS],
  ] as const) {
    for (const tool of tools) {
      const { tool: detail } = await classifyReadPublic(tg, provider, tool, admin);
      assert.equal(detail.quarantined, false, `${tool}: ${JSON.stringify(detail.findings)}`);
    }
  }
  key = (await tg.keys.issue('proto-bot', admin)).apiKey;
  app = await buildServer(tg, { adminToken: ADMIN_TOKEN, bodyLimit: 64 * 1024 });
  base = await app.listen({ host: '127.0.0.1', port: 0 });
});

after(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await app?.close();
  await inspector?.close();
  await tg?.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

describe('upstream schemas in tools/list (Streamable HTTP)', () => {
  test("the conformance suite's JSON Schema 2020-12 tool comes back verbatim", async () => {
    const client = await connectHttp();
    const tool = (await client.listTools()).tools.find(
      (t) => t.name === 'json_schema_2020_12_tool',
    );
    assert.ok(tool);
    // The suite's three checks (json-schema-2020-12 scenario), then the whole schema.
    assert.equal(tool.inputSchema.$schema, 'https://json-schema.org/draft/2020-12/schema');
    assert.ok('address' in (tool.inputSchema.$defs as Record<string, unknown>));
    assert.equal(tool.inputSchema.additionalProperties, false);
    assert.deepEqual(tool.inputSchema, JSON_SCHEMA_2020_12_INPUT_SCHEMA);
  });

  test('every keyword of a rich 2020-12 input and output schema survives', async () => {
    const client = await connectHttp();
    const tool = (await client.listTools()).tools.find((t) => t.name === 'rich_schema_tool');
    assert.ok(tool);
    assert.deepEqual(tool.inputSchema, RICH_INPUT_SCHEMA);
    assert.deepEqual(tool.outputSchema, RICH_OUTPUT_SCHEMA);
  });

  test("server-everything's draft-07 schema keeps its $schema; only the closed top level is added", async () => {
    const upstream = await listedByEverything('get-sum');
    assert.equal(upstream.inputSchema.$schema, 'http://json-schema.org/draft-07/schema#');
    const client = await connectHttp();
    const tool = (await client.listTools()).tools.find((t) => t.name === 'get-sum');
    assert.deepEqual(tool?.inputSchema, { ...upstream.inputSchema, additionalProperties: false });
  });
});

describe('the kept schemas are what the gate enforces', () => {
  test('2020-12 conditionals and $ref: a call that breaks them never reaches the upstream', async () => {
    const client = await connectHttp();
    const before = (await upstreamSaw(client)).started;
    for (const args of [
      { contactMethod: 'phone', email: 'a@example.com' }, // then: phone is required
      { email: 'a@example.com', smuggled: 'x' }, // additionalProperties: false
      { email: 'a@example.com', address: { city: 7 } }, // $ref to $defs/address
    ]) {
      const refused = await client.callTool({ name: 'json_schema_2020_12_tool', arguments: args });
      assert.equal(decisionOf(refused).code, 'INPUT_INVALID', JSON.stringify(args));
    }
    for (const args of [
      { sku: 'ABC-1234', pair: ['a', 1, 'third'] }, // prefixItems with items: false
      { sku: 'ABC-1234', currency: 'EUR' }, // dependentRequired: currency needs amount
      { sku: 'ABC-1234', extra: { Bad: 'x' } }, // propertyNames
    ]) {
      const refused = await client.callTool({ name: 'rich_schema_tool', arguments: args });
      assert.equal(decisionOf(refused).code, 'INPUT_INVALID', JSON.stringify(args));
    }
    const refused = await client.callTool({ name: 'get-sum', arguments: { a: 'two', b: 40 } });
    assert.equal(decisionOf(refused).code, 'INPUT_INVALID');
    assert.equal((await upstreamSaw(client)).started, before, 'the upstream saw none of them');
  });

  test('calls that keep to the schemas run upstream', async () => {
    const client = await connectHttp();
    const ok = await client.callTool({
      name: 'json_schema_2020_12_tool',
      arguments: { contactMethod: 'phone', phone: '+1 555 0100', address: { city: 'Oslo' } },
    });
    assert.equal(decisionOf(ok).kind, 'allow', JSON.stringify(ok));
    assert.match(text(ok), /called with: .*Oslo/);
    const rich = (await client.callTool({
      name: 'rich_schema_tool',
      arguments: { sku: 'ABC-1234', amount: 9.99, currency: 'EUR', pair: ['a', 1] },
    })) as CallToolResult;
    assert.equal(decisionOf(rich).kind, 'allow', JSON.stringify(rich));
    assert.equal((rich.structuredContent as { status?: string }).status, 'accepted');
    const sum = await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 40 } });
    assert.match(text(sum), /\b42\b/);
  });
});

describe('an $id in an upstream schema', () => {
  test('two versions of a tool whose schemas carry the same $id are both served', async () => {
    const args = { sku: 'ABC-1234' };
    const first = await tg.sessions.open('proto-bot');
    const a = { agentId: 'proto-bot', sessionId: first.id };
    assert.equal((await tg.gate.invoke(a, 'rich_schema_tool', args)).kind, 'allow');
    // A second classification registers the next major version, with the same schemas.
    const { tool } = await classifyReadPublic(tg, 'fixtures', 'rich_schema_tool', admin);
    const second = await tg.sessions.open('proto-bot');
    const b = { agentId: 'proto-bot', sessionId: second.id };
    const onSecond = await tg.gate.invoke(b, 'rich_schema_tool', args);
    assert.equal(onSecond.kind, 'allow', JSON.stringify(onSecond));
    assert.equal(onSecond.kind === 'allow' && onSecond.version, tool.version);
    // The first session still holds the first version; the gate now compiles both.
    const onFirst = await tg.gate.invoke(a, 'rich_schema_tool', args);
    assert.equal(onFirst.kind, 'allow', JSON.stringify(onFirst));
    assert.notEqual(onFirst.kind === 'allow' && onFirst.version, tool.version);
    await tg.sessions.close(first.id, 'proto-bot');
    await tg.sessions.close(second.id, 'proto-bot');
  });
});

describe('progress and cancellation over Streamable HTTP', () => {
  test("the conformance progress tool's notifications reach the agent under its own token", async () => {
    const client = await connectHttp();
    const seen: Progress[] = [];
    const result = await client.callTool(
      { name: 'test_tool_with_progress', arguments: {} },
      undefined,
      { onprogress: (p) => seen.push(p) },
    );
    assert.equal(decisionOf(result).kind, 'allow', JSON.stringify(result));
    assert.deepEqual(seen, [
      { progress: 0, total: 100, message: 'Completed step 0 of 100' },
      { progress: 50, total: 100, message: 'Completed step 50 of 100' },
      { progress: 100, total: 100, message: 'Completed step 100 of 100' },
    ]);
    // The upstream was sent a token of toolgate's own (it answers with the one it got).
    assert.notEqual(text(result), '0');
  });

  test("server-everything's long-running operation reports each step", async () => {
    const client = await connectHttp();
    const seen: Progress[] = [];
    const result = await client.callTool(
      { name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } },
      undefined,
      { onprogress: (p) => seen.push(p) },
    );
    assert.match(text(result), /Long running operation completed/);
    assert.deepEqual(
      seen.map((p) => [p.progress, p.total]),
      [
        [1, 3],
        [2, 3],
        [3, 3],
      ],
    );
  });

  test('without a progress token the upstream gets none and nothing is sent back', async () => {
    const client = await connectHttp();
    const result = await client.callTool({ name: 'test_tool_with_progress', arguments: {} });
    // The fixture answers with the token it was given, 0 when there was none.
    assert.equal(text(result), '0');
  });

  test('a cancelled call is cancelled upstream, audited as cancelled, and the session goes on', async () => {
    const client = await connectHttp();
    const before = await cancelledPostRecords();
    const err = await callAndCancel(client);
    assert.match(
      String(err),
      /sk_live_do_not_forward|abort/i,
      'the agent sees its own cancellation',
    );
    const saw = await waitFor(async () => {
      const s = await upstreamSaw(client);
      return s.cancelled.length > 0 ? s : null;
    });
    assert.equal(saw.cancelled.length, 1);
    // The upstream learns that the call was cancelled, not the agent's words.
    assert.equal(saw.cancelled[0]?.reason, 'the caller cancelled the call');
    const records = await waitFor(async () => {
      const rows = await cancelledPostRecords();
      return rows.length > before.length ? rows : null;
    });
    assert.equal(records.length, before.length + 1);
    assert.deepEqual(records.at(-1), {
      code: 'CALL_CANCELLED',
      rule: 'call.cancelled',
      outcome: 'cancelled',
      decision: 'deny',
    });
    // The same upstream process serves the next call (it counted the cancelled one).
    const sum = await client.callTool({
      name: 'json_schema_2020_12_tool',
      arguments: { email: 'a@b.c' },
    });
    assert.equal(decisionOf(sum).kind, 'allow');
    assert.equal((await upstreamSaw(client)).cancelled.length, 1);
  });

  test("the cancelled call's stream is closed, not left open until the session ends", async () => {
    const headers = mcpHeaders(key);
    const post = (body: unknown) =>
      fetch(`${base}/mcp`, { method: 'POST', headers, body: JSON.stringify(body) });
    const init = await post(initializeRequest('raw', '1.0.0'));
    headers['mcp-session-id'] = init.headers.get('mcp-session-id') ?? '';
    headers['mcp-protocol-version'] = '2025-06-18';
    await init.text();
    await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).text();
    const call = await post({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'wait_for_cancel', arguments: {}, _meta: { progressToken: 'raw-1' } },
    });
    assert.equal(call.status, 200);
    const reader = (call.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let seen = '';
    while (!seen.includes('"started"')) {
      const chunk = await reader.read();
      assert.equal(chunk.done, false, 'the stream ended before the upstream started');
      seen += decoder.decode(chunk.value, { stream: true });
    }
    await (
      await post({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: 2, reason: 'raw client gave up' },
      })
    ).text();
    // The stream ends (bounded wait) and carries no result for the cancelled request.
    let timer: NodeJS.Timeout | undefined;
    const ended = await Promise.race([
      (async () => {
        for (;;) {
          const chunk = await reader.read();
          if (chunk.done) return true;
          seen += decoder.decode(chunk.value, { stream: true });
        }
      })(),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), 10_000);
      }),
    ]);
    clearTimeout(timer);
    if (!ended) await reader.cancel();
    assert.equal(ended, true, 'the stream of the cancelled call was left open');
    assert.ok(!seen.includes('"result"'), seen);
    await (await fetch(`${base}/mcp`, { method: 'DELETE', headers })).text();
  });

  test('a call withdrawn before it runs never reaches the upstream', async () => {
    const session = await tg.sessions.open('proto-bot');
    const ctx = { agentId: 'proto-bot', sessionId: session.id };
    const controller = new AbortController();
    controller.abort('changed my mind');
    const decision = await tg.gate.invoke(
      ctx,
      'wait_for_cancel',
      {},
      { signal: controller.signal },
    );
    assert.equal(decision.kind, 'deny');
    assert.equal(decision.kind === 'deny' && decision.code, 'CALL_CANCELLED');
    // No upstream process was started for this session: nothing ran.
    const asked = await tg.gate.invoke(ctx, 'cancellations', {});
    assert.equal(asked.kind, 'allow');
    const saw = JSON.parse(
      String(asked.kind === 'allow' ? upstreamResult(asked)?.content[0]?.text : '{}'),
    ) as { started: number };
    assert.equal(saw.started, 0);
    await tg.sessions.close(session.id, 'proto-bot');
  });
});

describe('progress and cancellation over stdio (toolgate mcp)', () => {
  test('progress comes back and a cancellation reaches the upstream', async () => {
    const { client, received } = await connectStdio();
    const seen: Progress[] = [];
    received.length = 0;
    await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, {
      onprogress: (p) => seen.push(p),
    });
    // Every report came, under one token, each before the result.
    const progress = received.filter(
      (m) => 'method' in m && m.method === 'notifications/progress',
    ) as unknown as { params: { progressToken: unknown; progress: number } }[];
    assert.deepEqual(
      progress.map((m) => m.params.progress),
      [0, 50, 100],
    );
    assert.equal(new Set(progress.map((m) => m.params.progressToken)).size, 1);
    assert.ok('result' in (received.at(-1) ?? {}), 'the result comes last');
    // The SDK client hands its callback the reports it read before the result, in order; one
    // read together with the result may be dropped on its side (see connectStdio).
    assert.ok(seen.length >= 1, 'the client saw progress');
    assert.deepEqual(
      seen.map((p) => p.progress),
      [0, 50, 100].slice(0, seen.length),
    );
    const before = await cancelledPostRecords();
    await callAndCancel(client);
    const saw = await waitFor(async () => {
      const s = await upstreamSaw(client);
      return s.cancelled.length > 0 ? s : null;
    });
    assert.deepEqual(
      saw.cancelled.map((c) => c.reason),
      ['the caller cancelled the call'],
    );
    // Written by the stdio process into the same database.
    await waitFor(async () => {
      const rows = await cancelledPostRecords();
      return rows.length > before.length ? rows : null;
    });
  });
});
