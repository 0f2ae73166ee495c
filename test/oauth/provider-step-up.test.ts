/**
 * @module Step-up for what real upstream MCP providers list (attack round 9 F1): a tool under its
 * clash name, a static resource, a resource template and prompts, all classified with a
 * capability only the OAuth scope `up.use` maps to. A narrower token of the same user and client
 * (no `up.use`), in the session or run the wider token opened, is asked to step up — 403
 * `insufficient_scope`, `scope="up.use"` — for the tool by its listed name (`up__echo`: providers
 * `up` and `zz` both list `echo`), resources/read of the static URI and of a template URI, and
 * prompts/get (one prompt under its clash name too), in the 2025-11-25 and 2026-07-28 eras and,
 * for the tools, over REST; the gate's record is the step-up (`oauth.insufficient_scope`) naming
 * the resolved entry, never GRANT_MISSING (docs/agents-and-identity.md "Scopes narrow, never
 * widen"; the `scope` step after `resolve`, docs/architecture.md §3). Beside each attack its
 * benign neighbour: the wider token reaches the same thing in the same session or run. One world:
 * a real authorization server, one gateway, the upstreams test/fixtures/mcp/naming-server.mjs
 * (`up`, `zz`) and resources-server.mjs (`notes`) in the namespace sandbox; raw JSON-RPC.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { oauthUserId, parseOAuthConfig } from '../../src/domain/identity/index.js';
import { FIXTURES, nodeProvider, publicRead } from '../providers/provider-support.js';
import { backends } from '../support/backends.js';
import { approvePendingReviews, classifyReviewed } from '../support/reviews.js';
import { LOOPBACK_OUTBOUND } from '../support/webhook-receiver.js';
import { openWorld, restClient, type World } from '../support/world.js';
import { type AuthorizationServer, startAuthorizationServer } from './authorization-server.js';
import { modernRpc, type Rpc, rpcSession } from './mcp-rpc.js';

const PUBLIC = 'https://toolgate.test';
const RESOURCE = `${PUBLIC}/mcp`;
const CHALLENGE = `Bearer resource_metadata="${PUBLIC}/.well-known/oauth-protected-resource/mcp", error="insufficient_scope", scope="up.use"`;
/** The narrower token: orders only. The wider one adds `up.use`. */
const NARROW = 'orders.read';
const WIDE = 'orders.read up.use';
const USE = ['up:use'];
const TOOL = publicRead(USE);
const ENTRY = { data_access: 'public', access_tier: 'public', required_capabilities: USE };

/** One request naming a provider's tool or entry, what the wider token gets, and its catalog id. */
interface Target {
  readonly what: string;
  readonly method: 'tools/call' | 'resources/read' | 'prompts/get';
  readonly params: Record<string, unknown>;
  /** The upstream's answer, as the wider token reads it. */
  readonly answer: RegExp;
  /** Whose catalog id the step-up record names (`ids` key). */
  readonly entry: string;
}

const sqlite = backends().find((b) => b.name === 'sqlite') ?? backends()[0];

let as: AuthorizationServer;
let world: World;
let stateDir: string;
/** Catalog ids by `provider key`. */
const ids: Record<string, string> = {};
let targets: Target[] = [];

before(async () => {
  stateDir = mkdtempSync(join(tmpdir(), 'toolgate-provider-step-up-'));
  chmodSync(stateDir, 0o755);
  writeFileSync(join(stateDir, 'mode'), 'benign');
  as = await startAuthorizationServer({
    publicClients: ['host-client'],
    exchangeClients: {},
    resources: { [RESOURCE]: WIDE },
  });
  world = await openWorld({
    ...(sqlite ? { backend: sqlite } : {}),
    options: {
      // The test authorization server listens on loopback: the admin's setting allows it.
      outbound: LOOPBACK_OUTBOUND,
      oauth: parseOAuthConfig({
        resource: RESOURCE,
        issuers: [{ issuer: as.issuer, jwksUrl: as.jwksUrl }],
        clients: { 'host-client': 'host-bot' },
        scopes: { 'orders.read': ['orders:read'], 'up.use': USE },
      }),
    },
    agents: [{ id: 'host-bot', capabilities: ['orders:read', ...USE], key: false }],
    rest: true,
  });
  const { tg, admin } = world;
  const naming = join(FIXTURES, 'naming-server.mjs');
  for (const name of ['zz', 'up']) {
    await tg.providers.register(
      nodeProvider(name, naming, [name], { binds: [{ source: FIXTURES }] }),
      admin,
    );
  }
  await tg.providers.register(
    nodeProvider('notes', join(FIXTURES, 'resources-server.mjs'), [join(stateDir, 'mode')], {
      binds: [{ source: FIXTURES }, { source: stateDir }],
    }),
    admin,
  );
  // The narrower token's own neighbour: zz's get_order, under orders:read.
  await classifyReviewed(
    tg,
    'zz',
    'get_order',
    { ...TOOL, required_capabilities: ['orders:read'] },
    admin,
  );
  for (const provider of ['up', 'zz']) {
    ids[`${provider} echo`] = (await classifyReviewed(tg, provider, 'echo', TOOL, admin)).tool.id;
    const greeting = await tg.providers.classifyEntry(provider, 'prompt', 'greeting', ENTRY, admin);
    ids[`${provider} greeting`] = greeting.tool.id;
  }
  for (const [kind, key] of [
    ['resource', 'notes://customers'],
    ['resource_template', 'notes://topics/{topic}'],
    ['prompt', 'summarize'],
  ] as const) {
    ids[`notes ${key}`] = (
      await tg.providers.classifyEntry('notes', kind, key, ENTRY, admin)
    ).tool.id;
  }
  await approvePendingReviews(tg);
  targets = requests();
});

after(async () => {
  await world?.close();
  await as?.close();
  rmSync(stateDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

/** The requests each test sends as both tokens, once the catalog ids are known. */
function requests(): Target[] {
  // zz's greeting is listed under its clash name, its catalog id with dots as `__`.
  const zzGreeting = (ids['zz greeting'] ?? '').replaceAll('.', '__');
  return [
    {
      what: 'up__echo',
      method: 'tools/call',
      params: { name: 'up__echo', arguments: { text: 'hi' } },
      answer: /up\.echo hi/,
      entry: 'up echo',
    },
    {
      what: 'the static resource',
      method: 'resources/read',
      params: { uri: 'notes://customers' },
      answer: /alice@example\.com/,
      entry: 'notes notes://customers',
    },
    {
      what: 'a template URI',
      method: 'resources/read',
      params: { uri: 'notes://topics/tea' },
      answer: /notes about tea/,
      entry: 'notes notes://topics/{topic}',
    },
    {
      what: 'the prompt',
      method: 'prompts/get',
      params: { name: 'summarize', arguments: { text: 'a long text' } },
      answer: /Summarize in one line: a long text/,
      entry: 'notes summarize',
    },
    {
      what: 'the prompt under its clash name',
      method: 'prompts/get',
      params: { name: zzGreeting, arguments: {} },
      answer: /zz\.greeting/,
      entry: 'zz greeting',
    },
  ];
}

/** The narrower and the wider token of one user (`sub`) and client. */
async function tokens(sub: string): Promise<{ narrow: string; wide: string }> {
  return { narrow: await as.accessToken(sub, NARROW), wide: await as.accessToken(sub, WIDE) };
}

function steppedUp(r: Rpc, what: string): void {
  assert.equal(r.status, 403, `${what}: ${JSON.stringify(r.body)}`);
  assert.equal(r.challenge, CHALLENGE, what);
  assert.equal(r.body.error?.data?.code, 'INSUFFICIENT_SCOPE', what);
  assert.deepEqual(r.body.error?.data?.details, { scope: 'up.use' }, what);
}

function answered(r: Rpc, { what, answer }: Pick<Target, 'what' | 'answer'>): void {
  const body = `${what}: ${JSON.stringify(r.body)}`;
  assert.equal(r.status, 200, body);
  assert.equal(r.challenge, null, what);
  assert.equal(r.body.error, undefined, body);
  assert.equal(r.body.result?.isError ?? false, false, body);
  assert.match(JSON.stringify(r.body.result), answer, what);
}

/**
 * The gate's refusals of `sub`'s calls: each a step-up naming a resolved entry, never a missing
 * grant, in the gate session `session` when one is named; together they name exactly `entries`.
 */
async function refusalsName(
  sub: string,
  entries: readonly string[],
  session?: string,
): Promise<void> {
  await world.tg.gate.flush();
  const records = (
    await world.tg.admin.auditRecords.search({ user: oauthUserId(as.issuer, sub) }, { limit: 500 })
  ).items.filter((r) => r.kind === 'call.denied');
  for (const r of records) {
    assert.equal(r.code, 'INSUFFICIENT_SCOPE', JSON.stringify(r));
    assert.notEqual(r.code, 'GRANT_MISSING');
    if (session) assert.equal(r.session_id, session, JSON.stringify(r));
  }
  const stepUps = await world.tg.admin.auditRecords.search(
    { rule: 'oauth.insufficient_scope', user: oauthUserId(as.issuer, sub) },
    { limit: 500 },
  );
  assert.equal(stepUps.items.length, records.length, 'every refusal is the step-up rule');
  assert.deepEqual(
    [...new Set(records.map((r) => r.tool_id))].sort(),
    entries.map((e) => ids[e]).sort(),
  );
}

describe('a narrower token, where the wider one opened the session or run (attack round 9 F1)', () => {
  test('2025-11-25: asked to step up for each by its listed name or URI; the wider token reaches each', async () => {
    const { narrow, wide } = await tokens('u-legacy');
    const session = await rpcSession(world.base, wide, '2025-11-25');
    const listed = (await session.list(wide)).body.result?.tools?.map((t) => t.name) ?? [];
    assert.ok(listed.includes('up__echo') && listed.includes('zz__echo'), listed.join());
    assert.deepEqual(
      ((await session.list(narrow)).body.result?.tools ?? []).map((t) => t.name),
      ['get_order'],
    );
    // The prompts are listed under the names the requests below use; the resource and they only
    // to the wider token.
    const listedBy = async (token: string, method: string, field: string) =>
      (((await session.request(token, method)).body.result?.[field] ?? []) as { name: string }[])
        .map((e) => e.name)
        .sort();
    const prompts = targets.filter((t) => t.method === 'prompts/get').map((t) => t.params.name);
    const widePrompts = await listedBy(wide, 'prompts/list', 'prompts');
    for (const name of prompts) assert.ok(widePrompts.includes(String(name)), widePrompts.join());
    assert.deepEqual(await listedBy(narrow, 'prompts/list', 'prompts'), []);
    assert.equal((await listedBy(wide, 'resources/list', 'resources')).length, 1);
    assert.deepEqual(await listedBy(narrow, 'resources/list', 'resources'), []);
    for (const target of targets) {
      steppedUp(await session.request(narrow, target.method, target.params), target.what);
      answered(await session.request(wide, target.method, target.params), target);
    }
    // The narrower token's own neighbour runs in the same session.
    const own = await session.call(narrow, { name: 'get_order', arguments: { order_id: 'O-1' } });
    answered(own, { what: 'get_order', answer: /zz\.get_order O-1/ });
    await refusalsName(
      'u-legacy',
      targets.map((t) => t.entry),
    );
  });

  test('2026-07-28: asked to step up for each, in the run named and in the default run; the wider token reaches each', async () => {
    const { narrow, wide } = await tokens('u-modern');
    const listed = await modernRpc(world.base, wide, 'tools/list', {});
    const run = listed.body.result?._meta?.['io.toolgate/run'] as string;
    assert.equal(typeof run, 'string');
    const names = listed.body.result?.tools?.map((t) => t.name) ?? [];
    assert.ok(names.includes('up__echo') && names.includes('zz__echo'), names.join());
    for (const target of targets) {
      for (const named of [run, undefined]) {
        const refused = await modernRpc(world.base, narrow, target.method, target.params, named);
        steppedUp(refused, `${target.what} (run ${named ?? 'default'})`);
      }
      const ran = await modernRpc(world.base, wide, target.method, target.params, run);
      answered(ran, target);
      assert.equal(ran.body.result?._meta?.['io.toolgate/run'], run, target.what);
    }
    // The default run is the one the wider token's request without a handle opened.
    await refusalsName(
      'u-modern',
      targets.map((t) => t.entry),
      run,
    );
  });

  test('REST: a tool under its clash name is a step-up in the session the wider token opened; the wider token runs it', async () => {
    const { narrow, wide } = await tokens('u-rest');
    const send = restClient(() => world.base);
    const opened = await send('POST', '/v1/sessions', {}, wide);
    assert.equal(opened.status, 201, opened.text);
    const id = opened.body.id as string;
    for (const [name, answer] of [
      ['up__echo', /up\.echo hi/],
      ['zz__echo', /zz\.echo hi/],
    ] as const) {
      const call = { tool: name, arguments: { text: 'hi' } };
      const refused = await send('POST', `/v1/sessions/${id}/calls`, call, narrow);
      assert.equal(refused.status, 403, refused.text);
      assert.equal(refused.headers.get('www-authenticate'), CHALLENGE, name);
      assert.equal(refused.body.code, 'INSUFFICIENT_SCOPE', name);
      assert.deepEqual(refused.body.details, { scope: 'up.use' }, name);
      const ran = await send('POST', `/v1/sessions/${id}/calls`, call, wide);
      assert.equal(ran.status, 200, ran.text);
      assert.match(ran.text, answer, name);
    }
    await refusalsName('u-rest', ['up echo', 'zz echo'], id);
  });
});
