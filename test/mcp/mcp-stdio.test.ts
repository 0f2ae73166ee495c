/**
 * `toolgate mcp` for a local agent: the official SDK client spawns the built CLI over stdio. The
 * agent key comes from the environment; a bad key ends the process before any tool is offered.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { approvePendingReviews } from '../support/reviews.js';
import { openStdioFolder, STDIO_ADMIN, type StdioFolder } from '../support/stdio.js';
import { validTool } from '../support/tools.js';

const admin = STDIO_ADMIN;
let folder: StdioFolder;
let tg: Gateway;
let key: string;

before(async () => {
  folder = await openStdioFolder('mcp-stdio');
  tg = folder.tg;
  key = (await tg.keys.issue('support-bot', admin)).apiKey;
});

after(async () => {
  await folder.close();
});

function transport(agentKey: string): StdioClientTransport {
  return new StdioClientTransport(folder.server(agentKey));
}

/** A v2 SDK client pinned to 2026-07-28, spawning the built CLI over stdio. */
async function modernClient(name: string): Promise<ClientV2> {
  const client = new ClientV2(
    { name, version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(new StdioV2(folder.server(key)));
  return client;
}

test('a local agent lists its permitted set and calls through the gate over stdio', async () => {
  const client = new Client({ name: 'stdio-test', version: '1.0.0' });
  await client.connect(transport(key));
  try {
    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes('get_order'));
    assert.ok(!names.includes('post_webhook'), 'the toxic combination is withheld on stdio too');
    const ok = (await client.callTool({
      name: 'get_order',
      arguments: { order_id: 'ORD-000042' },
    })) as CallToolResult;
    assert.notEqual(ok.isError, true, JSON.stringify(ok));
    const denied = (await client.callTool({
      name: 'grant_role',
      arguments: {},
    })) as CallToolResult;
    assert.equal(denied.isError, true);
    assert.match(JSON.stringify(denied.content), /TOOL_NOT_REGISTERED/);
  } finally {
    await client.close();
  }
});

test('a client pinned to 2026-07-28 lists and calls through the gate over stdio, in one run', async () => {
  const client = await modernClient('stdio-modern');
  try {
    const list = await client.listTools();
    const names = list.tools.map((t) => t.name);
    assert.deepEqual(names, [...names].sort());
    assert.ok(names.includes('get_order'));
    assert.ok(!names.includes('post_webhook'), 'the toxic combination is withheld');
    const run = (list._meta as Record<string, unknown> | undefined)?.['io.toolgate/run'];
    assert.equal(typeof run, 'string');
    const ok = await client.callTool({
      name: 'get_order',
      arguments: { order_id: 'ORD-000042' },
      _meta: { 'io.toolgate/run': run },
    });
    assert.notEqual(ok.isError, true, JSON.stringify(ok));
    assert.equal((ok._meta as Record<string, unknown>)['io.toolgate/run'], run);
    // Without a handle, the connection's own run continues.
    const again = await client.callTool({
      name: 'get_order',
      arguments: { order_id: 'ORD-000042' },
    });
    assert.equal((again._meta as Record<string, unknown>)['io.toolgate/run'], run);
  } finally {
    await client.close();
  }
});

test('a 2026-07-28 client listening on stdio hears of a catalog change and lists the new tool', {
  timeout: 60_000,
}, async () => {
  const client = await modernClient('stdio-listen');
  try {
    const before = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(!before.includes('stdio_fresh'));
    let heard!: () => void;
    const changed = new Promise<void>((resolve) => {
      heard = resolve;
    });
    client.setNotificationHandler('notifications/tools/list_changed', () => heard());
    const sub = await client.listen({ toolsListChanged: true });
    assert.equal(sub.honoredFilter.toolsListChanged, true);
    // A tool for a capability support-bot holds, registered by another process (this test's).
    await tg.config.apply(
      [
        {
          kind: 'Tool',
          spec: validTool({
            id: 'stdio_fresh',
            name: 'stdio_fresh',
            data_access: 'none',
            required_capabilities: ['docs:read'],
          }),
        },
      ],
      admin,
    );
    await approvePendingReviews(tg);
    await changed;
    const after = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(after.includes('stdio_fresh'), JSON.stringify(after));
    await sub.close();
  } finally {
    await client.close();
  }
});

test('a bad agent key ends the process before it serves anything', async () => {
  const client = new Client({ name: 'stdio-test', version: '1.0.0' });
  const t = transport('tgk_definitely_not_valid');
  let stderr = '';
  t.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  await assert.rejects(client.connect(t));
  await client.close().catch(() => {});
  assert.match(stderr, /UNAUTHENTICATED/);
});
