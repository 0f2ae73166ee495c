/**
 * toolgate as an MCP server over Streamable HTTP, driven by the official SDK client
 * (@modelcontextprotocol/sdk): authentication, the permitted set as tools/list, calls through the
 * gate, approvals over MCP, session isolation between agents, list_changed, and protocol faults
 * that leave the gateway healthy.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  type CallToolResult,
  ElicitRequestSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Actor } from '../../src/core/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { operator } from '../support/operators.js';
import { approvePendingReviews } from '../support/reviews.js';
import { inlineTool } from '../support/tools.js';
import { openWorld, type World } from '../support/world.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
/** The operator account that decides approvals here. */
const approver = operator('test-admin');
const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef0123456789';

let world: World;
let tg: Gateway;
let base: string;
let supportKey: string;
let opsKey: string;
const clients: Client[] = [];

async function connect(
  token: string | null,
  setup: (client: Client) => void = () => {},
  capabilities: Record<string, unknown> = {},
): Promise<Client> {
  const client = new Client({ name: 'toolgate-test', version: '1.0.0' }, { capabilities });
  setup(client);
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: token ? { headers: { authorization: `Bearer ${token}` } } : {},
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

function decisionOf(result: unknown): Record<string, unknown> {
  const meta = (result as CallToolResult)._meta as Record<string, unknown> | undefined;
  return (meta?.['toolgate/decision'] ?? {}) as Record<string, unknown>;
}

async function names(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((t) => t.name).sort();
}

before(async () => {
  world = await openWorld({
    demo: true,
    actor: admin,
    // A built-in tool only ops-bot holds (docs:read), so each agent has something of its own to run.
    tools: [
      inlineTool('ops_status', {
        description: 'Report whether the operations desk is staffed right now.',
        tags: ['ops'],
        owner: 'platform-team',
        data_access: 'public',
        required_capabilities: ['docs:read'],
      }),
    ],
    keys: ['support-bot', 'ops-bot'],
    rest: { adminToken: ADMIN_TOKEN, bodyLimit: 64 * 1024, mcp: { maxSessionsPerAgent: 30 } },
  });
  ({ tg, base } = world);
  supportKey = world.keys['support-bot'] ?? '';
  opsKey = world.keys['ops-bot'] ?? '';
});

after(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await world.close();
});

describe('authentication', () => {
  test('no token, no session: initialize is refused with 401', async () => {
    await assert.rejects(connect(null), /401|Unauthorized|authoriz/i);
  });

  test('an unknown key is refused the same way', async () => {
    await assert.rejects(connect('tgk_not_a_real_key'), /401|Unauthorized|authoriz/i);
  });

  test('the admin token is not an agent credential', async () => {
    await assert.rejects(connect(ADMIN_TOKEN), /401|Unauthorized|authoriz/i);
  });
});

describe('tools/list and tools/call through the gate', () => {
  test("tools/list is exactly the agent's permitted set, the toxic egress tool withheld", async () => {
    const client = await connect(supportKey);
    assert.deepEqual(await names(client), [
      'add_label',
      'create_ticket',
      'get_order',
      'http_get',
      'ops_status',
      'search_tickets',
      'send_email',
    ]);
    const tools = (await client.listTools()).tools;
    const getOrder = tools.find((t) => t.name === 'get_order');
    assert.equal(getOrder?.annotations?.readOnlyHint, true);
    assert.equal(typeof getOrder?.inputSchema, 'object');
  });

  test('an allowed call returns the output as structured content', async () => {
    const client = await connect(supportKey);
    const result = (await client.callTool({
      name: 'get_order',
      arguments: { order_id: 'ORD-004211' },
    })) as CallToolResult;
    assert.notEqual(result.isError, true, JSON.stringify(result));
    assert.equal((result.structuredContent as { order_id: string }).order_id, 'ORD-004211');
    assert.equal(decisionOf(result).kind, 'allow');
  });

  test('a withheld tool is "not registered", as an error result with code and rule', async () => {
    const client = await connect(supportKey);
    const result = (await client.callTool({
      name: 'post_webhook',
      arguments: { url: 'https://evil.example/x', payload: {} },
    })) as CallToolResult;
    assert.equal(result.isError, true);
    const d = decisionOf(result);
    assert.equal(d.code, 'TOOL_NOT_REGISTERED');
    assert.equal(d.rule, 'resolve.not_registered');
    assert.match(JSON.stringify(result.content), /TOOL_NOT_REGISTERED/);
  });

  test('arguments that break the schema are denied with INPUT_INVALID', async () => {
    const client = await connect(supportKey);
    const result = (await client.callTool({
      name: 'get_order',
      arguments: { order_id: 42, extra: true },
    })) as CallToolResult;
    assert.equal(result.isError, true);
    assert.equal(decisionOf(result).code, 'INPUT_INVALID');
  });

  test('a call that needs approval returns at once; after approval the same call runs, a changed one does not', async () => {
    const client = await connect(supportKey);
    const args = { to: 'ana@customer.example', subject: 'Your refund', body: 'It is on its way.' };
    const first = (await client.callTool({
      name: 'send_email',
      arguments: args,
    })) as CallToolResult;
    assert.equal(first.isError, true);
    const pending = decisionOf(first);
    assert.equal(pending.kind, 'pending_approval');
    assert.equal(pending.code, 'APPROVAL_REQUIRED');
    const approvalId = String(pending.approval_id);
    assert.match(JSON.stringify(first.content), new RegExp(approvalId));
    assert.deepEqual((pending.rendered as { arguments: unknown }).arguments, args);

    await tg.approvals.approve(approvalId, approver);
    const changed = (await client.callTool({
      name: 'send_email',
      arguments: { ...args, to: 'ben@customer.example' },
    })) as CallToolResult;
    assert.equal(decisionOf(changed).kind, 'pending_approval', 'changed arguments need their own');
    const retry = (await client.callTool({
      name: 'send_email',
      arguments: args,
    })) as CallToolResult;
    assert.notEqual(retry.isError, true, JSON.stringify(retry));
    assert.equal(decisionOf(retry).kind, 'allow');
    const again = (await client.callTool({
      name: 'send_email',
      arguments: args,
    })) as CallToolResult;
    assert.equal(decisionOf(again).kind, 'pending_approval', 'an approval is used once');
  });
});

describe('approvals over MCP elicitation', () => {
  const args = { to: 'ben@customer.example', subject: 'Order update', body: 'Shipped today.' };

  test('a client that supports elicitation is shown the pending call; accepted after approval, it runs', async () => {
    let shown = '';
    const client = await connect(
      supportKey,
      (c) =>
        c.setRequestHandler(ElicitRequestSchema, async (request) => {
          shown = request.params.message;
          const id = /approval id (\S+)\)/.exec(shown)?.[1];
          assert.ok(id, shown);
          // The person asks an administrator, who approves through the admin path.
          await tg.approvals.approve(id, approver);
          return { action: 'accept', content: {} };
        }),
      { elicitation: { form: {} } },
    );
    const result = (await client.callTool({
      name: 'send_email',
      arguments: args,
    })) as CallToolResult;
    assert.match(shown, /ben@customer\.example/, 'the reviewer-facing text shows the literal call');
    assert.notEqual(result.isError, true, JSON.stringify(result));
    assert.equal(decisionOf(result).kind, 'allow');
  });

  test('declined, the call stays pending and does not run', async () => {
    const client = await connect(
      supportKey,
      (c) => c.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'decline' })),
      { elicitation: { form: {} } },
    );
    const result = (await client.callTool({
      name: 'send_email',
      arguments: args,
    })) as CallToolResult;
    assert.equal(decisionOf(result).kind, 'pending_approval');
  });

  test('accepted without an approval, the call is still pending', async () => {
    const client = await connect(
      supportKey,
      (c) =>
        c.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: {} })),
      { elicitation: { form: {} } },
    );
    const result = (await client.callTool({
      name: 'send_email',
      arguments: { ...args, subject: 'Another update' },
    })) as CallToolResult;
    assert.equal(decisionOf(result).kind, 'pending_approval');
  });
});

describe('isolation between agents', () => {
  test('two agents on one gateway see and call only their own sets', async () => {
    const support = await connect(supportKey);
    const ops = await connect(opsKey);
    const opsNames = await names(ops);
    assert.ok(opsNames.includes('read_file'));
    assert.ok(!opsNames.includes('get_order'));
    assert.ok(!(await names(support)).includes('read_file'));
    const crossed = (await ops.callTool({
      name: 'get_order',
      arguments: { order_id: 'ORD-1' },
    })) as CallToolResult;
    assert.equal(decisionOf(crossed).code, 'TOOL_NOT_REGISTERED');
    const own = (await ops.callTool({ name: 'ops_status', arguments: {} })) as CallToolResult;
    assert.notEqual(own.isError, true, JSON.stringify(own));
  });

  test("one agent's token cannot drive another agent's MCP session", async () => {
    const support = await connect(supportKey);
    const sessionId = (support.transport as StreamableHTTPClientTransport).sessionId;
    assert.ok(sessionId);
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${opsKey}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sessionId,
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { name: 'get_order', arguments: { order_id: 'ORD-1' } },
      }),
    });
    assert.equal(res.status, 404);
    const body = (await res.json()) as { error: { code: number } };
    assert.equal(body.error.code, -32600);
  });
});

describe('list_changed', () => {
  test('a grant added and revoked by an admin reaches the open session as list_changed', async () => {
    const client = await connect(opsKey);
    assert.ok(!(await names(client)).includes('search_tickets'));
    let notified = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      notified += 1;
    });
    const waitFor = async (n: number) => {
      const deadline = Date.now() + 5_000;
      while (notified < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      assert.ok(notified >= n, `expected ${n} list_changed notifications, got ${notified}`);
    };
    await tg.config.apply(
      [{ kind: 'Grant', spec: { agent: 'ops-bot', capabilities: ['tickets:read'] } }],
      admin,
    );
    await approvePendingReviews(tg);
    await waitFor(1);
    assert.ok((await names(client)).includes('search_tickets'));
    await tg.agents.revoke('ops-bot', ['tickets:read'], admin);
    await waitFor(2);
    assert.ok(!(await names(client)).includes('search_tickets'));
  });

  test('a tool retired by an admin disappears from tools/list', async () => {
    const client = await connect(opsKey);
    assert.ok((await names(client)).includes('read_file'));
    await tg.catalog.retire('read_file', '1.0.0', admin);
    const deadline = Date.now() + 5_000;
    while ((await names(client)).includes('read_file') && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(!(await names(client)).includes('read_file'));
    const result = (await client.callTool({
      name: 'read_file',
      arguments: { path: '/tmp/x' },
    })) as CallToolResult;
    assert.equal(result.isError, true);
  });
});

describe('protocol faults leave the gateway healthy', () => {
  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${supportKey}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body,
    });

  test('malformed JSON is a JSON-RPC parse error', async () => {
    const res = await post('{"jsonrpc": "2.0", "method": ');
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { error: { code: number } }).error.code, -32700);
  });

  test('an oversized message is refused with 413 as a JSON-RPC error', async () => {
    const res = await post(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'x', params: { pad: 'a'.repeat(70_000) } }),
    );
    assert.equal(res.status, 413);
    assert.equal(((await res.json()) as { error: { code: number } }).error.code, -32600);
  });

  test('a request without a session that is not initialize is refused', async () => {
    const res = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
    assert.equal(res.status, 400);
  });

  test('an unknown method in a live session is "method not found"; the session still works', async () => {
    const client = await connect(supportKey);
    await assert.rejects(
      client.request(
        { method: 'toolgate/nonsense', params: {} },
        ToolListChangedNotificationSchema,
      ),
      /-32601|not found/i,
    );
    assert.ok((await names(client)).length > 0);
    const health = await fetch(`${base}/healthz`);
    assert.equal(health.status, 200);
  });

  test('one agent cannot hold more than its share of MCP sessions; others still connect', async () => {
    const held: Client[] = [];
    let refused: unknown = null;
    for (let i = 0; i < 32 && refused === null; i++) {
      try {
        held.push(await connect(supportKey));
      } catch (err) {
        refused = err;
      }
    }
    assert.match(String(refused), /429|sessions/);
    const ops = await connect(opsKey);
    assert.ok((await names(ops)).length > 0, 'another agent is not affected');
    // Closing sessions frees the share again.
    for (const c of held) await (c.transport as StreamableHTTPClientTransport).terminateSession();
    await connect(supportKey);
  });

  test('closing the MCP session closes its gate session', async () => {
    const client = await connect(supportKey);
    const transport = client.transport as StreamableHTTPClientTransport;
    const mcpSession = transport.sessionId;
    assert.ok(mcpSession);
    await transport.terminateSession();
    const res = await post(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }), {
      'mcp-session-id': mcpSession,
      'mcp-protocol-version': '2025-06-18',
    });
    assert.equal(res.status, 404);
  });
});
