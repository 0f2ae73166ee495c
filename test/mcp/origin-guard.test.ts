/**
 * /mcp validates Origin and Host before authentication (MCP Streamable HTTP
 * transport: servers MUST validate Origin). A page on another site, or one whose DNS name was
 * rebound to the gateway, is refused with 403 and a JSON-RPC error, whatever token it carries,
 * and the refusal is audited; clients that send no Origin, loopback origins and configured ones
 * work. Raw HTTP for the header attacks, the official SDK client for the benign neighbours.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Actor } from '../../src/core/index.js';
import { originPolicy } from '../../src/edge/mcp/index.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { ensureBuilt, listeningUrl, runCli, spawnServe } from '../support/cli.js';
import { validTool } from '../support/tools.js';
import { initializeRequest, mcpHeaders, openWorld, rawPost, type World } from '../support/world.js';

const admin: Actor = { id: 'admin', via: 'library' };
const ADMIN_TOKEN = 'origin-test-admin-token-0123456789abcdef';
const INITIALIZE = JSON.stringify(initializeRequest());

describe('/mcp Origin and Host validation', () => {
  let world: World;
  let base: string;
  let port: number;
  let inspector: Store;
  let key: string;

  before(async () => {
    world = await openWorld({
      actor: admin,
      tools: [validTool()],
      agents: [{ id: 'web-bot', capabilities: ['billing:read'] }],
      rest: {
        adminToken: ADMIN_TOKEN,
        mcp: {
          originPolicy: originPolicy(['https://console.example.com'], ['gateway.example.com']),
          // Every refusal here is recorded in full (the sample bounds a flood;
          // personal-data-masking pins that bound).
          refusalSample: 1_000,
        },
      },
    });
    base = world.base;
    key = world.keys['web-bot'] ?? '';
    inspector = await openStore(world.db);
    port = Number(new URL(base).port);
  });
  after(async () => {
    await inspector.close();
    await world.close();
  });

  /** A raw initialize with exactly these headers (node:http lets Host be set). */
  const raw = (headers: Record<string, string>) =>
    rawPost(port, '/mcp', { ...mcpHeaders(key), ...headers }, INITIALIZE);

  const refusals = async () =>
    (
      await inspector.db
        .selectFrom('events')
        .selectAll()
        .where('action', '=', 'mcp.origin_refused')
        // In the order written: the newest is `.at(-1)`.
        .orderBy('seq')
        .execute()
    ).map((e) => JSON.parse(e.details) as { reason: string; value: string });

  const openSessions = async () =>
    Number(
      (
        await inspector.db
          .selectFrom('sessions')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('status', '=', 'open')
          .executeTakeFirstOrThrow()
      ).n,
    );

  for (const [name, headers, reason] of [
    ['a foreign Origin with a valid token', { origin: 'https://evil.example' }, 'origin'],
    ['Origin: null (sandboxed frame, file:)', { origin: 'null' }, 'origin'],
    [
      'an allowed origin with another port',
      { origin: 'https://console.example.com:8443' },
      'origin',
    ],
    ['an allowed origin over http', { origin: 'http://console.example.com' }, 'origin'],
    [
      'a look-alike of an allowed origin',
      { origin: 'https://console.example.com.evil.example' },
      'origin',
    ],
    [
      'DNS rebinding: a foreign Host name that resolves here',
      { host: `evil.example:${'PORT'}` },
      'host',
    ],
    [
      'DNS rebinding with a matching Origin',
      { host: 'rebind.evil.example', origin: 'http://rebind.evil.example' },
      'host',
    ],
    ['a Host with userinfo', { host: 'gateway.example.com@evil.example' }, 'host'],
  ] as const) {
    test(`refused before authentication, 403 JSON-RPC, audited: ${name}`, async () => {
      const before = (await refusals()).length;
      const sessionsBefore = await openSessions();
      const h: Record<string, string> = { ...headers };
      if (h.host) h.host = h.host.replace('PORT', String(port));
      const res = await raw(h);
      assert.equal(res.status, 403, res.body);
      const body = JSON.parse(res.body) as { jsonrpc: string; error: { code: number } };
      assert.equal(body.jsonrpc, '2.0');
      assert.equal(body.error.code, -32003);
      const events = await refusals();
      assert.equal(events.length, before + 1);
      assert.equal(events.at(-1)?.reason, reason);
      assert.equal(await openSessions(), sessionsBefore, 'no session was opened');
    });
  }

  test('the check comes before authentication: no token and a foreign Origin is 403, not 401', async () => {
    const res = await raw({ origin: 'https://evil.example', authorization: '' });
    assert.equal(res.status, 403);
  });

  for (const [name, headers] of [
    ['no Origin (a non-browser client)', {}],
    ['a loopback Origin', { origin: 'http://localhost:5173' }],
    ['a configured Origin', { origin: 'https://console.example.com' }],
    ['a configured Host', { host: 'gateway.example.com' }],
    ['a loopback Host by name', { host: `localhost:${'PORT'}` }],
  ] as const) {
    test(`allowed: ${name}`, async () => {
      const h: Record<string, string> = { ...headers };
      if (h.host) h.host = h.host.replace('PORT', String(port));
      const res = await raw(h);
      assert.equal(res.status, 200, res.body);
    });
  }

  test('the official SDK client (no Origin) connects and calls as before', async () => {
    const client = new Client({ name: 'origin-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    assert.deepEqual(
      (await client.listTools()).tools.map((t) => t.name),
      ['lookup_invoice'],
    );
    await client.close();
  });

  test('the SDK client from a foreign Origin cannot connect', async () => {
    const client = new Client({ name: 'origin-test', version: '1.0.0' });
    await assert.rejects(
      client.connect(
        new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
          requestInit: {
            headers: { authorization: `Bearer ${key}`, origin: 'https://evil.example' },
          },
        }),
      ),
    );
  });

  test('a bad allow-list entry is refused at start, naming it', () => {
    assert.throws(() => originPolicy(['https://console.example.com/path']), /allowed origin/);
    assert.throws(() => originPolicy(['ftp://x.example']), /http or https/);
    assert.throws(() => originPolicy([], ['evil.example/x']), /allowed host/);
  });
});

describe('toolgate serve: --allowed-origins / TOOLGATE_ALLOWED_ORIGINS', () => {
  let dir: string;
  before(() => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'toolgate-origin-serve-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }));

  test('a malformed entry stops serve before it listens, naming the entry', async () => {
    const run = await runCli(dir, [
      '--json',
      'serve',
      '--port',
      '0',
      '--allowed-origins',
      'https://console.example.com/app',
    ]);
    assert.equal(run.code, 2);
    const out = JSON.parse(run.stdout || run.stderr) as {
      error: { code: string; message: string };
    };
    assert.equal(out.error.code, 'INPUT_INVALID');
    assert.match(out.error.message, /console\.example\.com\/app/);
  });

  test('the environment variable configures a running gateway: the listed origin passes, others get 403', async () => {
    const server = spawnServe(dir, [], { TOOLGATE_ALLOWED_ORIGINS: 'https://console.example.com' });
    try {
      const url = await listeningUrl(server);
      const post = (origin: string) =>
        fetch(`${url}/mcp`, {
          method: 'POST',
          headers: { origin, 'content-type': 'application/json' },
          body: INITIALIZE,
        });
      // No token: an allowed origin gets as far as authentication (401), a foreign one is 403.
      assert.equal((await post('https://console.example.com')).status, 401);
      assert.equal((await post('https://evil.example')).status, 403);
    } finally {
      server.kill('SIGTERM');
      await new Promise((r) => server.once('exit', r));
    }
  });
});
