/**
 * A shared tool's circuit breaker is not one caller's to open (C14, docs/security-model.md
 * "Shared slots, streams and breakers"), over REST with real agents and API keys: an agent whose
 * calls fail on purpose (its arguments make the tool crash), through one key or several, fails
 * only its own calls — another agent's call still runs and the tool stays offered and healthy —
 * while a tool that fails for several callers is unavailable to everyone (503 TOOL_UNAVAILABLE,
 * nothing run). Half-open, a trial that one caller fails on purpose does not keep the tool away:
 * the next caller's trial closes it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Actor } from '../../src/core/index.js';
import { buildServer } from '../../src/edge/rest/index.js';
import { InlineExecutor } from '../../src/execution/runtimes/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { validTool } from '../support/tools.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const ADMIN_TOKEN = 'breaker-test-admin-token-0123456789abcdef';
const AGENTS = ['mallory', 'alice', 'bob'] as const;
const TOOL = 'shared_lookup';

describe('a shared breaker needs more than one caller', () => {
  let dir: string;
  let tg: Gateway;
  let app: FastifyInstance;
  let base: string;
  /** The upstream is down for everyone while set; `CRASH` arguments fail only those calls. */
  let down = false;
  let runs = 0;
  const keys: Record<string, string[]> = {};
  const sessions: Record<string, string> = {};

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'toolgate-health-callers-'));
    const executor = new InlineExecutor().register('test.shared', async (args) => {
      runs += 1;
      if (down || (args as { invoice?: string }).invoice === 'CRASH')
        throw new Error('the tool exited with code 3');
      return { status: 'ok' };
    });
    tg = await openGateway({
      db: `sqlite:${join(dir, 'tg.db')}`,
      executor,
      health: { breakerFailures: 3, breakerOpenMs: 200, tickMs: 20 },
    });
    await tg.config.apply(
      [
        {
          kind: 'Tool',
          spec: validTool({
            id: TOOL,
            name: TOOL,
            data_access: 'public',
            runtime: { kind: 'inline', handler: 'test.shared' },
          }),
        },
        ...AGENTS.flatMap((id) => [
          { kind: 'Agent', spec: { id, owner: 'qa' } },
          { kind: 'Grant', spec: { agent: id, capabilities: ['billing:read'] } },
        ]),
      ],
      admin,
    );
    await tg.health.sync();
    for (const id of AGENTS) {
      // Mallory holds four keys: one principal however many credentials it presents.
      const n = id === 'mallory' ? 4 : 1;
      keys[id] = [];
      for (let i = 0; i < n; i++) keys[id].push((await tg.keys.issue(id, admin)).apiKey);
    }
    app = await buildServer(tg, { adminToken: ADMIN_TOKEN });
    base = await app.listen({ host: '127.0.0.1', port: 0 });
    for (const id of AGENTS) {
      for (const [i, key] of (keys[id] ?? []).entries()) {
        const res = await fetch(`${base}/v1/sessions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: '{}',
        });
        assert.equal(res.status, 201);
        sessions[`${id}/${i}`] = ((await res.json()) as { id: string }).id;
      }
    }
  });

  after(async () => {
    await app.close();
    await tg.close();
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });

  async function call(agent: string, invoice: string, keyIndex = 0) {
    const key = keys[agent]?.[keyIndex];
    const res = await fetch(`${base}/v1/sessions/${sessions[`${agent}/${keyIndex}`]}/calls`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tool: TOOL, arguments: { invoice } }),
    });
    const body = (await res.json()) as { code?: string; details?: { rule?: string } };
    return { status: res.status, code: body.code ?? null, rule: body.details?.rule ?? null };
  }

  const breaker = () => tg.health.status(TOOL, '1.0.0').breaker;
  const state = () => tg.health.healthOf(TOOL, '1.0.0').state;

  /** Bounded polling for a monitor condition (the breaker half-opens on the monitor's tick). */
  async function until(what: () => boolean, label: string) {
    for (let i = 0; i < 500 && !what(); i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(what(), `timed out waiting for ${label}`);
  }

  test("one agent's failing calls, through one key or four, never stop another agent's calls", async () => {
    assert.equal((await call('alice', 'INV-1')).status, 200);
    // Attack: twelve calls that crash on purpose, spread over the agent's four credentials.
    for (let i = 0; i < 12; i++) {
      const r = await call('mallory', 'CRASH', i % 4);
      assert.deepEqual([r.status, r.code], [502, 'EXECUTION_FAILED'], `crash ${i}`);
    }
    assert.equal(breaker(), 'closed');
    assert.equal(state(), 'healthy', "one caller's failures do not lower the tool's score");
    // Benign neighbour: another agent's call runs.
    const before = runs;
    assert.deepEqual(await call('alice', 'INV-2'), { status: 200, code: null, rule: null });
    assert.equal(runs, before + 1);
    // The attacker's own well-formed call runs too: it was never locked out either.
    assert.equal((await call('mallory', 'INV-3')).status, 200);
  });

  test('a tool that fails for several callers is unavailable to everyone; it half-opens and closes', async () => {
    down = true;
    assert.equal((await call('mallory', 'INV-4')).code, 'EXECUTION_FAILED');
    assert.equal((await call('mallory', 'INV-5', 1)).code, 'EXECUTION_FAILED');
    assert.equal(breaker(), 'closed', 'two failures of one caller are not enough');
    assert.equal((await call('alice', 'INV-6')).code, 'EXECUTION_FAILED');
    assert.equal(breaker(), 'open', 'failures of two callers open it');
    assert.equal(state(), 'unavailable');
    const before = runs;
    assert.deepEqual(await call('bob', 'INV-7'), {
      status: 503,
      code: 'TOOL_UNAVAILABLE',
      rule: 'health.circuit_open',
    });
    assert.equal(runs, before, 'refused fast: nothing ran');

    // Half-open, the attacker takes the trial and fails it on purpose: the tool is not taken away
    // again for that, and the attacker gets no second trial.
    down = false;
    await until(() => breaker() === 'half_open', 'half-open');
    assert.equal((await call('mallory', 'CRASH')).code, 'EXECUTION_FAILED');
    assert.equal(breaker(), 'half_open');
    assert.equal((await call('mallory', 'INV-8')).code, 'TOOL_UNAVAILABLE');
    // Another caller's trial succeeds and closes it for everyone.
    assert.equal((await call('bob', 'INV-9')).status, 200);
    assert.equal(breaker(), 'closed');
    assert.equal((await call('mallory', 'INV-10')).status, 200);
  });

  test('half-open, failed trials of several callers open it again', async () => {
    down = true;
    for (const [agent, key] of [
      ['alice', 0],
      ['mallory', 2],
      ['bob', 0],
    ] as const)
      assert.equal((await call(agent, 'INV-11', key)).code, 'EXECUTION_FAILED');
    assert.equal(breaker(), 'open');
    await until(() => breaker() === 'half_open', 'half-open');
    assert.equal((await call('mallory', 'INV-12')).code, 'EXECUTION_FAILED');
    assert.equal(breaker(), 'half_open', "one caller's failed trial is its own");
    assert.equal((await call('alice', 'INV-13')).code, 'EXECUTION_FAILED');
    assert.equal(breaker(), 'open', 'a second caller confirms it: open for everyone again');
    assert.equal((await call('bob', 'INV-14')).code, 'TOOL_UNAVAILABLE');
    down = false;
  });
});
