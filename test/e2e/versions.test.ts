/**
 * Versions side by side (C2, docs/architecture.md §3): after `add_label@2.0.0` adds a required field and
 * 1.0.0 is deprecated, both are callable through the window — the newest active by default, the
 * old major when pinned (`add_label@1` over REST and the library, `_meta["io.toolgate/version"]`
 * over MCP with the real SDK clients) — with a deprecation notice (REST `Deprecation`/`Sunset`
 * headers, MCP `_meta`, audit, metric); the impact report names who still calls which version;
 * the window can be extended; a retired major is refused naming its successor; grants, tier,
 * toxic combination and policies hold per version.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import type { Actor } from '../../src/core/index.js';
import { buildServer } from '../../src/edge/rest/index.js';
import type { InProcessCall as CallContext, GateDecision } from '../../src/gate/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { ensureBuilt, runCli } from '../support/cli.js';
import { approvePendingReviews } from '../support/reviews.js';
import { connectMcp, connectModernMcp, openDemoGateway, restClient } from '../support/world.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef0123456789';
const DAY = 86_400_000;
const V1_ARGS = { ticket_id: 'T-1001', label: 'bug' };
const V2_ARGS = { ticket_id: 'T-1001', label: 'bug', reason: 'customer report' };

let dir: string;
let tg: Gateway;
let inspector: Store;
let app: FastifyInstance;
let base: string;
let supportKey: string;
/** The gateway's clock runs with real time, moved forward by this much when a test says so. */
let offsetMs = 0;
const clients: { close(): Promise<void> }[] = [];

/** add_label's schema with a new required field: a breaking change, so a major bump. */
function addLabelV2(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'add_label',
    version: '2.0.0',
    name: 'add_label',
    description:
      'Add a label to an existing support ticket, saying why; labels can be removed again.',
    tags: ['tickets', 'support', 'write'],
    owner: 'support-team',
    action_class: 'reversible_write',
    data_access: 'none',
    egress: { mode: 'none' },
    access_tier: 'public',
    required_capabilities: ['tickets:write'],
    runtime: { kind: 'inline', handler: 'demo.add_label' },
    provenance: 'internal',
    input_schema: {
      type: 'object',
      additionalProperties: false,
      required: ['ticket_id', 'label', 'reason'],
      properties: {
        ticket_id: { type: 'string', maxLength: 40 },
        label: {
          type: 'string',
          enum: ['billing', 'bug', 'urgent', 'feature-request', 'resolved'],
        },
        reason: { type: 'string', maxLength: 200 },
      },
    },
    output_schema: {
      type: 'object',
      required: ['labels'],
      properties: { labels: { type: 'array', items: { type: 'string' } } },
    },
    ...overrides,
  };
}

/** A small tool of this suite; each case changes only what it is about. */
function tool(id: string, version: string, overrides: Record<string, unknown> = {}) {
  return {
    id,
    version,
    name: id,
    description: 'Report the status of the support desk queue.',
    tags: ['support'],
    owner: 'support-team',
    action_class: 'read',
    data_access: 'public',
    egress: { mode: 'none' },
    access_tier: 'public',
    required_capabilities: ['tickets:read'],
    runtime: { kind: 'inline', handler: 'noop' },
    provenance: 'internal',
    input_schema: {
      type: 'object',
      additionalProperties: false,
      properties: { queue: { type: 'string', maxLength: 20 } },
    },
    output_schema: { type: 'object' },
    ...overrides,
  };
}

async function register(...specs: Record<string, unknown>[]): Promise<void> {
  await tg.config.apply(
    specs.map((spec) => ({ kind: 'Tool', spec })),
    admin,
  );
  await approvePendingReviews(tg);
}

async function open(agentId = 'support-bot'): Promise<CallContext> {
  const s = await tg.agent.sessions.open(agentId);
  return { agentId, sessionId: s.id };
}

function invoke(
  ctx: CallContext,
  ref: string,
  args: unknown,
  options: { version?: unknown } = {},
): Promise<GateDecision> {
  return tg.agent.invoke(ctx, ref, args, options);
}

function denial(d: GateDecision): { code: string; rule: string; details?: unknown } {
  assert.equal(d.kind, 'deny', JSON.stringify(d));
  return d as { code: string; rule: string; details?: unknown };
}

const send = restClient(() => base);
const rest = (method: string, path: string, token: string, body?: unknown) =>
  send(method, path, body, token);

async function preRecords(sessionId: string) {
  await tg.gate.flush();
  const rows = await inspector.db
    .selectFrom('audit_log')
    .selectAll()
    .where('session_id', '=', sessionId)
    .where('kind', '=', 'call.pre')
    .orderBy('seq')
    .execute();
  return rows.map((r) => ({
    version: r.tool_version,
    details: JSON.parse(r.details ?? '{}') as Record<string, unknown>,
  }));
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-versions-'));
  tg = await openDemoGateway(
    { db: `sqlite:${join(dir, 'tg.db')}`, clock: () => new Date(Date.now() + offsetMs) },
    admin,
  );
  inspector = await openStore(`sqlite:${join(dir, 'tg.db')}`);
  await register(addLabelV2());
  await tg.catalog.deprecate('add_label', '1.0.0', admin, { windowDays: 30 });
  supportKey = (await tg.keys.issue('support-bot', admin)).apiKey;
  app = await buildServer(tg, { adminToken: ADMIN_TOKEN, bodyLimit: 64 * 1024 });
  base = await app.listen({ host: '127.0.0.1', port: 0 });
});

after(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await app.close();
  await tg.close();
  await inspector.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

describe('library API: both majors through the window', () => {
  test('a new session offers 2.0.0 by default and 1.0.0 when pinned; a 1.x call unpinned is refused by the new schema', async () => {
    const s = await tg.agent.sessions.open('support-bot');
    const entry = s.tools.find((t) => t.id === 'add_label');
    assert.deepEqual(entry, {
      id: 'add_label',
      version: '2.0.0',
      name: 'add_label',
      pins: [{ major: 1, version: '1.0.0' }],
    });
    const ctx = { agentId: 'support-bot', sessionId: s.id };
    assert.equal(denial(await invoke(ctx, 'add_label', V1_ARGS)).code, 'INPUT_INVALID');
    const v2 = await invoke(ctx, 'add_label', V2_ARGS);
    assert.equal(v2.kind, 'allow', JSON.stringify(v2));
    assert.equal(v2.kind === 'allow' && v2.version, '2.0.0');
    assert.equal(
      v2.kind === 'allow' && v2.deprecation,
      undefined,
      'the active version warns of nothing',
    );
    const v1 = await invoke(ctx, 'add_label@1', V1_ARGS);
    assert.equal(v1.kind, 'allow', JSON.stringify(v1));
    if (v1.kind !== 'allow') return;
    assert.equal(v1.version, '1.0.0');
    assert.deepEqual(v1.output, { labels: ['bug'] });
    assert.equal(v1.deprecation?.version, '1.0.0');
    assert.equal(v1.deprecation?.successor, '2.0.0');
    assert.equal(
      Date.parse(v1.deprecation?.retire_at ?? '') - Date.parse(v1.deprecation?.deprecated_at ?? ''),
      30 * DAY,
    );
    assert.match(v1.warnings[0] ?? '', /deprecated and retires .*move to add_label@2 \(2\.0\.0\)/);
    // Pinning the default's own major is the default.
    const same = await invoke(ctx, 'add_label@2', V2_ARGS);
    assert.equal(same.kind === 'allow' && same.version, '2.0.0');
    // The id works as the name does.
    const byId = await invoke(ctx, 'add_label', V1_ARGS, { version: 1 });
    assert.equal(byId.kind === 'allow' && byId.version, '1.0.0');
  });

  test('the version option pins as name@major does, as a number or its decimal string', async () => {
    const ctx = await open();
    for (const version of [1, '1']) {
      const d = await invoke(ctx, 'add_label', V1_ARGS, { version });
      assert.equal(d.kind === 'allow' && d.version, '1.0.0', JSON.stringify(d));
    }
    const agreeing = await invoke(ctx, 'add_label@1', V1_ARGS, { version: 1 });
    assert.equal(agreeing.kind === 'allow' && agreeing.version, '1.0.0');
  });

  test('a malformed or contradictory pin is INPUT_INVALID resolve.version_pin, audited, nothing runs', async () => {
    const ctx = await open();
    for (const [ref, options] of [
      ['add_label@1.0.0', {}],
      ['add_label@v1', {}],
      ['add_label@', {}],
      ['@1', {}],
      ['add_label@01', {}],
      ['add_label@1', { version: 2 }],
      ['add_label', { version: 'v1' }],
      ['add_label', { version: 1.5 }],
      ['add_label', { version: -1 }],
      ['add_label', { version: [1] }],
      ['add_label', { version: null }],
    ] as const) {
      const d = denial(await invoke(ctx, ref, V1_ARGS, options));
      assert.equal(d.code, 'INPUT_INVALID', `${ref} ${JSON.stringify(options)}`);
      assert.equal(d.rule, 'resolve.version_pin');
    }
    assert.deepEqual(await preRecords(ctx.sessionId), [], 'nothing ran');
  });

  test('a pin to a major that never existed, or to a tool outside the set, is "not registered" like any unknown tool', async () => {
    const ctx = await open();
    for (const ref of [
      'add_label@3',
      'add_label@0',
      'grant_role@1',
      'grant_role',
      'no_such_tool@1',
    ]) {
      const d = denial(await invoke(ctx, ref, V1_ARGS));
      assert.equal(d.code, 'TOOL_NOT_REGISTERED', ref);
      assert.equal(d.rule, 'resolve.not_registered');
    }
  });

  test('the audit record of a deprecated call names the version, the pin and the notice; the metric counts it', async () => {
    const ctx = await open();
    await invoke(ctx, 'add_label@1', V1_ARGS);
    await invoke(ctx, 'add_label', V2_ARGS);
    const [old, current] = await preRecords(ctx.sessionId);
    assert.equal(old?.version, '1.0.0');
    assert.equal(old?.details.version_pin, 1);
    assert.deepEqual(
      (old?.details.deprecation as Record<string, unknown> | undefined)?.successor,
      '2.0.0',
    );
    assert.ok(Array.isArray(old?.details.warnings));
    assert.equal(current?.version, '2.0.0');
    assert.equal(current?.details.deprecation, undefined);
    assert.equal(current?.details.version_pin, undefined);
    const metrics = (await tg.metrics.render()).body;
    const calls =
      /toolgate_deprecated_calls_total\{tool="add_label",version="1\.0\.0"\} (\d+)/.exec(metrics);
    assert.ok(calls && Number(calls[1]) >= 1, metrics);
    assert.ok(
      !/toolgate_deprecated_calls_total\{tool="add_label",version="2\.0\.0"\}/.test(metrics),
    );
  });
});

describe('rules hold per version: a pinned old major escapes nothing the new one has', () => {
  test('an old major needing a capability the agent lacks is not offered; pinning it is "not registered"', async () => {
    await register(
      tool('queue_status', '1.0.0', { required_capabilities: ['workspace:read'] }),
      tool('queue_status', '2.0.0', {
        input_schema: {
          type: 'object',
          additionalProperties: false,
          required: ['queue'],
          properties: { queue: { type: 'string', maxLength: 20 } },
        },
      }),
    );
    await tg.catalog.deprecate('queue_status', '1.0.0', admin, { windowDays: 30 });
    const s = await tg.agent.sessions.open('support-bot');
    assert.deepEqual(
      s.tools.find((t) => t.id === 'queue_status'),
      { id: 'queue_status', version: '2.0.0', name: 'queue_status' },
    );
    const ctx = { agentId: 'support-bot', sessionId: s.id };
    assert.equal(denial(await invoke(ctx, 'queue_status@1', {})).code, 'TOOL_NOT_REGISTERED');
    const ok = await invoke(ctx, 'queue_status@2', { queue: 'main' });
    assert.equal(ok.kind, 'allow', JSON.stringify(ok));
  });

  test('a new major needing a capability the agent lacks leaves the old one the default; pinning the new one is "not registered"', async () => {
    await register(
      tool('desk_hours', '1.0.0'),
      tool('desk_hours', '2.0.0', { required_capabilities: ['workspace:read'] }),
    );
    const s = await tg.agent.sessions.open('support-bot');
    assert.deepEqual(
      s.tools.find((t) => t.id === 'desk_hours'),
      { id: 'desk_hours', version: '1.0.0', name: 'desk_hours' },
    );
    const ctx = { agentId: 'support-bot', sessionId: s.id };
    assert.equal(denial(await invoke(ctx, 'desk_hours@2', {})).code, 'TOOL_NOT_REGISTERED');
    assert.equal((await invoke(ctx, 'desk_hours@1', {})).kind, 'allow');
    // ops-bot holds workspace:read but not tickets:read: only 2.0.0 is its own.
    const ops = await tg.agent.sessions.open('ops-bot');
    assert.deepEqual(
      ops.tools.find((t) => t.id === 'desk_hours'),
      { id: 'desk_hours', version: '2.0.0', name: 'desk_hours' },
    );
  });

  test('an old major above the agent tier is not offered, nor callable pinned', async () => {
    await register(
      tool('tier_probe', '1.0.0', { access_tier: 'privileged' }),
      tool('tier_probe', '2.0.0'),
    );
    const ctx = await open();
    assert.equal(denial(await invoke(ctx, 'tier_probe@1', {})).code, 'TOOL_NOT_REGISTERED');
    assert.equal((await invoke(ctx, 'tier_probe', {})).kind, 'allow');
  });

  test('an old major with unconstrained egress is withheld beside private reads, as the new one would be', async () => {
    await register(
      tool('share_link', '1.0.0', {
        action_class: 'external_send',
        egress: { mode: 'unconstrained' },
        required_capabilities: ['webhook:send'],
        runtime: { kind: 'inline', handler: 'noop' },
      }),
      tool('share_link', '2.0.0', {
        action_class: 'external_send',
        egress: { mode: 'constrained', hosts: ['hooks.example.com'] },
        required_capabilities: ['webhook:send'],
        input_schema: {
          type: 'object',
          additionalProperties: false,
          required: ['queue'],
          properties: { queue: { type: 'string', maxLength: 20 } },
        },
      }),
    );
    await tg.catalog.deprecate('share_link', '1.0.0', admin, { windowDays: 30 });
    // support-bot holds search_tickets (private data): unconstrained egress is withheld.
    const s = await tg.agent.sessions.open('support-bot');
    assert.deepEqual(
      s.tools.find((t) => t.id === 'share_link'),
      { id: 'share_link', version: '2.0.0', name: 'share_link' },
      'the unconstrained old major is not pinnable',
    );
    const inspected = await tg.sessions.inspect(s.id);
    assert.ok(inspected.withheld.some((w) => w.id === 'share_link' && w.version === '1.0.0'));
    const ctx = { agentId: 'support-bot', sessionId: s.id };
    assert.equal(denial(await invoke(ctx, 'share_link@1', {})).code, 'TOOL_NOT_REGISTERED');
  });

  test('a grant revoked after the session opened stops a pinned call as it stops the default', async () => {
    await register(tool('grant_probe', '1.0.0', { required_capabilities: ['docs:read'] }));
    await register(
      tool('grant_probe', '2.0.0', {
        required_capabilities: ['docs:read'],
        input_schema: {
          type: 'object',
          additionalProperties: false,
          required: ['queue'],
          properties: { queue: { type: 'string', maxLength: 20 } },
        },
      }),
    );
    const ctx = await open();
    assert.equal((await invoke(ctx, 'grant_probe@1', {})).kind, 'allow');
    await tg.agents.revoke('support-bot', ['docs:read'], admin);
    try {
      assert.equal(denial(await invoke(ctx, 'grant_probe@1', {})).code, 'GRANT_MISSING');
      assert.equal(
        denial(await invoke(ctx, 'grant_probe', { queue: 'main' })).code,
        'GRANT_MISSING',
      );
    } finally {
      await tg.config.apply(
        [{ kind: 'Grant', spec: { agent: 'support-bot', capabilities: ['docs:read'] } }],
        admin,
      );
    }
  });

  test('an organisation policy on the tool applies to the pinned old major too', async () => {
    await tg.config.apply(
      [
        {
          kind: 'Policy',
          spec: {
            id: 'no-resolved-label',
            text: `@id("no-resolved") forbid (principal, action, resource == Toolgate::Tool::"add_label")
when { context.arguments.hasTag("label") && context.arguments.getTag("label") == "resolved" };`,
          },
        },
      ],
      admin,
    );
    const ctx = await open();
    const pinned = denial(
      await invoke(ctx, 'add_label@1', { ticket_id: 'T-1', label: 'resolved' }),
    );
    assert.equal(pinned.code, 'POLICY_DENIED', JSON.stringify(pinned));
    const current = denial(
      await invoke(ctx, 'add_label', { ticket_id: 'T-1', label: 'resolved', reason: 'done' }),
    );
    assert.equal(current.code, 'POLICY_DENIED');
    // The benign neighbour: another label passes on both majors.
    assert.equal(
      (await invoke(ctx, 'add_label@1', { ticket_id: 'T-1', label: 'urgent' })).kind,
      'allow',
    );
  });
});

describe('REST', () => {
  test('tool@1 in the body calls the old major with Deprecation (RFC 9745) and Sunset (RFC 8594) headers', async () => {
    const s = await rest('POST', '/v1/sessions', supportKey, {});
    assert.equal(s.status, 201);
    const id = String(s.body.id);
    const old = await rest('POST', `/v1/sessions/${id}/calls`, supportKey, {
      tool: 'add_label@1',
      arguments: V1_ARGS,
    });
    assert.equal(old.status, 200, JSON.stringify(old.body));
    assert.equal(old.body.version, '1.0.0');
    const notice = old.body.deprecation as Record<string, string>;
    assert.equal(notice.successor, '2.0.0');
    const deprecation = old.headers.get('deprecation') ?? '';
    assert.match(deprecation, /^@\d+$/);
    assert.equal(
      Number(deprecation.slice(1)),
      Math.floor(Date.parse(notice.deprecated_at ?? '') / 1000),
    );
    const sunset = old.headers.get('sunset') ?? '';
    assert.match(sunset, /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
    assert.equal(Date.parse(sunset), Math.floor(Date.parse(notice.retire_at ?? '') / 1000) * 1000);
    const current = await rest('POST', `/v1/sessions/${id}/calls`, supportKey, {
      tool: 'add_label',
      arguments: V2_ARGS,
    });
    assert.equal(current.status, 200);
    assert.equal(current.body.version, '2.0.0');
    assert.equal(current.headers.get('deprecation'), null);
    assert.equal(current.headers.get('sunset'), null);
    const unknown = await rest('POST', `/v1/sessions/${id}/calls`, supportKey, {
      tool: 'add_label@9',
      arguments: V1_ARGS,
    });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'TOOL_NOT_REGISTERED');
    const bad = await rest('POST', `/v1/sessions/${id}/calls`, supportKey, {
      tool: 'add_label@1.0.0',
      arguments: V1_ARGS,
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'INPUT_INVALID');
    assert.equal((bad.body.details as Record<string, unknown>).rule, 'resolve.version_pin');
  });

  test('the deprecation impact report lists which agents call which version, and their calls to the successor', async () => {
    const res = await rest('GET', '/v1/reports/deprecation-impact', ADMIN_TOKEN);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const rows = res.body.rows as Record<string, unknown>[];
    const row = rows.find((r) => r.tool === 'add_label' && r.agent === 'support-bot');
    assert.ok(row, JSON.stringify(rows));
    assert.equal(row.version, '1.0.0');
    assert.equal(row.successor, '2.0.0');
    assert.ok(Number(row.calls) >= 1);
    assert.ok(Number(row.successor_calls) >= 1, 'support-bot already calls 2.0.0 as well');
    const unused = rows.find((r) => r.tool === 'queue_status');
    assert.deepEqual(
      [unused?.agent, unused?.calls, unused?.successor],
      [null, 0, '2.0.0'],
      'nobody can call queue_status 1.0.0: it retires without impact',
    );
  });

  test('a window is extended by whole days, audited; bad input and a version not deprecated change nothing', async () => {
    const before = await tg.catalog.get('add_label', '1.0.0');
    const agent = await rest('POST', '/v1/tools/add_label/versions/1.0.0/extend', supportKey, {
      days: 5,
    });
    assert.equal(agent.status, 401, 'an agent key is no operator');
    for (const body of [{ days: 0 }, { days: 1.5 }, { days: 4000 }, {}, { days: 5, extra: 1 }]) {
      const res = await rest(
        'POST',
        '/v1/tools/add_label/versions/1.0.0/extend',
        ADMIN_TOKEN,
        body,
      );
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.code, 'INPUT_INVALID');
    }
    const active = await rest('POST', '/v1/tools/add_label/versions/2.0.0/extend', ADMIN_TOKEN, {
      days: 5,
    });
    assert.equal(active.status, 409);
    assert.equal(active.body.code, 'LIFECYCLE_INVALID');
    assert.equal((await tg.catalog.get('add_label', '1.0.0')).retire_at, before.retire_at);
    const res = await rest('POST', '/v1/tools/add_label/versions/1.0.0/extend', ADMIN_TOKEN, {
      days: 5,
      reason: 'billing-bot migrates next sprint',
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.lifecycle, 'deprecated');
    assert.equal(
      Date.parse(String(res.body.retire_at)) - Date.parse(before.retire_at ?? ''),
      5 * DAY,
    );
    const events = await tg.events.list({ subject: 'tool:add_label@1.0.0', limit: 50 });
    const extended = events.find((e) => e.action === 'tool.deprecation_extended');
    assert.ok(extended, JSON.stringify(events));
    assert.equal(extended.actor, 'admin-token');
    assert.deepEqual(JSON.parse(extended.details), {
      from_retire_at: before.retire_at,
      retire_at: res.body.retire_at,
      days: 5,
      reason: 'billing-bot migrates next sprint',
    });
  });
});

describe('MCP with the real SDK clients', () => {
  async function connect(): Promise<Client> {
    const client = await connectMcp(base, supportKey, 'versions-test');
    clients.push(client);
    return client;
  }

  function metaOf(result: unknown, key: string): Record<string, unknown> | undefined {
    return ((result as CallToolResult)._meta as Record<string, unknown> | undefined)?.[key] as
      | Record<string, unknown>
      | undefined;
  }

  test('tools/list shows add_label once (2.0.0) and names the pinnable majors in its _meta', async () => {
    const client = await connect();
    const listed = (await client.listTools()).tools.filter((t) => t.name.startsWith('add_label'));
    assert.equal(listed.length, 1, JSON.stringify(listed));
    const entry = listed[0];
    assert.deepEqual(Object.keys(entry?.inputSchema.properties ?? {}).sort(), [
      'label',
      'reason',
      'ticket_id',
    ]);
    assert.deepEqual(
      ((entry?._meta?.['io.toolgate/versions'] ?? []) as Record<string, unknown>[]).map((v) => [
        v.major,
        v.version,
        v.lifecycle,
        v.default,
      ]),
      [
        [2, '2.0.0', 'active', true],
        [1, '1.0.0', 'deprecated', false],
      ],
    );
  });

  test('_meta["io.toolgate/version"] pins the old major on tools/call; the result carries the deprecation notice', async () => {
    const client = await connect();
    const unpinned = await client.callTool({ name: 'add_label', arguments: V1_ARGS });
    assert.equal(unpinned.isError, true);
    assert.equal(metaOf(unpinned, 'toolgate/decision')?.code, 'INPUT_INVALID');
    const pinned = await client.callTool({
      name: 'add_label',
      arguments: V1_ARGS,
      _meta: { 'io.toolgate/version': 1 },
    });
    assert.notEqual(pinned.isError, true, JSON.stringify(pinned));
    assert.equal(metaOf(pinned, 'toolgate/decision')?.version, '1.0.0');
    const notice = metaOf(pinned, 'io.toolgate/deprecation');
    assert.equal(notice?.version, '1.0.0');
    assert.equal(notice?.successor, '2.0.0');
    const current = await client.callTool({ name: 'add_label', arguments: V2_ARGS });
    assert.notEqual(current.isError, true);
    assert.equal(metaOf(current, 'io.toolgate/deprecation'), undefined);
    const missing = await client.callTool({
      name: 'add_label',
      arguments: V1_ARGS,
      _meta: { 'io.toolgate/version': 7 },
    });
    assert.equal(metaOf(missing, 'toolgate/decision')?.code, 'TOOL_NOT_REGISTERED');
    const bad = await client.callTool({
      name: 'add_label',
      arguments: V1_ARGS,
      _meta: { 'io.toolgate/version': 'v1' },
    });
    assert.equal(metaOf(bad, 'toolgate/decision')?.code, 'INPUT_INVALID');
  });

  test('a 2026-07-28 client pins the same way', async () => {
    const client = await connectModernMcp(base, supportKey, 'versions-modern');
    clients.push(client);
    const pinned = await client.callTool({
      name: 'add_label',
      arguments: V1_ARGS,
      _meta: { 'io.toolgate/version': '1' },
    });
    assert.notEqual(pinned.isError, true, JSON.stringify(pinned));
    assert.equal(metaOf(pinned, 'io.toolgate/deprecation')?.successor, '2.0.0');
  });
});

describe('the CLI', () => {
  test('reports deprecation-impact and tools extend work from the command line', async () => {
    ensureBuilt();
    await tg.gate.flush();
    const env = { TOOLGATE_ADMIN_TOKEN: ADMIN_TOKEN };
    const report = await runCli(dir, ['--json', 'reports', 'deprecation-impact'], env);
    assert.equal(report.code, 0, report.stderr);
    const rows = (JSON.parse(report.stdout) as { rows: Record<string, unknown>[] }).rows;
    assert.ok(
      rows.some(
        (r) => r.tool === 'add_label' && r.agent === 'support-bot' && r.version === '1.0.0',
      ),
    );
    const before = await tg.catalog.get('share_link', '1.0.0');
    const extended = await runCli(
      dir,
      ['--json', 'tools', 'extend', 'share_link@1.0.0', '--days', '3', '--reason', 'partner'],
      env,
    );
    assert.equal(extended.code, 0, extended.stderr);
    const after = await tg.catalog.get('share_link', '1.0.0');
    assert.equal(Date.parse(after.retire_at ?? '') - Date.parse(before.retire_at ?? ''), 3 * DAY);
    const refused = await runCli(
      dir,
      ['--json', 'tools', 'extend', 'share_link@2.0.0', '--days', '3'],
      env,
    );
    assert.equal(refused.code, 3);
    assert.match(refused.stdout + refused.stderr, /LIFECYCLE_INVALID/);
  });
});

describe('retirement', () => {
  test('once the window ends the old major is refused as retired, naming its successor, in old and new sessions', async () => {
    const retireAt = Date.parse((await tg.catalog.get('add_label', '1.0.0')).retire_at ?? '');
    try {
      // A session opened an hour before the window ends holds the old major, and may call it.
      offsetMs = retireAt - 3_600_000 - Date.now();
      const held = await open();
      assert.equal((await invoke(held, 'add_label@1', V1_ARGS)).kind, 'allow');
      offsetMs = retireAt + 1000 - Date.now();
      const inHeld = denial(await invoke(held, 'add_label@1', V1_ARGS));
      assert.equal(inHeld.code, 'TOOL_RETIRED');
      assert.deepEqual((inHeld.details as Record<string, unknown>).successor, {
        tool: 'add_label@2',
        version: '2.0.0',
      });
      const fresh = await tg.agent.sessions.open('support-bot');
      assert.equal(fresh.tools.find((t) => t.id === 'add_label')?.pins, undefined);
      const ctx = { agentId: 'support-bot', sessionId: fresh.id };
      const inFresh = denial(await invoke(ctx, 'add_label@1', V1_ARGS));
      assert.equal(inFresh.code, 'TOOL_RETIRED');
      assert.equal(inFresh.rule, 'lifecycle.retired');
      assert.deepEqual((inFresh.details as Record<string, unknown>).successor, {
        tool: 'add_label@2',
        version: '2.0.0',
      });
      // Over REST the same, with 410.
      const s = await rest('POST', '/v1/sessions', supportKey, {});
      const res = await rest('POST', `/v1/sessions/${String(s.body.id)}/calls`, supportKey, {
        tool: 'add_label@1',
        arguments: V1_ARGS,
      });
      assert.equal(res.status, 410);
      assert.equal(res.body.code, 'TOOL_RETIRED');
      assert.deepEqual((res.body.details as Record<string, unknown>).successor, {
        tool: 'add_label@2',
        version: '2.0.0',
      });
      // An agent that never could call add_label learns nothing: "not registered".
      const ops = await open('ops-bot');
      assert.equal(denial(await invoke(ops, 'add_label@1', V1_ARGS)).code, 'TOOL_NOT_REGISTERED');
      // Extending a window that has ended is refused: retired stays retired.
      await assert.rejects(
        tg.catalog.extendDeprecation('add_label', '1.0.0', admin, { days: 5 }),
        /LIFECYCLE_INVALID|only a deprecated version/,
      );
    } finally {
      offsetMs = 0;
    }
  });

  test('a version retired by hand with no later version names no successor', async () => {
    await register(tool('lonely_tool', '1.0.0'));
    const ctx = await open();
    await tg.catalog.retire('lonely_tool', '1.0.0', admin);
    const d = denial(await invoke(ctx, 'lonely_tool', {}));
    assert.equal(d.code, 'TOOL_RETIRED');
    assert.deepEqual((d.details as Record<string, unknown>).successor, null);
  });
});
