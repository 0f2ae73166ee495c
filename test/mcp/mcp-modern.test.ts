/**
 * MCP 2026-07-28 beside 2025-11-25 on one /mcp endpoint, driven by the official SDK clients: the
 * v2 client pinned to 2026-07-28 (stateless, runs carried in `_meta["io.toolgate/run"]`), the v2
 * client in its legacy mode and the v1 client (sessions). Header/body agreement attacks are
 * hand-written requests; everything else is the real client.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as HttpV2,
} from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { RefusalSampler } from '../../src/api/refusal-sampler.js';
import type { Actor } from '../../src/core/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import type { Store } from '../../src/records/store/index.js';
import { approvePendingReviews } from '../support/reviews.js';
import { inlineTool } from '../support/tools.js';
import {
  connectModernMcp,
  MODERN_ENVELOPE,
  openWorld,
  postListen,
  postMcp,
  type World,
} from '../support/world.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const ADMIN_TOKEN = 'modern-test-admin-token-0123456789abcdef';
const RUN = 'io.toolgate/run';
const MODERN = '2026-07-28';
const ENVELOPE = MODERN_ENVELOPE;

let world: World;
let tg: Gateway;
let base: string;
let inspector: Store;
let supportKey: string;
let supportKey2: string;
let opsKey: string;
let flowKey: string;
const clients: { close(): Promise<void> }[] = [];

function tool(id: string, spec: Record<string, unknown>) {
  return {
    kind: 'Tool',
    spec: inlineTool(id, { required_capabilities: ['test:use'], ...spec }),
  };
}

async function modern(token: string): Promise<ClientV2> {
  const client = await connectModernMcp(base, token, 'modern-test');
  clients.push(client);
  return client;
}

type Result = { _meta?: Record<string, unknown>; isError?: boolean; [k: string]: unknown };

function decisionOf(result: unknown): Record<string, unknown> {
  return ((result as Result)._meta?.['toolgate/decision'] ?? {}) as Record<string, unknown>;
}

function runOf(result: unknown): string {
  const handle = (result as Result)._meta?.[RUN];
  assert.equal(typeof handle, 'string', `no run handle in ${JSON.stringify(result)}`);
  return handle as string;
}

async function events(action: string): Promise<Record<string, unknown>[]> {
  const rows = await inspector.db
    .selectFrom('events')
    .selectAll()
    .where('action', '=', action)
    // In the order written: callers take the newest with `.at(-1)`.
    .orderBy('seq')
    .execute();
  return rows.map((r) => ({ subject: r.subject, ...(JSON.parse(r.details) as object) }));
}

/** Call records of one tool in the audit log: the attacks name a tool nothing else calls. */
async function gateCalls(toolId = 'add_label'): Promise<number> {
  const rows = await inspector.db
    .selectFrom('audit_log')
    .select('seq')
    .where('tool_id', '=', toolId)
    .execute();
  return rows.length;
}

/** A hand-written 2026-07-28 POST: headers as given, body with the envelope. */
async function raw(
  headers: Record<string, string>,
  method: string,
  params: Record<string, unknown>,
  token = supportKey,
): Promise<{
  status: number;
  body: { error?: { code: number; data?: unknown }; result?: Result };
}> {
  const res = await postMcp(
    base,
    {
      jsonrpc: '2.0',
      id: 7,
      method,
      params: { ...params, _meta: { ...ENVELOPE, ...(params._meta as object) } },
    },
    token,
    headers,
  );
  return { status: res.status, body: (await res.json()) as never };
}

before(async () => {
  world = await openWorld({
    demo: true,
    actor: admin,
    inspector: true,
    rest: { adminToken: ADMIN_TOKEN, mcp: { listTtlMs: 1_500, refusalSample: 1_000 } },
  });
  ({ tg, base } = world);
  inspector = world.inspector as Store;
  await tg.config.apply(
    [
      { kind: 'Agent', spec: { id: 'flow-bot', owner: 'qa' } },
      tool('region_echo', {
        input_schema: {
          type: 'object',
          additionalProperties: false,
          properties: { region: { type: 'string', 'x-mcp-header': 'Region' } },
        },
      }),
      // An integer mirrored in a header, and a header declared through a $ref.
      tool('quota_echo', {
        input_schema: {
          type: 'object',
          additionalProperties: false,
          $defs: { zone: { type: 'string', maxLength: 20, 'x-mcp-header': 'Zone' } },
          properties: {
            limit: { type: 'integer', 'x-mcp-header': 'Limit' },
            zone: { $ref: '#/$defs/zone' },
          },
        },
      }),
      // One call per run, three per hour for the agent: minting handles must not reset the latter.
      tool('limited_ping', {
        rate_limit: { per_run: 1, per_window: { limit: 3, window_seconds: 3600 } },
      }),
      { kind: 'Grant', spec: { agent: 'support-bot', capabilities: ['test:use'] } },
      { kind: 'Grant', spec: { agent: 'flow-bot', capabilities: ['webhook:send'] } },
    ],
    admin,
  );
  await approvePendingReviews(tg.admin);
  supportKey = (await tg.keys.issue('support-bot', admin)).apiKey;
  supportKey2 = (await tg.keys.issue('support-bot', admin)).apiKey;
  opsKey = (await tg.keys.issue('ops-bot', admin)).apiKey;
  flowKey = (await tg.keys.issue('flow-bot', admin)).apiKey;
});

after(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await world.close();
});

describe('both eras on one endpoint', () => {
  test('a 2026-07-28 client lists (sorted, private, ttlMs) and calls through the full gate', async () => {
    const client = await modern(supportKey);
    const list = (await client.listTools()) as unknown as Result & { tools: { name: string }[] };
    const names = list.tools.map((t) => t.name);
    assert.deepEqual(names, [...names].sort(), 'deterministic order, by name');
    assert.ok(names.includes('get_order'));
    assert.ok(!names.includes('post_webhook'), 'the toxic combination is withheld');
    assert.equal(list.cacheScope, 'private');
    assert.equal(list.ttlMs, 1_500);
    const run = runOf(list);
    const again = (await client.listTools({ _meta: { [RUN]: run } })) as unknown as Result & {
      tools: { name: string }[];
    };
    assert.deepEqual(
      again.tools.map((t) => t.name),
      names,
    );
    const ok = await client.callTool({
      name: 'get_order',
      arguments: { order_id: 'ORD-004211' },
      _meta: { [RUN]: run },
    });
    assert.notEqual(ok.isError, true, JSON.stringify(ok));
    assert.equal(decisionOf(ok).kind, 'allow');
    assert.equal(runOf(ok), run, 'the call continued the run it named');
    const denied = await client.callTool({
      name: 'grant_role',
      arguments: {},
      _meta: { [RUN]: run },
    });
    assert.equal(denied.isError, true);
    assert.equal(decisionOf(denied).code, 'TOOL_NOT_REGISTERED');
    // Deprecated features are not offered to the modern era.
    const caps = client.getServerCapabilities() ?? {};
    assert.equal('logging' in caps, false);
    assert.equal('sampling' in caps, false);
  });

  test('server/discover names 2026-07-28 and the tools capability', async () => {
    const res = await raw(
      { 'mcp-protocol-version': MODERN, 'mcp-method': 'server/discover' },
      'server/discover',
      {},
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const result = res.body.result as {
      supportedVersions?: string[];
      capabilities?: Record<string, unknown>;
    };
    assert.ok(result.supportedVersions?.includes(MODERN), JSON.stringify(result));
    assert.ok(result.capabilities?.tools);
    assert.equal(result.capabilities?.logging, undefined);
    // Deprecated by the revision and not adopted: logging is method-not-found.
    const setLevel = await raw(
      { 'mcp-protocol-version': MODERN, 'mcp-method': 'logging/setLevel' },
      'logging/setLevel',
      { level: 'debug' },
    );
    assert.equal(setLevel.body.error?.code, -32601, JSON.stringify(setLevel.body));
  });

  test('a 2025-11-25 client (v1 SDK) and the v2 client in legacy mode keep their sessions', async () => {
    const v1 = new ClientV1({ name: 'legacy-v1', version: '1.0.0' });
    await v1.connect(
      new HttpV1(new URL(`${base}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${supportKey}` } },
      }),
    );
    clients.push(v1);
    const v2 = new ClientV2({ name: 'legacy-v2', version: '1.0.0' });
    const transport = new HttpV2(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${supportKey}` } },
    });
    await v2.connect(transport);
    clients.push(v2);
    assert.ok(transport.sessionId?.startsWith('mcp_'), 'the legacy era has an MCP session');
    for (const client of [v1, v2]) {
      const names = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes('get_order'));
      const ok = await client.callTool({
        name: 'get_order',
        arguments: { order_id: 'ORD-004211' },
      });
      assert.notEqual(ok.isError, true, JSON.stringify(ok));
      assert.equal(decisionOf(ok).kind, 'allow');
    }
  });
});

describe('header/body agreement, before authentication', () => {
  const call = { name: 'get_order', arguments: { order_id: 'ORD-004211' } };
  const good = {
    'mcp-protocol-version': MODERN,
    'mcp-method': 'tools/call',
    'mcp-name': 'get_order',
  };

  test('matching headers pass', async () => {
    const res = await raw(good, 'tools/call', call);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(decisionOf(res.body.result).kind, 'allow');
  });

  for (const [what, headers] of [
    ['Mcp-Method names another method', { ...good, 'mcp-method': 'tools/list' }],
    ['Mcp-Name names another tool', { ...good, 'mcp-name': 'search_tickets' }],
    ['Mcp-Name is missing', { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call' }],
    ['Mcp-Method is missing', { 'mcp-protocol-version': MODERN, 'mcp-name': 'add_label' }],
  ] as const) {
    test(`${what}: 400 HeaderMismatch, audited, nothing runs — even without a credential`, async () => {
      const before = (await events('mcp.header_mismatch')).length;
      const calls = await gateCalls();
      for (const token of [supportKey, 'not-a-key']) {
        const res = await raw(headers, 'tools/call', call, token);
        assert.equal(res.status, 400, JSON.stringify(res.body));
        assert.equal(res.body.error?.code, -32020);
        assert.equal(
          (res.body.error?.data as { code?: string } | undefined)?.code,
          'MCP_HEADER_MISMATCH',
        );
      }
      const after = await events('mcp.header_mismatch');
      assert.ok(after.length > before, 'the refusal is a security event');
      assert.equal(await gateCalls(), calls, 'no call reached the gate');
    });
  }

  test('a mirrored parameter header must equal the argument it mirrors', async () => {
    const h = { ...good, 'mcp-name': 'region_echo' };
    const args = { name: 'region_echo', arguments: { region: 'eu-west' } };
    const ok = await raw({ ...h, 'mcp-param-region': 'eu-west' }, 'tools/call', args);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(decisionOf(ok.body.result).kind, 'allow');
    const encoded = await raw(
      { ...h, 'mcp-param-region': `=?base64?${Buffer.from('eu-west').toString('base64')}?=` },
      'tools/call',
      args,
    );
    assert.equal(encoded.status, 200, 'the base64 form of the same value passes');
    // A base64 form that is not canonical (no padding, a character outside the alphabet) cannot
    // be read as the same value, whatever a lenient decoder would make of it.
    const unpadded = Buffer.from('eu-west').toString('base64').replace(/=+$/, '');
    for (const bad of [
      { 'mcp-param-region': 'us-east' },
      {},
      { 'mcp-param-region': `=?base64?${unpadded}?=` },
      { 'mcp-param-region': `=?base64?ZXUt!!!d2VzdA==?=` },
    ]) {
      const res = await raw({ ...h, ...bad }, 'tools/call', args);
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.error?.code, -32020);
    }
    // Changed when the check moved into the gate (docs/architecture.md §3, step `headers`): a
    // disagreeing Mcp-Param-* header is refused by that step, so it is audited as the gate audits
    // refusals — a `call.denied` record with rule `mcp.header_mismatch` naming the header — where
    // the front used to record a sampled `mcp.header_mismatch` event.
    await tg.gate.flush();
    const recorded = await inspector.db
      .selectFrom('audit_log')
      .select(['rule', 'message'])
      .where('tool_id', '=', 'region_echo')
      .where('kind', '=', 'call.denied')
      .execute();
    assert.ok(
      recorded.some(
        (e) => e.rule === 'mcp.header_mismatch' && String(e.message).includes('Mcp-Param-Region'),
      ),
    );
  });

  test('a mirrored integer must be its canonical decimal form; a $ref declaration is checked too', async () => {
    const h = { ...good, 'mcp-name': 'quota_echo' };
    const args = { name: 'quota_echo', arguments: { limit: 1000, zone: 'eu' } };
    const b64 = (v: string) => `=?base64?${Buffer.from(v).toString('base64')}?=`;
    // The canonical form, the revision's 1000.0, and a $ref header left out or sent equal pass.
    for (const good of [
      { 'mcp-param-limit': '1000' },
      { 'mcp-param-limit': '1000.0' },
      { 'mcp-param-limit': '1000', 'mcp-param-zone': 'eu' },
    ]) {
      const res = await raw({ ...h, ...good }, 'tools/call', args);
      assert.equal(res.status, 200, `${JSON.stringify(good)}: ${JSON.stringify(res.body)}`);
    }
    // Other spellings Number() would take, and a $ref header that disagrees, are refused.
    for (const bad of [
      { 'mcp-param-limit': '0x3E8' },
      { 'mcp-param-limit': '1e3' },
      { 'mcp-param-limit': '01000' },
      { 'mcp-param-limit': '+1000' },
      { 'mcp-param-limit': b64(' 1000') },
      { 'mcp-param-limit': '1000', 'mcp-param-zone': 'us' },
    ]) {
      const res = await raw({ ...h, ...bad }, 'tools/call', args);
      assert.equal(res.status, 400, `${JSON.stringify(bad)}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error?.code, -32020);
    }
  });

  test('a mirrored header needs its argument in the body; an integer beyond 2^53 is refused', async () => {
    const h = { ...good, 'mcp-name': 'quota_echo' };
    const call = (args: Record<string, unknown>) => ({ name: 'quota_echo', arguments: args });
    // Benign neighbours: the argument present and equal; the argument absent and no header.
    for (const [headers, args] of [
      [{ 'mcp-param-limit': '1000' }, { limit: 1000, zone: 'eu' }],
      [{ 'mcp-param-limit': '9007199254740991' }, { limit: 9007199254740991, zone: 'eu' }],
    ] as const) {
      const res = await raw({ ...h, ...headers }, 'tools/call', call(args));
      assert.equal(res.status, 200, `${JSON.stringify(args)}: ${JSON.stringify(res.body)}`);
    }
    const absent = await raw(h, 'tools/call', call({ zone: 'eu' }));
    assert.notEqual(absent.status, 400, JSON.stringify(absent.body));
    // A header with no argument behind it, and integers outside the safe range (the body's
    // 9007199254740993 parses as ...992, which its header would then "agree" with).
    for (const [headers, args] of [
      [{ 'mcp-param-limit': '1000' }, { zone: 'eu' }],
      [{ 'mcp-param-zone': 'eu' }, { limit: 1000 }],
      [
        { 'mcp-param-limit': '9007199254740992' },
        { limit: Number('9007199254740993'), zone: 'eu' },
      ],
      [{ 'mcp-param-limit': '9007199254740994' }, { limit: 9007199254740994, zone: 'eu' }],
    ] as const) {
      const res = await raw({ ...h, ...headers }, 'tools/call', call(args));
      assert.equal(res.status, 400, `${JSON.stringify(headers)}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error?.code, -32020);
      assert.equal(
        (res.body.error?.data as { code?: string } | undefined)?.code,
        'MCP_HEADER_MISMATCH',
      );
    }
  });

  test('a request naming 2026-07-28 without its _meta envelope: -32602 with its own id, nothing runs', async () => {
    const calls = await gateCalls('get_order');
    for (const [id, params] of [
      [101, { name: 'get_order', arguments: { order_id: 'ORD-004211' } }],
      [
        102,
        {
          name: 'add_label',
          arguments: {},
          _meta: { 'io.modelcontextprotocol/clientCapabilities': {} },
        },
      ],
    ] as const) {
      const res = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${supportKey}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...good,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params }),
      });
      const body = (await res.json()) as { id?: unknown; error?: { code?: number } };
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(body.error?.code, -32602);
      assert.equal(body.id, id, 'the error answers the request it refuses');
    }
    assert.equal(await gateCalls('get_order'), calls, 'no call reached the gate');
  });

  test('audit records of refusals are bounded: a sample in full, the rest counted in one summary', async () => {
    const sampler = new RefusalSampler(tg.security, { sample: 3, windowMs: 3_600_000 });
    const before = (await events('test.refusal')).length;
    for (let i = 0; i < 50; i++) await sampler.record('test.refusal', { i });
    assert.equal((await events('test.refusal')).length, before + 3);
    await sampler.stop();
    const summary = (await events('test.refusal.summary')).at(-1);
    assert.equal(summary?.not_recorded, 47);
    assert.equal(summary?.recorded, 3);
  });
});

describe('Mcp-Param-* headers, checked by the gate against the version it resolved', () => {
  const good = { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call' };
  /** The gate's denials of one tool, as the audit log keeps them. */
  const denials = (toolId: string) =>
    tg.gate
      .flush()
      .then(() =>
        inspector.db
          .selectFrom('audit_log')
          .select(['rule', 'message', 'tool_version'])
          .where('tool_id', '=', toolId)
          .where('kind', '=', 'call.denied')
          .orderBy('seq')
          .execute(),
      );

  test("attack: a tool's newest version, registered a moment ago, adds a declaration: a disagreeing header is refused at once; the agreeing call runs that version", async () => {
    // A key of its own: its default run is this test's alone.
    const key = (await tg.keys.issue('support-bot', admin)).apiKey;
    const h = { ...good, 'mcp-name': 'zone_probe' };
    const call = { name: 'zone_probe', arguments: { zone: 'eu' } };
    const schema = (zone: Record<string, unknown>) => ({
      input_schema: {
        type: 'object',
        additionalProperties: false,
        properties: { zone: { type: 'string', maxLength: 20, ...zone } },
      },
    });
    await tg.config.apply([tool('zone_probe', schema({}))], admin);
    await approvePendingReviews(tg.admin);
    await raw({ ...good, 'mcp-method': 'tools/list' }, 'tools/list', {}, key);
    // 1.0.0 declares no header: a header there mirrors nothing toolgate checks.
    const before = await raw({ ...h, 'mcp-param-zone': 'us' }, 'tools/call', call, key);
    assert.equal(before.status, 200, JSON.stringify(before.body));
    assert.equal(decisionOf(before.body.result).version, '1.0.0');
    // 1.1.0 declares `Zone`; the run takes it at its next list.
    await tg.config.apply(
      [tool('zone_probe', { version: '1.1.0', ...schema({ 'x-mcp-header': 'Zone' }) })],
      admin,
    );
    await approvePendingReviews(tg.admin);
    const listed = await raw({ ...good, 'mcp-method': 'tools/list' }, 'tools/list', {}, key);
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    for (const bad of [{ 'mcp-param-zone': 'us' }, {}]) {
      const res = await raw({ ...h, ...bad }, 'tools/call', call, key);
      assert.equal(res.status, 400, `${JSON.stringify(bad)}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error?.code, -32020);
      const data = res.body.error?.data as { code?: string; details?: { header?: string } };
      assert.equal(data?.code, 'MCP_HEADER_MISMATCH');
      assert.equal(data?.details?.header, 'Mcp-Param-Zone');
    }
    // The gate refused them, after resolving the version, and audited each as a denial.
    const denied = await denials('zone_probe');
    assert.deepEqual(
      denied.map((d) => [d.rule, d.tool_version]),
      [
        ['mcp.header_mismatch', '1.1.0'],
        ['mcp.header_mismatch', '1.1.0'],
      ],
    );
    assert.ok(denied.every((d) => String(d.message).includes('Mcp-Param-Zone')));
    // The benign neighbour: the agreeing header, the new version runs.
    const ok = await raw({ ...h, 'mcp-param-zone': 'eu' }, 'tools/call', call, key);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(decisionOf(ok.body.result).kind, 'allow');
    assert.equal(decisionOf(ok.body.result).version, '1.1.0');
  });

  test('REST and 2025-11-25 calls are unaffected: no Mcp-Param-* check outside the 2026-07-28 era', async () => {
    // region_echo declares `Region`; these requests carry a disagreeing header all the same.
    const headers = { authorization: `Bearer ${supportKey}`, 'mcp-param-region': 'us-east' };
    const opened = await fetch(`${base}/v1/sessions`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(opened.status, 201);
    const { id } = (await opened.json()) as { id: string };
    const rest = await fetch(`${base}/v1/sessions/${id}/calls`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ tool: 'region_echo', arguments: { region: 'eu-west' } }),
    });
    assert.equal(rest.status, 200, await rest.text());
    const v1 = new ClientV1({ name: 'legacy-headers', version: '1.0.0' });
    await v1.connect(new HttpV1(new URL(`${base}/mcp`), { requestInit: { headers } }));
    clients.push(v1);
    const legacy = await v1.callTool({ name: 'region_echo', arguments: { region: 'eu-west' } });
    assert.notEqual(legacy.isError, true, JSON.stringify(legacy));
    assert.equal(decisionOf(legacy).kind, 'allow');
  });
});

describe('runs', () => {
  test('a call without a handle gets one; a later call with it continues the same run', async () => {
    const client = await modern(supportKey);
    const minted = (await events('run.minted')).length;
    const first = await client.callTool({ name: 'limited_ping', arguments: {} });
    const run = runOf(first);
    assert.match(run, /^ses_[A-Za-z0-9_-]{22,}$/, '128 bits or more from the CSPRNG');
    assert.ok((await events('run.minted')).length >= minted);
    const mint = (await events('run.minted')).find((e) => e.subject === `session:${run}`);
    assert.ok(mint, 'minting is audited');
    assert.equal(mint.agent, 'support-bot');
    // The same run: its per-run budget (one call) is spent.
    const second = await client.callTool({
      name: 'limited_ping',
      arguments: {},
      _meta: { [RUN]: run },
    });
    assert.equal(decisionOf(second).code, 'RATE_LIMITED', JSON.stringify(second));
  });

  test('minting handles resets nothing: the per-agent window still bites', async () => {
    const client = await modern(supportKey);
    const results: string[] = [];
    for (let i = 0; i < 3; i++) {
      const run = await tg.agent.runs.mint(
        {
          kind: 'agent',
          agentId: 'support-bot',
          credential: (await tg.agent.authenticate(supportKey))?.credential ?? '',
        },
        { via: 'test' },
      );
      const r = await client.callTool({
        name: 'limited_ping',
        arguments: {},
        _meta: { [RUN]: run.handle },
      });
      results.push(String(decisionOf(r).kind === 'allow' ? 'allow' : decisionOf(r).code));
    }
    // Earlier tests spent some of the window: whatever is left, fresh runs never get past three.
    assert.ok(
      results.includes('RATE_LIMITED'),
      `a fresh run does not reset the window: ${results}`,
    );
  });

  test('the flow rule follows the principal: a private read in one run stops egress in another', async () => {
    const client = await modern(flowKey);
    const egressRun = runOf(await client.listTools());
    await tg.config.apply(
      [
        {
          kind: 'Grant',
          spec: { agent: 'flow-bot', capabilities: ['webhook:send', 'orders:read'] },
        },
      ],
      admin,
    );
    const who = {
      kind: 'agent' as const,
      agentId: 'flow-bot',
      credential: (await tg.agent.authenticate(flowKey))?.credential ?? '',
    };
    const readRun = (await tg.agent.runs.mint(who, { via: 'test' })).handle;
    const read = await client.callTool({
      name: 'get_order',
      arguments: { order_id: 'ORD-004211' },
      _meta: { [RUN]: readRun },
    });
    assert.equal(decisionOf(read).kind, 'allow', JSON.stringify(read));
    const send = await client.callTool({
      name: 'post_webhook',
      arguments: { target: 'https://hooks.example.com/x', payload: { order: 'ORD-004211' } },
      _meta: { [RUN]: egressRun },
    });
    assert.equal(send.isError, true, JSON.stringify(send));
    assert.equal(decisionOf(send).code, 'TOXIC_FLOW', JSON.stringify(send));
  });

  test("another principal's handle is 404 and audited: another agent, and the same agent with another key", async () => {
    const client = await modern(supportKey);
    const run = runOf(await client.listTools());
    for (const key of [opsKey, supportKey2]) {
      const before = (await events('session.principal_mismatch')).length;
      const res = await raw(
        { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'get_order' },
        'tools/call',
        { name: 'get_order', arguments: { order_id: 'ORD-004211' }, _meta: { [RUN]: run } },
        key,
      );
      assert.equal(res.status, 404, JSON.stringify(res.body));
      assert.equal((res.body.error?.data as { code?: string } | undefined)?.code, 'RUN_NOT_FOUND');
      assert.equal((await events('session.principal_mismatch')).length, before + 1);
    }
    const unknown = await raw(
      { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list' },
      'tools/list',
      { _meta: { [RUN]: 'ses_doesnotexistdoesnotexist' } },
    );
    assert.equal(unknown.status, 404);
  });

  test('a revoked handle and an expired one are refused clearly, each audited', async () => {
    const who = {
      kind: 'agent' as const,
      agentId: 'support-bot',
      credential: (await tg.agent.authenticate(supportKey))?.credential ?? '',
    };
    const client = await modern(supportKey);
    const revoked = (await tg.agent.runs.mint(who, { via: 'test' })).handle;
    await tg.agent.runs.revoke(revoked, who);
    assert.ok((await events('run.revoked')).some((e) => e.subject === `session:${revoked}`));
    await assert.rejects(
      client.callTool({
        name: 'get_order',
        arguments: { order_id: 'ORD-1' },
        _meta: { [RUN]: revoked },
      }),
      (err: Error & { code?: number }) => /revoked/.test(err.message),
    );
    const expiring = (await tg.agent.runs.mint(who, { via: 'test', ttlSeconds: 1 })).handle;
    await new Promise((r) => setTimeout(r, 1_100));
    for (let i = 0; i < 2; i++) {
      const res = await raw(
        { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list' },
        'tools/list',
        { _meta: { [RUN]: expiring } },
      );
      assert.equal(res.status, 410, JSON.stringify(res.body));
      assert.equal((res.body.error?.data as { code?: string } | undefined)?.code, 'RUN_EXPIRED');
    }
    const expired = (await events('run.expired')).filter(
      (e) => e.subject === `session:${expiring}`,
    );
    assert.equal(expired.length, 1, 'an expiry is audited once');
  });
});

describe('subscriptions/listen', () => {
  test('a 2026-07-28 client listening for list changes hears of a newly registered tool', async () => {
    const res = await postListen(base, opsKey);
    assert.equal(res.status, 200);
    assert.ok(res.body);
    const reader = res.body.getReader();
    let text = '';
    const decoder = new TextDecoder();
    const read = async (until: RegExp) => {
      const deadline = Date.now() + 10_000;
      while (!until.test(text) && Date.now() < deadline) {
        const chunk = await reader.read();
        if (chunk.done) break;
        text += decoder.decode(chunk.value);
      }
      assert.match(text, until);
    };
    await read(/subscriptions\/acknowledged|"result"|acknowledged/);
    // A tool registered for a capability ops-bot holds: its list changes.
    await tg.config.apply([tool('ops_fresh', { required_capabilities: ['docs:read'] })], admin);
    // Live once reviewed (a restricted tool is a draft until then): only then is it in the set.
    await approvePendingReviews(tg.admin);
    await read(/notifications\/tools\/list_changed/);
    await reader.cancel();
  });
});
