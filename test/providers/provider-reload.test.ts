/**
 * @module A provider changed by another process reaches a running `serve` without a restart
 * (attack report G3; docs/architecture.md §4, "When a provider change takes effect"). The built
 * CLI's `serve` runs on the database; `toolgate apply -f` in a separate process changes the
 * provider, as an operator would. The serve learns of it from the catalog revision the update
 * moves (SQLite: its poll; PostgreSQL: LISTEN/NOTIFY), drops the spec it kept and the upstream
 * processes started under it, and the next call runs under the stored spec:
 *
 * - a benign change (its limits and idle timeout) takes effect in the same MCP session: the
 *   upstream fixture answers with the open-files limit its process was started under;
 * - a launch change (another program listing the very same tool) is refused `provider.changed`,
 *   never run by the old program silently; classified again over the running serve's REST front
 *   and reviewed by another operator, the new program runs there.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { stringify } from 'yaml';
import type { Actor } from '../../src/core/index.js';
import { loadMasterKey } from '../../src/domain/credentials/index.js';
import { approvalSigner, auditSigner } from '../../src/edge/cli/runtime-files.js';
import { DEFAULT_ORIGIN } from '../../src/records/audit/index.js';
import { type Replica, startReplica, stopReplica } from '../replicas/cluster.js';
import { backends, migratedFresh } from '../support/backends.js';
import { type CliRun, cleanEnv, ensureBuilt, MAIN } from '../support/cli.js';
import { approveReview, classifyReviewed } from '../support/reviews.js';
import { connectMcp, openWorld, type World } from '../support/world.js';
import { fixtureProvider, NOTES_BOT, publicRead } from './provider-support.js';

const ADMIN_TOKEN = 'provider-reload-admin-token-0123456789abcdef';
const admin: Actor = { id: 'test-admin', via: 'library' };
const READ = publicRead(['notes:read']);
/** How long a change made elsewhere may take to reach the serve before the test fails. */
const DEADLINE_MS = 15_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function decisionOf(result: CallToolResult): Record<string, unknown> {
  const meta = result._meta as Record<string, unknown> | undefined;
  return (meta?.['toolgate/decision'] ?? {}) as Record<string, unknown>;
}

const textOf = (result: CallToolResult) =>
  result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');

/** Calls `next` until `done` holds of its answer, up to DEADLINE_MS; every answer, and the wait. */
async function until<T>(
  next: () => Promise<T>,
  done: (value: T) => boolean,
  what: string,
): Promise<{ seen: T[]; ms: number }> {
  const t0 = Date.now();
  const seen: T[] = [];
  for (;;) {
    const value = await next();
    seen.push(value);
    if (done(value)) return { seen, ms: Date.now() - t0 };
    if (Date.now() - t0 > DEADLINE_MS) {
      assert.fail(`${what}: not within ${DEADLINE_MS} ms; last ${JSON.stringify(value)}`);
    }
    await sleep(50);
  }
}

for (const backend of backends()) {
  describe(`a provider changed by the CLI reaches a running serve (${backend.name})`, () => {
    let dir = '';
    let dataDir = '';
    let db = '';
    let drop: () => Promise<void> = async () => {};
    let world: World | null = null;
    let serve: Replica | null = null;
    let key = '';
    let session: Client | null = null;
    const clients: Client[] = [];

    const provider = (script: string, extra: Record<string, unknown> = {}) => ({
      ...fixtureProvider('notes', script),
      ...extra,
    });

    /** `toolgate apply -f` on the serve's database, in a process of its own. */
    function apply(spec: Record<string, unknown>): Promise<CliRun> {
      const file = join(dir, 'provider.yaml');
      writeFileSync(file, stringify({ apiVersion: 'toolgate/v1', kind: 'Provider', spec }));
      return new Promise((resolve) => {
        execFile(
          process.execPath,
          [MAIN, '--db', db, '--data-dir', dataDir, 'apply', '-f', file],
          { cwd: dir, env: cleanEnv() },
          (err, stdout, stderr) =>
            resolve({
              code: err ? Number((err as { code?: number }).code ?? 1) : 0,
              stdout,
              stderr,
            }),
        );
      });
    }

    const call = async (client: Client): Promise<CallToolResult> =>
      (await client.callTool({
        name: 'fetch_notes',
        arguments: { topic: 'gardening' },
      })) as CallToolResult;

    /** A new MCP session on the serve (a new gate session, so new upstream processes). */
    async function connect(): Promise<Client> {
      assert.ok(serve);
      const client = await connectMcp(serve.base, key, 'provider-reload');
      clients.push(client);
      return client;
    }

    before(async () => {
      ensureBuilt();
      dir = mkdtempSync(join(tmpdir(), 'toolgate-provider-reload-'));
      dataDir = join(dir, 'data');
      mkdirSync(dataDir, { recursive: true });
      const fresh = await migratedFresh(backend);
      db = fresh.url;
      drop = fresh.drop;
      // The other operator's process: the agent, the provider as first registered, its tool
      // classified and reviewed. It stays open to review the tool classified again later.
      world = await openWorld({
        backend,
        agents: [NOTES_BOT],
        options: {
          db,
          approvalSigner: () => approvalSigner(dataDir),
          auditSigner: () => auditSigner(dataDir, DEFAULT_ORIGIN),
          masterKey: () => loadMasterKey({ dataDir }),
          audit: { checkpoints: false },
          detectors: false,
          health: false,
        },
      });
      key = String(world.keys['notes-bot']);
      await world.tg.providers.register(provider('limits-notes-server.mjs'), admin);
      await classifyReviewed(world.tg, 'notes', 'fetch_notes', READ, admin);
      serve = await startReplica('serve', { db, dataDir, cwd: dir, adminToken: ADMIN_TOKEN });
    });

    after(async () => {
      await Promise.all(clients.map((c) => c.close().catch(() => {})));
      if (serve) await stopReplica(serve);
      await world?.close();
      await drop();
      if (dir) rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    });

    test('a change of limits and idle timeout takes effect in the same session, no restart', async () => {
      session = await connect();
      const first = await call(session);
      assert.equal(first.isError, undefined, JSON.stringify(first));
      // The provider default (PROVIDER_LIMITS.open_files).
      assert.equal(textOf(first), 'notes about gardening; open files 512');

      const applied = await apply(
        provider('limits-notes-server.mjs', {
          limits: { open_files: 300 },
          idle_timeout_ms: 60_000,
        }),
      );
      assert.equal(applied.code, 0, applied.stderr + applied.stdout);
      assert.match(applied.stdout, /updated/);
      const { seen, ms } = await until(
        () => call(session as Client),
        (r) => textOf(r) === 'notes about gardening; open files 300',
        'the new limits on the running serve',
      );
      console.log(`provider limits reached the running serve in ${ms} ms (${backend.name})`);
      // Until then only the old process answered: never a refusal, never anything else.
      for (const r of seen.slice(0, -1)) {
        assert.equal(textOf(r), 'notes about gardening; open files 512', JSON.stringify(r));
      }
    });

    test('another program behind the provider is refused provider.changed on the running serve', async () => {
      assert.ok(session);
      const applied = await apply(
        provider('swapped-notes-server.mjs', {
          limits: { open_files: 300 },
          idle_timeout_ms: 60_000,
        }),
      );
      assert.equal(applied.code, 0, applied.stderr + applied.stdout);
      // The same listing: nothing is quarantined by the pin, the tool stays offered.
      assert.doesNotMatch(applied.stdout, /QUARANTINED/);
      const { seen, ms } = await until(
        () => call(session as Client),
        (r) => decisionOf(r).rule === 'provider.changed',
        'the launch change on the running serve',
      );
      console.log(`provider launch change reached the running serve in ${ms} ms (${backend.name})`);
      for (const r of seen) assert.doesNotMatch(textOf(r), /swapped program ran/);
      const refused = seen.at(-1) as CallToolResult;
      assert.equal(refused.isError, true);
      assert.equal(decisionOf(refused).code, 'EXECUTION_FAILED');
      // A new session is refused alike: not the old program, not the new one.
      const fresh = await call(await connect());
      assert.equal(decisionOf(fresh).rule, 'provider.changed', JSON.stringify(fresh));
    });

    test('classified again over the serve and reviewed by another operator, the new program runs there', async () => {
      assert.ok(serve && world);
      const res = await fetch(`${serve.base}/v1/providers/notes/tools/fetch_notes/classify`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(READ),
      });
      const classified = (await res.json()) as { tool: { id: string; version: string } };
      assert.equal(res.status, 200, JSON.stringify(classified));
      assert.notEqual(classified.tool.version, '1.0.0', 'a new version');
      // The serve bound it to the program the provider runs now, not to the one it ran before.
      const detail = await world.tg.catalog.get(classified.tool.id, classified.tool.version);
      const runtime = detail.definition.runtime as { launch?: string };
      const v1 = await world.tg.catalog.get(classified.tool.id, '1.0.0');
      assert.notEqual(runtime.launch, (v1.definition.runtime as { launch?: string }).launch);
      // A draft until reviewed: still refused.
      assert.equal((await call(await connect())).isError, true);
      await approveReview(world.tg, classified.tool.id, classified.tool.version);
      const { ms } = await until(
        async () => call(await connect()),
        (r) => textOf(r) === 'the swapped program ran',
        'the reviewed new program on the running serve',
      );
      console.log(`the reviewed version ran on the running serve after ${ms} ms (${backend.name})`);
    });
  });
}
