/**
 * @module @modelcontextprotocol/server-everything (from npm) as an upstream provider, run over stdio
 * inside the namespace sandbox: its tools are imported pinned and unoffered, offered once
 * classified, and called through the whole gate — echo, get-sum, the long-running operation, an
 * error result, structured content — and get-env shows only the sandbox's environment, none of
 * the gateway's. Runs against SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { upstreamResult } from '../../src/edge/mcp/index.js';
import type { GateDecision } from '../../src/gate/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { classifyReviewed } from '../support/reviews.js';
import { openWorld, type World } from '../support/world.js';
import { EVERYTHING, nodeProvider, READ_PUBLIC } from './provider-support.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
// Set in the gateway's own process: it must never reach an upstream.
const CANARY = 'TOOLGATE_PROVIDER_TEST_CANARY';
process.env[CANARY] = 'gateway-secret-value-7f3a9c';

function textOf(decision: GateDecision): string {
  assert.equal(decision.kind, 'allow', JSON.stringify(decision));
  if (decision.kind !== 'allow') return '';
  const content = upstreamResult(decision)?.content ?? [];
  return content.map((c) => String(c.text ?? '')).join('\n');
}

for (const backend of backends()) {
  describe(`server-everything as a provider (${backend.name})`, () => {
    let tg: Gateway;
    let world: World;
    let sessionId: string;
    const ctx = () => ({ agentId: 'ev-bot', sessionId });

    before(async () => {
      world = await openWorld({ backend });
      tg = world.tg;
      await tg.config.apply(
        [
          {
            kind: 'Agent',
            spec: {
              id: 'ev-bot',
              display_name: 'Everything agent',
              description: 'Calls the everything provider.',
              owner: 'platform-team',
            },
          },
          { kind: 'Grant', spec: { agent: 'ev-bot', capabilities: ['everything:use'] } },
        ],
        admin,
      );
    });

    after(async () => {
      await world.close();
    });

    test('registration imports every tool pinned, scanned and unoffered until classified', async () => {
      const { action, refresh } = await tg.providers.register(
        nodeProvider('everything', EVERYTHING, ['stdio']),
        admin,
      );
      assert.equal(action, 'create');
      for (const name of ['echo', 'get-sum', 'get-env', 'trigger-long-running-operation']) {
        assert.ok(refresh.imported.includes(name), `${name} imported`);
      }
      const view = await tg.providers.show('everything');
      const echo = view.tools.find((t) => t.name === 'echo');
      assert.equal(echo?.state, 'unclassified');
      assert.match(echo?.pin_hash ?? '', /^sha256:[0-9a-f]{64}$/);
      assert.equal(echo?.tool_id, 'everything.echo');
      // Nothing is offered, and a call by name is refused as unknown.
      const session = await tg.sessions.open('ev-bot');
      sessionId = session.id;
      assert.deepEqual(session.tools, []);
      const refused = await tg.gate.invoke(ctx(), 'echo', { message: 'hi' });
      assert.equal(refused.kind, 'deny');
      assert.equal(refused.kind === 'deny' && refused.code, 'TOOL_NOT_REGISTERED');
      assert.equal(tg.providers.liveProcesses, 0);
    });

    test('classified tools are offered and their calls go through the gate to the upstream', async () => {
      for (const tool of [
        'echo',
        'get-sum',
        'get-env',
        'trigger-long-running-operation',
        'gzip-file-as-resource',
        'get-structured-content',
      ]) {
        const { tool: detail } = await classifyReviewed(
          tg,
          'everything',
          tool,
          { ...READ_PUBLIC, wall_time_ms: 8000 },
          admin,
        );
        assert.equal(detail.quarantined, false, `${tool}: ${JSON.stringify(detail.findings)}`);
        assert.equal(detail.lifecycle, 'active');
        assert.equal(detail.definition.runtime.kind, 'mcp');
        assert.equal(detail.definition.provenance, 'third_party');
      }
      const session = await tg.sessions.open('ev-bot');
      sessionId = session.id;
      assert.deepEqual(session.tools.map((t) => t.name).sort(), [
        'echo',
        'get-env',
        'get-structured-content',
        'get-sum',
        'gzip-file-as-resource',
        'trigger-long-running-operation',
      ]);
      assert.equal(
        textOf(await tg.gate.invoke(ctx(), 'echo', { message: 'hello' })),
        'Echo: hello',
      );
      assert.match(textOf(await tg.gate.invoke(ctx(), 'get-sum', { a: 2, b: 40 })), /\b42\b/);
      // One process for this session, kept alive between calls.
      assert.equal(tg.providers.liveProcesses, 1);
    });

    test('a retry under the same idempotency key replays the upstream result, not a second call', async () => {
      const first = await tg.gate.invoke(
        ctx(),
        'echo',
        { message: 'once' },
        { idempotencyKey: 'k-1' },
      );
      const again = await tg.gate.invoke(
        ctx(),
        'echo',
        { message: 'once' },
        { idempotencyKey: 'k-1' },
      );
      assert.equal(textOf(again), 'Echo: once');
      assert.equal(first.callId, again.callId);
    });

    test('the gate checks arguments before the upstream sees them', async () => {
      const bad = await tg.gate.invoke(ctx(), 'get-sum', { a: 'two', b: 40 });
      assert.equal(bad.kind, 'deny');
      assert.equal(bad.kind === 'deny' && bad.code, 'INPUT_INVALID');
      const smuggled = await tg.gate.invoke(ctx(), 'echo', { message: 'x', extra: 1 });
      assert.equal(smuggled.kind === 'deny' && smuggled.code, 'INPUT_INVALID');
    });

    test('the long-running operation completes within its wall time', async () => {
      const text = textOf(
        await tg.gate.invoke(ctx(), 'trigger-long-running-operation', { duration: 1, steps: 2 }),
      );
      assert.match(text, /Long running operation completed/);
    });

    test('an upstream error result comes back as an error result, and nothing leaves the sandbox', async () => {
      const decision = await tg.gate.invoke(ctx(), 'gzip-file-as-resource', {
        name: 'x.gz',
        data: 'https://example.com/never-fetched',
        outputType: 'resource',
      });
      assert.equal(decision.kind, 'allow');
      assert.equal(decision.kind === 'allow' && upstreamResult(decision)?.isError, true);
    });

    test('structured content is checked against the output schema and passed on', async () => {
      const decision = await tg.gate.invoke(ctx(), 'get-structured-content', {
        location: 'Chicago',
      });
      assert.equal(decision.kind, 'allow', JSON.stringify(decision));
      assert.equal(
        typeof decision.kind === 'string' &&
          decision.kind === 'allow' &&
          typeof upstreamResult(decision)?.structuredContent,
        'object',
      );
    });

    test("get-env shows only the sandbox's environment, none of the gateway's", async () => {
      const text = textOf(await tg.gate.invoke(ctx(), 'get-env', {}));
      const env = JSON.parse(text) as Record<string, string>;
      assert.equal(process.env[CANARY], 'gateway-secret-value-7f3a9c');
      assert.equal(env[CANARY], undefined);
      assert.ok(!text.includes('gateway-secret-value'));
      for (const name of Object.keys(env)) {
        assert.ok(['PATH', 'HOME', 'TMPDIR', 'LANG', 'PWD'].includes(name), `unexpected ${name}`);
      }
      assert.equal(env.HOME, '/tmp');
      assert.ok(!text.includes('TOOLGATE_TEST_PG_URL'));
    });

    test('every forwarded call is audited with its outcome', async () => {
      const events = await tg.events.list({ subject: 'provider:everything', limit: 50 });
      assert.ok(events.some((e) => e.action === 'provider.registered'));
      assert.ok(events.some((e) => e.action === 'provider.refreshed'));
    });

    test('closing the session ends its upstream process', async () => {
      assert.equal(tg.providers.liveProcesses, 1);
      await tg.sessions.close(sessionId, 'ev-bot');
      for (let i = 0; i < 50 && tg.providers.liveProcesses > 0; i += 1) {
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(tg.providers.liveProcesses, 0);
    });
  });
}
