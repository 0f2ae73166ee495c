/**
 * Agents can never reach a decision: every REST route is walked with an agent's API key, and the
 * ones that answer it (the agent routes) are only sessions and calls — none approves, rejects,
 * grants, enrols a second factor, applies configuration or registers a tool. The MCP front offers
 * the agent its session's tools and nothing else. A call's own body cannot carry an approval, and
 * an approval is never handed to the agent.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { operator } from '../support/operators.js';
import { approvedNoteTool } from '../support/tools.js';
import { openWorld, restClient, type World } from '../support/world.js';

const ADMIN_TOKEN = 'agent-surface-admin-token-0123456789abcdef';
const setup = { id: 'setup', via: 'library' } as const;
/** What no agent-reachable route or MCP tool may be about. */
const DECIDING = /approv|reject|grant|second-factor|operator|change|apply|register|keys|secret/i;

let world: World;
let tg: Gateway;
let app: FastifyInstance;
let base = '';
let agentKey = '';

before(async () => {
  world = await openWorld({
    actor: setup,
    tools: [approvedNoteTool()],
    agents: [{ id: 'bot', capabilities: ['notes:write'] }],
    options: { executor: demoExecutor().register('test.echo', () => ({ status: 'ok' })) },
    rest: { adminToken: ADMIN_TOKEN },
  });
  ({ tg, base } = world);
  app = world.app as FastifyInstance;
  agentKey = world.keys.bot ?? '';
});
after(async () => {
  await world.close();
});

/** A REST call as the agent (by default); some routes (the console's) answer no JSON. */
const send = restClient(
  () => base,
  () => agentKey,
);

test('walking every REST route with an agent key: the agent routes are sessions only, none decides', async () => {
  const doc = app.swagger() as { paths: Record<string, Record<string, unknown>> };
  const reachable: string[] = [];
  const refused: string[] = [];
  const consoleRoutes: string[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const method of Object.keys(methods)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const concrete = path.replace(/\{[^}]+\}/g, 'x1');
      const body = ['post', 'put', 'patch', 'delete'].includes(method) ? {} : undefined;
      const r = await send(method.toUpperCase(), concrete, body);
      // The console is the browser's: a bearer credential is no session there (see below).
      if (path.startsWith('/console')) {
        consoleRoutes.push(`${method.toUpperCase()} ${path} ${r.status}`);
        continue;
      }
      const adminOnly =
        r.status === 401 &&
        /^send Authorization: Bearer <personal operator token/.test(String(r.body.message));
      (adminOnly ? refused : reachable).push(`${method.toUpperCase()} ${path}`);
    }
  }
  // The walk saw the whole API: the decision routes are there, and refused the agent.
  for (const route of [
    'POST /v1/approvals/{id}/approve',
    'POST /v1/approvals/{id}/reject',
    'POST /v1/changes/{id}/approve',
    'POST /v1/grants',
    'POST /v1/operators/{id}/second-factor',
    'POST /v1/apply',
  ]) {
    assert.ok(refused.includes(route), `${route} refuses an agent key`);
  }
  assert.ok(reachable.includes('POST /v1/sessions/{id}/calls'), reachable.join('\n'));
  assert.ok(reachable.includes('GET /v1/discover'), reachable.join('\n'));
  // With an agent key and no console session, no console form changes anything.
  for (const route of consoleRoutes) {
    const [method, , status] = route.split(' ');
    if (method !== 'GET')
      assert.ok(Number(status) >= 300, `${route}: a console change without a session`);
  }
  // Probes, and the agent's own discovery (its permitted set only, docs/architecture.md §6).
  const probes = new Set(['GET /healthz', 'GET /readyz', 'GET /v1/discover']);
  // The one agent route that names approvals only reads one: the status of an approval its own
  // session's call waits for (the client SDK waits on it); it decides nothing.
  const readsOwnApproval = 'GET /v1/sessions/{id}/approvals/{approval}';
  assert.ok(reachable.includes(readsOwnApproval), reachable.join('\n'));
  for (const route of reachable) {
    const path = route.split(' ')[1] ?? '';
    assert.ok(
      probes.has(route) || path.startsWith('/v1/sessions') || path.startsWith('/v1/schemas/'),
      `an agent reaches ${route}`,
    );
    if (route !== readsOwnApproval)
      assert.doesNotMatch(path, DECIDING, `an agent reaches ${route}`);
  }
});

test('over MCP the agent is offered its session tools only, none that decides', async () => {
  const client = new Client({ name: 'agent-surface', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${agentKey}` } },
    }),
  );
  try {
    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.deepEqual(names, ['note']);
    for (const name of names) assert.doesNotMatch(name, DECIDING);
    // Resources and prompts are advertised (governed upstream entries), and with no provider
    // entry classified and granted there is none to list.
    const caps = client.getServerCapabilities() ?? {};
    assert.ok(caps.prompts && caps.resources);
    assert.deepEqual((await client.listPrompts()).prompts, [], 'no prompts');
    assert.deepEqual((await client.listResources()).resources, [], 'no resources');
    assert.deepEqual((await client.listResourceTemplates()).resourceTemplates, []);
  } finally {
    await client.close();
  }
});

test("a call's own body cannot carry an approval, and the approval never reaches the agent", async () => {
  const session = await send('POST', '/v1/sessions', {});
  const id = String(session.body.id);
  const call = { tool: 'note', arguments: { invoice: 'S-1' } };
  const pending = await send('POST', `/v1/sessions/${id}/calls`, call);
  assert.equal(pending.status, 202, pending.text);
  const approvalId = String(pending.body.approval_id);
  for (const smuggled of [
    { approval_id: approvalId },
    { approval_token: 'x' },
    { approved: true },
    { approver: 'alice' },
  ]) {
    const r = await send('POST', `/v1/sessions/${id}/calls`, { ...call, ...smuggled });
    assert.equal(r.status, 400, JSON.stringify(smuggled));
    assert.equal(r.body.code, 'INPUT_INVALID');
  }
  // Inside the arguments it is just an argument the tool's schema does not know.
  const inArgs = await send('POST', `/v1/sessions/${id}/calls`, {
    tool: 'note',
    arguments: { invoice: 'S-1', approval_id: approvalId },
  });
  assert.equal(inArgs.status, 400);
  assert.equal((await tg.approvals.get(approvalId)).status, 'pending');

  // Approved by an approver account, the retry runs; neither answer shows the token.
  const approved = await tg.admin.approvals.approve(approvalId, operator('ann'));
  assert.equal(approved.status, 'approved');
  assert.ok(!('token' in approved), 'the admin view holds no token either');
  const ran = await send('POST', `/v1/sessions/${id}/calls`, call);
  assert.equal(ran.status, 200, ran.text);
  assert.doesNotMatch(ran.text + pending.text, /eyJ|token/i);
});
