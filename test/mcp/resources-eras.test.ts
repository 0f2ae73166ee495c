/**
 * @module Governed upstream resources and prompts on both MCP eras, with the official clients
 * (v1 `@modelcontextprotocol/sdk` on 2025-11-25 sessions, v2 `@modelcontextprotocol/client`
 * pinned to 2026-07-28) against a real upstream (test/fixtures/mcp/resources-server.mjs): lists
 * of only the granted, classified entries (sorted; `cacheScope: private` and `ttlMs` on the modern
 * path), reads and gets through the gate, and the flow rule: a private resource read stops a
 * later unconstrained egress call of the same principal; a public read does not.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client as ClientV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import type { Actor } from '../../src/core/index.js';
import { buildServer } from '../../src/edge/rest/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { FIXTURES, nodeProvider } from '../providers/provider-support.js';
import { backends } from '../support/backends.js';
import { approvePendingReviews } from '../support/reviews.js';
import { connectModernMcp } from '../support/world.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const RUN = 'io.toolgate/run';
const TRUST = 'io.toolgate/trust';

/** The trust label an answer carries: the upstream's text reaches the model labelled. */
function labelOf(result: unknown): { source?: string; provenance?: string; injection?: boolean } {
  return ((result as Meta)._meta?.[TRUST] ?? {}) as Record<string, never>;
}

let tg: Gateway;
let app: FastifyInstance;
let base: string;
let drop: () => Promise<void>;
let stateDir: string;
const keys: Record<string, string> = {};
const clients: { close(): Promise<void> }[] = [];

type Meta = { _meta?: Record<string, unknown>; [k: string]: unknown };

function decisionOf(result: unknown): Record<string, unknown> {
  return ((result as Meta)._meta?.['toolgate/decision'] ?? {}) as Record<string, unknown>;
}

async function legacy(agent: string): Promise<ClientV1> {
  const client = new ClientV1({ name: 'legacy-test', version: '1.0.0' });
  await client.connect(
    new HttpV1(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${keys[agent]}` } },
    }),
  );
  clients.push(client);
  return client;
}

async function modern(agent: string): Promise<ClientV2> {
  const client = await connectModernMcp(base, keys[agent], 'modern-test');
  clients.push(client);
  return client;
}

async function refusedCode(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
  } catch (err) {
    return (err as { code: number }).code;
  }
  assert.fail('the request was not refused');
}

const AGENTS = ['legacy-flow', 'modern-flow', 'legacy-benign', 'modern-benign', 'lister'];

before(async () => {
  const sqlite = backends().find((b) => b.name === 'sqlite');
  assert.ok(sqlite);
  const fresh = await sqlite.fresh();
  drop = fresh.drop;
  stateDir = mkdtempSync(join(tmpdir(), 'toolgate-resources-eras-'));
  chmodSync(stateDir, 0o755);
  writeFileSync(join(stateDir, 'mode'), 'benign');
  tg = await openGateway({ db: fresh.url });
  await tg.config.apply(
    [
      ...AGENTS.map((id) => ({ kind: 'Agent', spec: { id, owner: 'qa' } })),
      ...AGENTS.map((agent) => ({
        kind: 'Grant',
        spec: { agent, capabilities: ['notes:read', 'notes:send'] },
      })),
    ],
    admin,
  );
  for (const id of AGENTS) keys[id] = (await tg.keys.issue(id, admin)).apiKey;
  await tg.providers.register(
    nodeProvider('notes', join(FIXTURES, 'resources-server.mjs'), [join(stateDir, 'mode')], {
      binds: [{ source: FIXTURES }, { source: stateDir }],
    }),
    admin,
  );
  const pub = {
    data_access: 'public',
    access_tier: 'public',
    required_capabilities: ['notes:read'],
  };
  await tg.providers.classifyEntry('notes', 'resource', 'notes://readme', pub, admin);
  await tg.providers.classifyEntry('notes', 'prompt', 'summarize', pub, admin);
  await tg.providers.classifyEntry(
    'notes',
    'resource_template',
    'notes://topics/{topic}',
    pub,
    admin,
  );
  await tg.providers.classifyEntry(
    'notes',
    'resource',
    'notes://customers',
    { data_access: 'private', access_tier: 'public', required_capabilities: ['notes:private'] },
    admin,
  );
  await tg.providers.classify(
    'notes',
    'post_note',
    {
      action_class: 'read',
      data_access: 'none',
      egress: { mode: 'unconstrained' },
      access_tier: 'public',
      required_capabilities: ['notes:send'],
    },
    admin,
  );
  await approvePendingReviews(tg);
  app = await buildServer(tg, {
    adminToken: 'resources-eras-admin-token-0123456789abcdef',
    mcp: { listTtlMs: 1_500 },
  });
  base = await app.listen({ host: '127.0.0.1', port: 0 });
});

after(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await app.close();
  await tg.close();
  await drop();
  rmSync(stateDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

describe('resources and prompts on both eras', () => {
  test('a 2026-07-28 client lists only granted entries, sorted, private, with ttlMs', async () => {
    const client = await modern('lister');
    assert.ok(client.getServerCapabilities()?.resources, 'resources are advertised');
    assert.ok(client.getServerCapabilities()?.prompts, 'prompts are advertised');
    const list = (await client.listResources()) as unknown as Meta & {
      resources: { uri: string }[];
    };
    // notes://customers needs notes:private, which this agent lacks.
    assert.deepEqual(
      list.resources.map((r) => r.uri),
      ['notes://readme'],
    );
    assert.equal(list.cacheScope, 'private');
    assert.equal(list.ttlMs, 1_500);
    const run = list._meta?.[RUN];
    assert.equal(typeof run, 'string');
    const templates = (await client.listResourceTemplates({
      _meta: { [RUN]: run },
    })) as unknown as Meta & {
      resourceTemplates: { uriTemplate: string }[];
    };
    assert.deepEqual(
      templates.resourceTemplates.map((t) => t.uriTemplate),
      ['notes://topics/{topic}'],
    );
    assert.equal(templates.cacheScope, 'private');
    const prompts = (await client.listPrompts({ _meta: { [RUN]: run } })) as unknown as Meta & {
      prompts: { name: string }[];
    };
    assert.deepEqual(
      prompts.prompts.map((p) => p.name),
      ['summarize'],
    );
    assert.equal(prompts.ttlMs, 1_500);

    const read = await client.readResource({ uri: 'notes://readme', _meta: { [RUN]: run } });
    assert.equal((read.contents[0] as { text: string }).text, 'hello from the readme');
    assert.equal((read as unknown as Meta)._meta?.[RUN], run);
    assert.equal(typeof labelOf(read).source, 'string', JSON.stringify(read));
    assert.equal(labelOf(read).injection, false);
    const got = await client.getPrompt({
      name: 'summarize',
      arguments: { text: 'hi' },
      _meta: { [RUN]: run },
    });
    assert.deepEqual(got.messages[0]?.content, { type: 'text', text: 'Summarize in one line: hi' });
    assert.equal((got as unknown as Meta)._meta?.[RUN], run);
    assert.equal(typeof labelOf(got).source, 'string', JSON.stringify(got));
    assert.equal(await refusedCode(client.readResource({ uri: 'notes://customers' })), -32084);
  });

  test('a 2025-11-25 client reads a template and is refused an ungranted resource', async () => {
    const client = await legacy('lister');
    const read = await client.readResource({ uri: 'notes://topics/tea' });
    assert.equal((read.contents[0] as { text: string }).text, 'notes about tea');
    assert.equal(typeof labelOf(read).source, 'string', JSON.stringify(read));
    const got = await client.getPrompt({ name: 'summarize', arguments: { text: 'hi' } });
    assert.equal(typeof labelOf(got).source, 'string', JSON.stringify(got));
    assert.equal(await refusedCode(client.readResource({ uri: 'notes://customers' })), -32084);
    // An encoded separator binds a variable that would not expand back to the same URI: the
    // gate's arguments would not say what is read, so it matches nothing.
    assert.equal(
      await refusedCode(client.readResource({ uri: 'notes://topics/..%2Fcustomers' })),
      -32084,
    );
    // A URI that matches no template and no resource.
    assert.equal(await refusedCode(client.readResource({ uri: 'notes://topics/a/b' })), -32084);
  });

  for (const era of ['legacy', 'modern'] as const) {
    test(`${era}: a private resource read stops a later unconstrained egress call (flow rule)`, async () => {
      const agent = `${era}-flow`;
      await tg.config.apply(
        [{ kind: 'Grant', spec: { agent, capabilities: ['notes:private'] } }],
        admin,
      );
      // The reading session (2025) or run (2026) holds the private resource, so its set withholds
      // the unconstrained egress tool (the toxic combination)...
      const reader = era === 'legacy' ? await legacy(agent) : await modern(agent);
      const held = await reader.listTools();
      assert.ok(!held.tools.some((t) => t.name === 'post_note'), 'egress withheld beside it');
      const readRun = (held as unknown as Meta)._meta?.[RUN];
      const read = await reader.readResource({
        uri: 'notes://customers',
        ...(readRun ? { _meta: { [RUN]: readRun } } : {}),
      });
      assert.match((read.contents[0] as { text: string }).text, /alice@example\.com/);
      // ...and once the grant is gone, a fresh session or run holds egress again, but the read
      // follows the principal: the flow rule refuses the send.
      await tg.agents.revoke(agent, ['notes:private'], admin);
      const sender = era === 'legacy' ? await legacy(agent) : await modern(agent);
      // A 2026 client's requests without a handle share one default run: mint a fresh one.
      const minted =
        era === 'modern'
          ? (
              await tg.agent.runs.mint(
                {
                  kind: 'agent',
                  agentId: agent,
                  credential: (await tg.agent.authenticate(keys[agent] ?? ''))?.credential ?? '',
                },
                { via: 'test' },
              )
            ).handle
          : undefined;
      const tools = await sender.listTools(minted ? { _meta: { [RUN]: minted } } : {});
      assert.ok(tools.tools.some((t) => t.name === 'post_note'));
      const egressRun = (tools as unknown as Meta)._meta?.[RUN];
      assert.notEqual(egressRun ?? 'none', readRun ?? 'other');
      const send = await sender.callTool({
        name: 'post_note',
        arguments: { text: 'alice@example.com' },
        ...(egressRun ? { _meta: { [RUN]: egressRun } } : {}),
      });
      assert.equal(send.isError, true, JSON.stringify(send));
      assert.equal(decisionOf(send).code, 'TOXIC_FLOW');
      assert.equal(decisionOf(send).rule, 'flow.private_then_egress');
    });

    test(`${era}: a public resource read leaves egress allowed`, async () => {
      const client =
        era === 'legacy' ? await legacy(`${era}-benign`) : await modern(`${era}-benign`);
      const tools = await client.listTools();
      const run = (tools as unknown as Meta)._meta?.[RUN];
      const meta = run ? { _meta: { [RUN]: run } } : {};
      const read = await client.readResource({ uri: 'notes://readme', ...meta });
      assert.equal((read.contents[0] as { text: string }).text, 'hello from the readme');
      const send = await client.callTool({
        name: 'post_note',
        arguments: { text: 'hello' },
        ...meta,
      });
      assert.equal(send.isError, undefined, JSON.stringify(send));
      assert.equal(decisionOf(send).kind, 'allow');
    });
  }
});
