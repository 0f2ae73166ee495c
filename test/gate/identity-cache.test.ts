/**
 * The gate caches agents, grants, users and open sessions per identity revision. These tests pin
 * that the cache never outlives a change: at once when this process makes it, and within the
 * polling interval when another process (the CLI, another replica) does.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import type { GateDecision } from '../../src/gate/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { cleanEnv, ensureBuilt, MAIN } from '../support/cli.js';
import { validTool } from '../support/tools.js';

const admin: Actor = { id: 'test-admin', via: 'library' };

/** Runs the built CLI in its own process against the same database. */
function cli(args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [MAIN, ...args],
      { env: cleanEnv(), timeout: 20_000 },
      (err, stdout, stderr) =>
        err ? reject(new Error(`${err.message}\n${stderr}${stdout}`)) : resolve(),
    );
  });
}

/** Calls until the decision is a denial or the deadline passes; returns the denial and when. */
async function untilDenied(
  call: () => Promise<GateDecision>,
  deadlineMs: number,
): Promise<{ decision: GateDecision; afterMs: number }> {
  const start = Date.now();
  for (;;) {
    const decision = await call().catch((err: unknown) => {
      const code = (err as { code?: string }).code ?? 'THROWN';
      return { kind: 'deny', code, rule: 'thrown', message: String(err) } as GateDecision;
    });
    const afterMs = Date.now() - start;
    if (decision.kind === 'deny' || afterMs > deadlineMs) return { decision, afterMs };
    await new Promise((r) => setTimeout(r, 20));
  }
}

for (const backend of backends()) {
  describe(`identity cache on ${backend.name}`, () => {
    let tg: Gateway;
    let url: string;
    let drop: () => Promise<void>;
    let dir: string;

    before(async () => {
      ensureBuilt();
      const fresh = await backend.fresh();
      url = fresh.url;
      drop = fresh.drop;
      dir = mkdtempSync(join(tmpdir(), 'toolgate-idcache-'));
      tg = await openGateway({
        db: url,
        executor: demoExecutor().register('test.echo', (a) => ({ status: 'ok', echo: a })),
      });
      await tg.config.apply(
        [
          validTool({
            id: 'invoices',
            name: 'invoices',
            data_access: 'public',
            runtime: { kind: 'inline', handler: 'test.echo' },
          }),
        ].map((spec) => ({ kind: 'Tool', spec })),
        admin,
      );
    });

    after(async () => {
      await tg.close();
      await drop();
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    });

    async function agentWithSession(id: string) {
      await tg.config.apply(
        [
          { kind: 'Agent', spec: { id, owner: 'qa' } },
          { kind: 'Grant', spec: { agent: id, capabilities: ['billing:read'] } },
        ],
        admin,
      );
      const session = await tg.sessions.open(id);
      const ctx = { agentId: id, sessionId: session.id };
      const call = () => tg.gate.invoke(ctx, 'invoices', { invoice: 'INV-1' });
      // Warm the cache: the identity is now held in memory.
      assert.equal((await call()).kind, 'allow');
      assert.equal((await call()).kind, 'allow');
      return { ctx, call };
    }

    test('a grant revoked in this process stops the very next call', async () => {
      const { call } = await agentWithSession('local-revoke');
      await tg.agents.revoke('local-revoke', ['billing:read'], admin);
      const d = await call();
      assert.equal(d.kind, 'deny');
      if (d.kind === 'deny') assert.equal(d.code, 'GRANT_MISSING');
    });

    test('a session closed in this process is gone for the very next call', async () => {
      const { ctx, call } = await agentWithSession('local-close');
      await tg.sessions.close(ctx.sessionId, ctx.agentId);
      await assert.rejects(call(), { code: 'SESSION_NOT_FOUND' });
    });

    test('a grant revoked by another process stops calls within the polling interval', async () => {
      const { call } = await agentWithSession('remote-revoke');
      await cli(['--db', url, 'grants', 'remove', 'remote-revoke', 'billing:read']);
      const { decision, afterMs } = await untilDenied(call, 2_000);
      assert.equal(decision.kind, 'deny', 'the revoked grant still works after 2 s');
      if (decision.kind === 'deny') assert.equal(decision.code, 'GRANT_MISSING');
      assert.ok(afterMs < 1_000, `took ${afterMs} ms`);
    });

    test('an agent disabled by another process stops calls within the polling interval', async () => {
      const { call } = await agentWithSession('remote-disable');
      const file = join(dir, 'disable.yaml');
      writeFileSync(
        file,
        'kind: Agent\nspec:\n  id: remote-disable\n  owner: qa\n  enabled: false\n',
      );
      await cli(['--db', url, 'apply', '-f', file]);
      const { decision, afterMs } = await untilDenied(call, 2_000);
      assert.equal(decision.kind, 'deny', 'the disabled agent still calls after 2 s');
      if (decision.kind === 'deny') assert.equal(decision.code, 'AGENT_NOT_FOUND');
      assert.ok(afterMs < 1_000, `took ${afterMs} ms`);
    });

    test('the benign neighbour: an unrelated agent keeps calling after those changes', async () => {
      const { call } = await agentWithSession('bystander');
      await cli(['--db', url, 'grants', 'remove', 'remote-revoke', 'billing:read']);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal((await call()).kind, 'allow');
    });
  });
}
