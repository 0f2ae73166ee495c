/**
 * @module Upstream processes under trouble, with a misbehaving MCP server of ours
 * (test/fixtures/mcp/flaky-server.mjs): a process that exits mid-call fails that call and is
 * started again on the next; a call that hangs times out at the tool's wall time with
 * SANDBOX_TIMEOUT; meanwhile another session's calls keep working. Two agents with different
 * grants see and call only their own provider tools. The number of live processes is capped.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { upstreamResult } from '../../src/edge/mcp/index.js';
import type { GateDecision } from '../../src/gate/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { classifyReviewed } from '../support/reviews.js';
import { EVERYTHING, FIXTURES, nodeProvider, publicRead } from './provider-support.js';

const admin: Actor = { id: 'test-admin', via: 'library' };

function textOf(decision: GateDecision): string {
  assert.equal(decision.kind, 'allow', JSON.stringify(decision));
  if (decision.kind !== 'allow') return '';
  return (upstreamResult(decision)?.content ?? []).map((c) => String(c.text ?? '')).join('\n');
}

const classification = (caps: string[], wall = 1500) => publicRead(caps, { wall_time_ms: wall });

describe('upstream crash, hang and isolation between sessions', () => {
  let tg: Gateway;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'toolgate-flaky-'));
    tg = await openGateway({ db: `sqlite:${join(dir, 'tg.db')}`, providers: { maxLive: 6 } });
    const agent = (id: string) => ({
      kind: 'Agent',
      spec: { id, display_name: id, description: `The ${id} agent.`, owner: 'platform-team' },
    });
    await tg.config.apply(
      [
        agent('alpha'),
        agent('beta'),
        { kind: 'Grant', spec: { agent: 'alpha', capabilities: ['flaky:use', 'everything:use'] } },
        { kind: 'Grant', spec: { agent: 'beta', capabilities: ['flaky:use', 'sums:use'] } },
      ],
      admin,
    );
    await tg.providers.register(
      nodeProvider('flaky', join(FIXTURES, 'flaky-server.mjs'), [], {
        binds: [{ source: FIXTURES }],
      }),
      admin,
    );
    for (const tool of ['ping', 'crash', 'hang']) {
      await classifyReviewed(tg, 'flaky', tool, classification(['flaky:use']), admin);
    }
    await tg.providers.register(nodeProvider('everything', EVERYTHING, ['stdio']), admin);
    await classifyReviewed(
      tg,
      'everything',
      'echo',
      classification(['everything:use'], 5000),
      admin,
    );
    await classifyReviewed(tg, 'everything', 'get-sum', classification(['sums:use'], 5000), admin);
  });

  after(async () => {
    await tg.close();
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });

  test('two agents with different grants see and call only their own provider tools', async () => {
    const alpha = await tg.sessions.open('alpha');
    const beta = await tg.sessions.open('beta');
    assert.deepEqual(alpha.tools.map((t) => t.name).sort(), ['crash', 'echo', 'hang', 'ping']);
    assert.deepEqual(beta.tools.map((t) => t.name).sort(), ['crash', 'get-sum', 'hang', 'ping']);
    const a = { agentId: 'alpha', sessionId: alpha.id };
    const b = { agentId: 'beta', sessionId: beta.id };
    assert.equal(textOf(await tg.gate.invoke(a, 'echo', { message: 'a' })), 'Echo: a');
    assert.match(textOf(await tg.gate.invoke(b, 'get-sum', { a: 1, b: 2 })), /\b3\b/);
    const crossA = await tg.gate.invoke(a, 'get-sum', { a: 1, b: 2 });
    assert.equal(crossA.kind === 'deny' && crossA.code, 'TOOL_NOT_REGISTERED');
    const crossB = await tg.gate.invoke(b, 'echo', { message: 'b' });
    assert.equal(crossB.kind === 'deny' && crossB.code, 'TOOL_NOT_REGISTERED');
    // Each session has its own process of a provider both use.
    const pa = textOf(await tg.gate.invoke(a, 'ping', { n: 1 }));
    const pb = textOf(await tg.gate.invoke(b, 'ping', { n: 1 }));
    assert.notEqual(pa.split(' ')[2], pb.split(' ')[2]);
    await tg.sessions.close(alpha.id, 'alpha');
    await tg.sessions.close(beta.id, 'beta');
  });

  test('an upstream that exits mid-call fails that call and is restarted on the next', async () => {
    const s = await tg.sessions.open('alpha');
    const ctx = { agentId: 'alpha', sessionId: s.id };
    const first = textOf(await tg.gate.invoke(ctx, 'ping', { n: 1 })).split(' ')[2];
    const crashed = await tg.gate.invoke(ctx, 'crash', {});
    assert.equal(crashed.kind, 'deny');
    assert.equal(crashed.kind === 'deny' && crashed.code, 'EXECUTION_FAILED');
    assert.equal(crashed.kind === 'deny' && crashed.rule, 'provider.exited');
    const again = textOf(await tg.gate.invoke(ctx, 'ping', { n: 2 }));
    assert.match(again, /^pong 2 /);
    assert.notEqual(again.split(' ')[2], first, 'a new process answered');
    await tg.sessions.close(s.id, 'alpha');
  });

  test("a hung call times out at the tool's wall time without holding another session", async () => {
    const hung = await tg.sessions.open('alpha');
    const other = await tg.sessions.open('beta');
    const h = { agentId: 'alpha', sessionId: hung.id };
    const o = { agentId: 'beta', sessionId: other.id };
    // Warm both processes so the timings below are the calls' own.
    textOf(await tg.gate.invoke(h, 'ping', { n: 0 }));
    textOf(await tg.gate.invoke(o, 'ping', { n: 0 }));
    const started = performance.now();
    const hanging = tg.gate.invoke(h, 'hang', {});
    const others: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const t0 = performance.now();
      assert.match(textOf(await tg.gate.invoke(o, 'ping', { n: i })), /^pong/);
      others.push(performance.now() - t0);
    }
    const decision = await hanging;
    const took = performance.now() - started;
    assert.equal(decision.kind, 'deny');
    assert.equal(decision.kind === 'deny' && decision.code, 'SANDBOX_TIMEOUT');
    assert.ok(took >= 1400 && took < 5000, `timed out after ${took} ms`);
    assert.ok(Math.max(...others) < 1000, `other session's calls took ${others.join(', ')} ms`);
    // The hung session's next call gets a fresh process.
    assert.match(textOf(await tg.gate.invoke(h, 'ping', { n: 9 })), /^pong 9/);
    await tg.sessions.close(hung.id, 'alpha');
    await tg.sessions.close(other.id, 'beta');
  });

  test('live upstream processes are capped; the least recently used idle one gives way', async () => {
    const sessions = [];
    for (let i = 0; i < 8; i += 1) {
      const s = await tg.sessions.open('alpha');
      sessions.push(s);
      textOf(await tg.gate.invoke({ agentId: 'alpha', sessionId: s.id }, 'ping', { n: i }));
      assert.ok(tg.providers.liveProcesses <= 6, `${tg.providers.liveProcesses} live`);
    }
    // The first session's process was closed for room; its next call starts one again.
    const first = sessions[0];
    assert.ok(first);
    assert.match(
      textOf(await tg.gate.invoke({ agentId: 'alpha', sessionId: first.id }, 'ping', { n: 42 })),
      /^pong 42/,
    );
    for (const s of sessions) await tg.sessions.close(s.id, 'alpha');
  });
});
