/**
 * In the default configuration no limit or budget starts afresh with a new session or run, on
 * every backend: an agent that configures no ceiling windows gets one day window per (agent,
 * user) holding DEFAULT_SESSION_BUDGETS_PER_DAY sessions' worth of each session budget, and a
 * tool's `per_run` limit holds RUNS_PER_DAY runs' worth a day. Benign neighbours: another agent
 * keeps its own allowance, and an agent that sets `windows: []` opts out on purpose.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { DEFAULT_SESSION_BUDGETS_PER_DAY } from '../../src/domain/limits/index.js';
import { RUNS_PER_DAY } from '../../src/domain/limits/limits.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import type { GateDecision } from '../../src/gate/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { approvePendingReviews } from '../support/reviews.js';
import { validTool } from '../support/tools.js';
import { openWorld, type World } from '../support/world.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const ruleOf = (d: GateDecision) => (d.kind === 'deny' ? `${d.code} ${d.rule}` : d.kind);

for (const backend of backends()) {
  describe(`default ceilings across sessions (${backend.name})`, () => {
    let tg: Gateway;
    let world: World;
    const now = new Date('2026-06-01T10:00:00Z');

    before(async () => {
      world = await openWorld({
        backend,
        options: {
          clock: () => now,
          executor: demoExecutor().register('t.ok', () => ({ status: 'ok' })),
        },
      });
      tg = world.tg;
      const tool = (id: string, extra: Record<string, unknown>) => ({
        kind: 'Tool',
        spec: validTool({
          id,
          name: id,
          data_access: 'none',
          required_capabilities: ['pay:send'],
          runtime: { kind: 'inline', handler: 't.ok' },
          ...extra,
        }),
      });
      const agent = (id: string, extra: Record<string, unknown> = {}) => [
        { kind: 'Agent', spec: { id, owner: 'qa', budgets: { spend_cents: 10 }, ...extra } },
        { kind: 'Grant', spec: { agent: id, capabilities: ['pay:send'] } },
      ];
      await tg.config.apply(
        [
          tool('quote', { cost: { fixed_cents: 10 } }),
          tool('lookup', { rate_limit: { per_run: 1 } }),
          ...agent('buyer'),
          ...agent('other'),
          ...agent('opted_out', { ceilings: { windows: [] } }),
        ],
        admin,
      );
      await approvePendingReviews(tg.admin);
    });
    after(async () => {
      await world.close();
    });

    async function inNewSession(agentId: string, tool: string) {
      const s = await tg.sessions.open(agentId);
      return ruleOf(await tg.gate.invoke({ agentId, sessionId: s.id }, tool, { invoice: 'I-1' }));
    }

    test("a session's spend budget does not start afresh in every new session", async () => {
      for (let i = 0; i < DEFAULT_SESSION_BUDGETS_PER_DAY; i++) {
        assert.equal(await inNewSession('buyer', 'quote'), 'allow', `session ${i}`);
      }
      assert.equal(await inNewSession('buyer', 'quote'), 'BUDGET_EXCEEDED ceiling.spend_cents');
      // Its neighbours: another agent has its own day; an agent that opted out is per session.
      assert.equal(await inNewSession('other', 'quote'), 'allow');
      for (let i = 0; i <= DEFAULT_SESSION_BUDGETS_PER_DAY; i++) {
        assert.equal(await inNewSession('opted_out', 'quote'), 'allow', `session ${i}`);
      }
    });

    test("a tool's per-run limit does not start afresh in every new run", async () => {
      for (let i = 0; i < RUNS_PER_DAY; i++) {
        assert.equal(await inNewSession('buyer', 'lookup'), 'allow', `run ${i}`);
      }
      assert.equal(await inNewSession('buyer', 'lookup'), 'RATE_LIMITED rate.per_run_daily');
      assert.equal(await inNewSession('other', 'lookup'), 'allow');
    });
  });
}
