/**
 * @module A rug pull by an upstream MCP server of ours (test/fixtures/mcp/rug-pull-server.mjs):
 * after it rewrites a pinned tool's description and adds a tool, a refresh quarantines both,
 * records the change with an alert, an open MCP client (the official SDK client over Streamable
 * HTTP) gets list_changed and no longer sees the tool, and calling it is denied. A process that
 * already lists the changed definition is refused at the call by its pin, before any refresh.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  type CallToolResult,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Actor } from '../../src/core/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { classifyReviewed } from '../support/reviews.js';
import { connectMcp, openWorld, type World } from '../support/world.js';
import { fixtureProvider, NOTES_BOT, publicRead } from './provider-support.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const READ = publicRead(['notes:read']);

function decisionOf(result: unknown): Record<string, unknown> {
  const meta = (result as CallToolResult)._meta as Record<string, unknown> | undefined;
  return (meta?.['toolgate/decision'] ?? {}) as Record<string, unknown>;
}

async function waitFor(check: () => boolean, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 25));
  }
}

for (const backend of backends()) {
  describe(`rug pull by an upstream provider (${backend.name})`, () => {
    let tg: Gateway;
    let world: World;
    let base: string;
    let key: string;
    let stateDir: string;
    const clients: Client[] = [];

    const setMode = (mode: 'benign' | 'evil' | 'twins') =>
      writeFileSync(join(stateDir, 'mode'), mode);

    async function connect(): Promise<Client> {
      const client = await connectMcp(base, key, 'rug-test');
      clients.push(client);
      return client;
    }

    before(async () => {
      world = await openWorld({
        backend,
        agents: [NOTES_BOT],
        rest: { adminToken: 'rug-admin-token-0123456789abcdef0123456789' },
      });
      ({ tg, base } = world);
      key = String(world.keys['notes-bot']);
      stateDir = mkdtempSync(join(tmpdir(), 'toolgate-rug-'));
      chmodSync(stateDir, 0o755);
      setMode('benign');
      await tg.providers.register(
        fixtureProvider('notes', 'rug-pull-server.mjs', [join(stateDir, 'mode')], stateDir),
        admin,
      );
      await classifyReviewed(tg, 'notes', 'fetch_notes', READ, admin);
    });

    after(async () => {
      await Promise.all(clients.map((c) => c.close().catch(() => {})));
      await world.close();
      rmSync(stateDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    });

    test('the classified tool is listed and callable over MCP', async () => {
      const client = await connect();
      const tools = (await client.listTools()).tools.map((t) => t.name);
      assert.deepEqual(tools, ['fetch_notes']);
      const result = (await client.callTool({
        name: 'fetch_notes',
        arguments: { topic: 'gardening' },
      })) as CallToolResult;
      assert.equal(result.isError, undefined, JSON.stringify(result));
      assert.deepEqual(result.content, [{ type: 'text', text: 'notes about gardening' }]);
    });

    test('a process started after the upstream changed is refused at the call by its pin', async () => {
      setMode('evil');
      // A second agent session starts its own process, which now lists the changed description.
      const client = await connect();
      const result = (await client.callTool({
        name: 'fetch_notes',
        arguments: { topic: 'x' },
      })) as CallToolResult;
      assert.equal(result.isError, true);
      assert.equal(decisionOf(result).code, 'EXECUTION_FAILED');
      assert.equal(decisionOf(result).rule, 'provider.pin_mismatch');
      // The refresh the mismatch set off quarantines the tool, as an admin's refresh would.
      let state: string | undefined;
      const until = Date.now() + 10_000;
      while (state !== 'quarantined' && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 50));
        state = (await tg.providers.show('notes')).tools.find(
          (t) => t.name === 'fetch_notes',
        )?.state;
      }
      assert.equal(state, 'quarantined');
      // The tool the new release added is imported quarantined, never unclassified-and-waiting.
      const added = (await tg.providers.show('notes')).tools.find((t) => t.name === 'upload_notes');
      assert.equal(added?.state, 'quarantined');
      assert.equal(added?.reason, 'added after registration');
      assert.ok((await tg.catalog.versions('notes.fetch_notes')).every((v) => v.quarantined));
      setMode('benign');
    });

    test('a refresh after a rug pull quarantines, alerts, and the open client gets list_changed', async () => {
      // Back to the honest definition, classified again by an admin.
      assert.deepEqual((await tg.providers.refresh('notes', admin)).changed, ['fetch_notes']);
      await classifyReviewed(tg, 'notes', 'fetch_notes', READ, admin);
      const client = await connect();
      let changed = 0;
      client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
        changed += 1;
      });
      assert.deepEqual(
        (await client.listTools()).tools.map((t) => t.name),
        ['fetch_notes'],
      );
      setMode('evil');
      const report = await tg.providers.refresh('notes', admin);
      // upload_notes was dropped by the honest release and is listed again: quarantined again,
      // reported as listed again rather than changed (attack round 12 N5).
      assert.deepEqual(report.changed, ['fetch_notes']);
      assert.deepEqual(report.listed_again, ['upload_notes']);

      const after = await tg.providers.show('notes');
      const fetch = after.tools.find((t) => t.name === 'fetch_notes');
      assert.equal(fetch?.state, 'quarantined');
      assert.equal(fetch?.reason, 'definition changed');
      assert.ok((fetch?.findings.length ?? 0) > 0, 'the new description is flagged by the scan');
      assert.equal(after.tools.find((t) => t.name === 'upload_notes')?.state, 'quarantined');
      const versions = await tg.catalog.versions('notes.fetch_notes');
      assert.ok(versions.every((v) => v.quarantined));

      const events = await tg.events.list({ subject: 'provider:notes/fetch_notes', limit: 100 });
      const alert = events.find((e) => e.action === 'alert.provider_changed');
      assert.ok(alert, 'an alert event is recorded');
      assert.equal((JSON.parse(alert.details) as { change: string }).change, 'changed');

      await waitFor(() => changed > 0);
      assert.deepEqual((await client.listTools()).tools, []);
      const result = (await client.callTool({
        name: 'fetch_notes',
        arguments: { topic: 'x' },
      })) as CallToolResult;
      assert.equal(result.isError, true);
      assert.equal(decisionOf(result).code, 'TOOL_NOT_REGISTERED');
    });

    test('an upstream tool whose name differs only in case from a pinned one is never imported', async () => {
      const twinsDir = mkdtempSync(join(tmpdir(), 'toolgate-twins-'));
      chmodSync(twinsDir, 0o755);
      writeFileSync(join(twinsDir, 'mode'), 'twins');
      try {
        const { refresh } = await tg.providers.register(
          fixtureProvider('twins', 'rug-pull-server.mjs', [join(twinsDir, 'mode')], twinsDir),
          admin,
        );
        assert.deepEqual(refresh.imported, ['fetch_notes']);
        assert.deepEqual(refresh.skipped, ['Fetch_Notes']);
        const shown = await tg.providers.show('twins');
        assert.deepEqual(
          shown.tools.map((t) => t.name),
          ['fetch_notes'],
        );
      } finally {
        rmSync(twinsDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
      }
    });

    test('the quarantined tool is offered again only after an admin classifies the new definition', async () => {
      setMode('benign');
      const report = await tg.providers.refresh('notes', admin);
      assert.deepEqual(report.changed, ['fetch_notes']);
      assert.deepEqual(report.removed, ['upload_notes']);
      const client = await connect();
      assert.deepEqual((await client.listTools()).tools, []);
      const { tool } = await classifyReviewed(tg, 'notes', 'fetch_notes', READ, admin);
      assert.equal(tool.version.split('.')[0] !== '1', true, 'a new major version');
      assert.equal(tool.quarantined, false);
      const fresh = await connect();
      assert.deepEqual(
        (await fresh.listTools()).tools.map((t) => t.name),
        ['fetch_notes'],
      );
    });
  });
}
