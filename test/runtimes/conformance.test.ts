/**
 * The one conformance suite of the tool-runtime port (docs/architecture.md §4), run against every
 * runtime: inline; command in the process, namespace (bubblewrap) and gvisor (runsc) drivers;
 * http against a real HTTPS server on 127.0.0.1 under the real egress rules; mcp over the real
 * upstream pool with the repo's flaky fixture server as its upstream. A rule that cannot apply to
 * a runtime is skipped by name, with the reason (and, where another layer guarantees it, which
 * one). Last, the layer above every runtime: the gate's result step, with a real gateway.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ERROR_CODES } from '../../src/core/index.js';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { InlineExecutor, type RuntimeResult } from '../../src/execution/runtimes/index.js';
import { createByteBudget } from '../../src/execution/sandbox/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { validTool } from '../support/tools.js';
import { openWorld, type World } from '../support/world.js';
import {
  type Case,
  commandHarness,
  contextFor,
  hasBwrap,
  hasGvisor,
  httpHarness,
  inlineHarness,
  mcpHarness,
  OUTPUT_BYTES,
  type RuntimeHarness,
  type Scenario,
  SECRET,
  startApi,
  type TestApi,
  WALL_MS,
} from './harness.js';

const CATALOGUE = new Set<string>(Object.keys(ERROR_CODES));
const NO_BWRAP = 'bubblewrap is not available on this host';

interface Entry {
  readonly name: string;
  /** Why the whole runtime is skipped here, or null. */
  readonly unavailable: string | null;
  open(): Promise<RuntimeHarness>;
}

let api: TestApi;
before(async () => {
  api = await startApi();
});
after(async () => {
  await api.close();
});

const ENTRIES: readonly Entry[] = [
  { name: 'inline', unavailable: null, open: async () => inlineHarness() },
  { name: 'command/process', unavailable: null, open: async () => commandHarness('process', api) },
  {
    name: 'command/namespace',
    unavailable: hasBwrap ? null : NO_BWRAP,
    open: async () => commandHarness('namespace', api),
  },
  {
    name: 'command/gvisor',
    unavailable: hasGvisor ? null : 'gVisor (runsc) is not available on this host',
    open: async () => commandHarness('gvisor', api),
  },
  { name: 'http', unavailable: null, open: async () => httpHarness(api) },
  { name: 'mcp', unavailable: hasBwrap ? null : NO_BWRAP, open: () => mcpHarness() },
];

/** Runs a case; a rejection fails the rule "never throws" wherever it happens. */
async function run(h: RuntimeHarness, c: Case, budget = createByteBudget(1_000_000)) {
  const result: RuntimeResult = await h.runtime.run(c.def, c.args, contextFor(c, { budget }));
  return { result, budget };
}

/** The scenario's case, or a named skip with the harness's reason. */
function caseOr(t: { skip(reason: string): void }, h: RuntimeHarness, s: Scenario): Case | null {
  const c = h.tool(s);
  if (typeof c === 'string') {
    t.skip(`${s}: ${c}`);
    return null;
  }
  return c;
}

function failure(r: RuntimeResult): Extract<RuntimeResult, { ok: false }> {
  assert.equal(r.ok, false, `expected a failure, got ${JSON.stringify(r).slice(0, 300)}`);
  if (r.ok) throw new Error('unreachable');
  assert.ok(CATALOGUE.has(r.code), `${r.code} is in the error catalogue`);
  assert.equal(typeof r.rule, 'string');
  assert.equal(typeof r.message, 'string');
  return r;
}

for (const entry of ENTRIES) {
  describe(`tool runtime conformance: ${entry.name}`, { skip: entry.unavailable ?? false }, () => {
    let h: RuntimeHarness;
    before(async () => {
      h = await entry.open();
    });
    after(async () => {
      await h?.close();
    });

    test('runs a tool and reports its result', async () => {
      const c = h.tool('ok');
      assert.notEqual(typeof c, 'string', 'every runtime runs a plain tool');
      const { result } = await run(h, c as Case);
      assert.equal(result.ok, true, JSON.stringify(result));
      assert.equal(h.runtime.kind, (c as Case).def.runtime.kind);
    });

    test('never throws: a failing or crashing tool gives a typed failure', async (t) => {
      const c = caseOr(t, h, 'crash');
      if (!c) return;
      const { result } = await run(h, c);
      const f = failure(result);
      assert.notEqual(f.rule, 'result.schema');
      // A definition of a kind this runtime does not run is refused as a result, not thrown.
      const foreign: Case = {
        def: {
          ...c.def,
          runtime:
            h.runtime.kind === 'inline'
              ? { kind: 'command', argv: ['/bin/true'] }
              : { kind: 'inline', handler: 'conf.ok' },
        },
        args: {},
      };
      failure((await run(h, foreign)).result);
    });

    test('honours its wall time', async (t) => {
      const c = caseOr(t, h, 'hang');
      if (!c) return;
      // Warm first (an upstream process starts once per session): the wall time is the call's.
      const ok = h.tool('ok');
      if (typeof ok !== 'string') await run(h, ok);
      const started = performance.now();
      const { result } = await run(h, c);
      const took = performance.now() - started;
      const f = failure(result);
      assert.match(f.rule, /timeout/, `${f.rule}: ${f.message}`);
      assert.ok(took >= WALL_MS - 50, `waited its wall time (${Math.round(took)} ms)`);
      // Generous for a loaded machine, far below the 30 s the tool would otherwise take.
      assert.ok(took < WALL_MS + 6_000, `stopped near its wall time (${Math.round(took)} ms)`);
    });

    test('charges egress bytes to the budget, and stops when it is spent', async (t) => {
      const c = caseOr(t, h, 'egress');
      if (!c) return;
      const { result, budget } = await run(h, c);
      assert.equal(result.ok, true, JSON.stringify(result));
      const egress = result.egress;
      assert.ok(egress, 'the run reports its egress');
      assert.ok(egress.bytesOut > 0 && egress.bytesIn > 0, JSON.stringify(egress));
      assert.equal(budget.spent(), egress.bytesOut + egress.bytesIn);

      const tiny = createByteBudget(40);
      const spent = await run(h, c, tiny);
      assert.ok(tiny.spent() <= 40, `never past the budget (${tiny.spent()})`);
      const r = spent.result;
      // Refused by the runtime (BUDGET_EXCEEDED), or, for a sandboxed tool the proxy answers,
      // whatever the tool made of the refusal, with the refusal in the run's egress record.
      const refused = !r.ok && r.code === 'BUDGET_EXCEEDED';
      assert.ok(
        refused || r.egress?.denials.some((d) => d.rule === 'egress.budget'),
        JSON.stringify(r),
      );
    });

    test('never echoes a credential: no failure or audit field carries it', async (t) => {
      // A failure's message, rule and audit fields reach the caller and the audit record as they
      // are; only a successful output is scrubbed after the run: the gate's result step, tested
      // below ('scrubs a credential a tool echoes') and in test/gate/execute-egress.test.ts.
      let ran = 0;
      for (const s of ['crash', 'garbage', 'echo_credential'] as const) {
        const c = h.tool(s);
        if (typeof c === 'string' || !c.credentials) continue;
        ran += 1;
        const { result } = await run(h, c);
        const { output, ...rest } = result as RuntimeResult & { output?: unknown };
        assert.ok(!JSON.stringify(rest).includes(SECRET), `${s}: ${JSON.stringify(rest)}`);
        if (h.runtime.kind === 'inline' || h.runtime.kind === 'mcp') {
          // These runtimes never hand the credential to the tool: it cannot come back.
          assert.ok(!JSON.stringify(output ?? null).includes(SECRET), `${s} output`);
        }
      }
      if (ran === 0) t.skip('no scenario of this runtime is handed a credential');
    });

    test('caps output', async (t) => {
      const c = caseOr(t, h, 'flood');
      if (!c) return;
      const { result } = await run(h, c);
      const f = failure(result);
      assert.ok(['SANDBOX_LIMIT', 'OUTPUT_INVALID'].includes(f.code), `${f.code} ${f.rule}`);
      assert.ok(f.bytes <= OUTPUT_BYTES * 2, `what was kept is bounded (${f.bytes})`);
    });

    test('reports a distinct outcome per failure', async (t) => {
      const seen = new Map<string, string>();
      const skipped: string[] = [];
      for (const s of ['crash', 'hang', 'flood', 'garbage', 'egress_refused'] as const) {
        const c = h.tool(s);
        if (typeof c === 'string') {
          skipped.push(s);
          continue;
        }
        const { result } = await run(h, c);
        let label: string;
        if (result.ok) {
          // Refused egress of a sandboxed tool is answered to the tool and recorded in the run.
          const denial = result.egress?.denials[0];
          assert.ok(denial, `${s} neither failed nor recorded a refusal`);
          label = `denied:${denial.rule}`;
        } else {
          label = failure(result).outcome ?? result.rule;
          assert.ok(!result.rule.includes(SECRET));
        }
        for (const [other, was] of seen) {
          assert.notEqual(label, was, `${s} and ${other} end alike (${label})`);
        }
        seen.set(s, label);
      }
      if (seen.size < 2)
        t.skip(`fewer than two failure kinds here (skipped: ${skipped.join(', ')})`);
    });
  });
}

describe('the layer above every runtime: the gate result step', () => {
  let tg: Gateway;
  let world: World;
  let ctx: { agentId: string; sessionId: string };
  const actor = { id: 'conformance-admin', via: 'library' } as const;

  before(async () => {
    const [sqlite] = backends();
    if (!sqlite) throw new Error('no sqlite backend');
    const executor = new InlineExecutor().register('conf.big', () => ({
      blob: 'b'.repeat(OUTPUT_BYTES * 2),
    }));
    world = await openWorld({
      backend: sqlite,
      options: { executor, detectors: false, masterKey: MasterKey.generate() },
    });
    tg = world.tg;
    const tool = (id: string, spec: Record<string, unknown>) => ({
      kind: 'Tool',
      spec: validTool({
        id,
        name: id,
        description: 'A tool of the runtime conformance suite.',
        data_access: 'none',
        required_capabilities: ['conf:use'],
        input_schema: { type: 'object', additionalProperties: false, properties: {} },
        output_schema: { type: 'object' },
        ...spec,
      }),
    });
    await tg.config.apply(
      [
        tool('big_result', {
          runtime: { kind: 'inline', handler: 'conf.big' },
          sandbox: {
            isolation: 'none',
            limits: { wall_time_ms: WALL_MS, output_bytes: OUTPUT_BYTES },
          },
        }),
        tool('echo_token', {
          runtime: {
            kind: 'command',
            argv: ['/bin/sh', '-c', 'echo "{\\"token\\":\\"$API_TOKEN\\"}"'],
          },
          sandbox: { isolation: 'process' },
          credentials: { secret: 'conf-token', inject: 'env', as: 'API_TOKEN' },
        }),
        { kind: 'Agent', spec: { id: 'conf-agent', owner: 'qa' } },
        { kind: 'Grant', spec: { agent: 'conf-agent', capabilities: ['conf:use'] } },
      ],
      actor,
    );
    await tg.secrets.set({ toolId: 'echo_token', name: 'conf-token' }, SECRET, actor);
    const session = await tg.sessions.open('conf-agent');
    ctx = { agentId: 'conf-agent', sessionId: session.id };
  });

  after(async () => {
    await world?.close();
  });

  test('caps what any runtime returns (result.size)', async () => {
    const d = await tg.gate.invoke(ctx, 'big_result', {});
    assert.equal(d.kind, 'deny', JSON.stringify(d).slice(0, 200));
    if (d.kind === 'deny') {
      assert.equal(d.code, 'OUTPUT_INVALID');
      assert.equal(d.rule, 'result.size');
    }
  });

  test('scrubs a credential a tool echoes, whatever its runtime', async () => {
    const d = await tg.gate.invoke(ctx, 'echo_token', {});
    assert.equal(d.kind, 'allow', JSON.stringify(d));
    const text = JSON.stringify(d.kind === 'allow' ? d.output : null);
    assert.ok(!text.includes(SECRET), text);
    assert.match(text, /token/, 'the tool did answer');
  });
});
