/**
 * @module The review of an imported tool binds the program behind its provider (attack round 26,
 * F8): an admin who updates a reviewed provider to run another program — one that lists exactly
 * the same tool, so its pin is unchanged — gets the update recorded with `launch_changed`, and the
 * tool is refused at the call (`provider.changed`) until it is classified again and that new
 * version reviewed. The benign neighbours: an update of the provider's limits or idle timeout
 * keeps the tool callable, and the re-classified, reviewed version runs the new program.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Actor } from '../../src/core/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { approveReview, classifyReviewed } from '../support/reviews.js';
import { connectMcp, openWorld, type World } from '../support/world.js';
import { fixtureProvider, NOTES_BOT, publicRead } from './provider-support.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const READ = publicRead(['notes:read']);

function decisionOf(result: CallToolResult): Record<string, unknown> {
  const meta = result._meta as Record<string, unknown> | undefined;
  return (meta?.['toolgate/decision'] ?? {}) as Record<string, unknown>;
}

for (const backend of backends()) {
  describe(`a reviewed provider tool is bound to the program behind it (${backend.name})`, () => {
    let tg: Gateway;
    let world: World;
    let key: string;
    let stateDir: string;
    const clients: Client[] = [];

    const reviewed = (extra: Record<string, unknown> = {}, script = 'rug-pull-server.mjs') => ({
      ...fixtureProvider('notes', script, [join(stateDir, 'mode')], stateDir),
      ...extra,
    });

    /** One call of fetch_notes from a new MCP session (a new upstream process). */
    async function call(): Promise<CallToolResult> {
      const client = await connectMcp(world.base, key, 'launch-test');
      clients.push(client);
      return (await client.callTool({
        name: 'fetch_notes',
        arguments: { topic: 'gardening' },
      })) as CallToolResult;
    }

    async function lastUpdate(): Promise<Record<string, unknown>> {
      const events = await tg.admin.events.list({ subject: 'provider:notes', limit: 50 });
      const update = events.filter((e) => e.action === 'provider.updated').at(-1);
      assert.ok(update, 'the update is recorded');
      return (
        typeof update.details === 'string' ? JSON.parse(update.details) : update.details
      ) as Record<string, unknown>;
    }

    before(async () => {
      world = await openWorld({
        backend,
        agents: [NOTES_BOT],
        rest: { adminToken: 'launch-admin-token-0123456789abcdef0123456789' },
      });
      tg = world.tg;
      key = String(world.keys['notes-bot']);
      stateDir = mkdtempSync(join(tmpdir(), 'toolgate-launch-'));
      chmodSync(stateDir, 0o755);
      writeFileSync(join(stateDir, 'mode'), 'benign');
      await tg.providers.register(reviewed(), admin);
      await classifyReviewed(tg, 'notes', 'fetch_notes', READ, admin);
    });

    after(async () => {
      await Promise.all(clients.map((c) => c.close().catch(() => {})));
      await world.close();
      rmSync(stateDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    });

    test('an update of limits and idle timeout changes nothing that runs: the tool still answers', async () => {
      assert.equal(
        (
          await tg.providers.register(
            reviewed({ idle_timeout_ms: 60_000, limits: { memory_mb: 1024 } }),
            admin,
          )
        ).action,
        'update',
      );
      assert.equal((await lastUpdate()).launch_changed, false);
      const result = await call();
      assert.equal(result.isError, undefined, JSON.stringify(result));
      assert.deepEqual(result.content, [{ type: 'text', text: 'notes about gardening' }]);
    });

    test('another program behind the provider, listing the same tool, is refused at the call', async () => {
      assert.equal(
        (
          await tg.providers.register(
            reviewed({ idle_timeout_ms: 60_000 }, 'swapped-notes-server.mjs'),
            admin,
          )
        ).action,
        'update',
      );
      assert.equal((await lastUpdate()).launch_changed, true);
      // Its listing is the reviewed one: nothing is quarantined by the pin, the tool stays listed.
      const refresh = await tg.providers.refresh('notes', admin);
      assert.deepEqual(refresh.changed, []);
      const result = await call();
      assert.equal(result.isError, true, JSON.stringify(result));
      assert.equal(decisionOf(result).code, 'EXECUTION_FAILED');
      assert.equal(decisionOf(result).rule, 'provider.changed');
      assert.doesNotMatch(JSON.stringify(result.content), /swapped program ran/);
    });

    test('classified again and reviewed, the new program runs under its own version', async () => {
      const classified = await tg.providers.classify('notes', 'fetch_notes', READ, admin);
      assert.notEqual(classified.tool.version, '1.0.0', 'a new version');
      // Not live before its review.
      const waiting = await call();
      assert.equal(waiting.isError, true);
      await approveReview(tg, classified.tool.id, classified.tool.version);
      const result = await call();
      assert.equal(result.isError, undefined, JSON.stringify(result));
      assert.deepEqual(result.content, [{ type: 'text', text: 'the swapped program ran' }]);
    });
  });
}
