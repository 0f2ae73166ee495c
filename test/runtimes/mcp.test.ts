/**
 * The mcp runtime on its own, over the real upstream pool, with the provider registered in a real
 * gateway (its administration) and the repo's conformance fixture server as the upstream in the
 * namespace sandbox: structured content is checked against the tool's output schema, progress is
 * relayed, a withdrawn call is cancelled (outcome `cancelled`), an unknown provider and a changed
 * pin are refused (the pin change reported to the providers' side), and closing a session ends
 * its upstream processes.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import type { ToolDefinition } from '../../src/domain/catalog/index.js';
import { UpstreamPool } from '../../src/execution/providers/index.js';
import { McpRuntime, type ProviderLinks } from '../../src/execution/runtimes/index.js';
import type { CallProgress } from '../../src/gate/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { classifyReadPublic, fixtureProvider } from '../providers/provider-support.js';
import { backends } from '../support/backends.js';
import { openWorld, type World } from '../support/world.js';
import { contextFor, hasBwrap } from './harness.js';

const admin: Actor = { id: 'mcp-runtime-admin', via: 'library' };
const TOOLS = ['rich_schema_tool', 'test_tool_with_progress', 'wait_for_cancel'];

describe('mcp runtime', { skip: hasBwrap ? false : 'bubblewrap is not available' }, () => {
  let tg: Gateway;
  let world: World;
  let pool: UpstreamPool;
  let runtime: McpRuntime;
  const pinChanges: string[] = [];
  const defs = new Map<string, ToolDefinition>();
  const def = (name: string): ToolDefinition => {
    const d = defs.get(name);
    assert.ok(d, name);
    return d;
  };

  before(async () => {
    const [sqlite] = backends();
    assert.ok(sqlite);
    world = await openWorld({ backend: sqlite, options: { detectors: false } });
    tg = world.tg;
    await tg.providers.register(fixtureProvider('fixtures', 'conformance-server.mjs'), admin);
    for (const name of TOOLS) {
      const { tool } = await classifyReadPublic(tg, 'fixtures', name, admin);
      defs.set(name, tool.definition);
    }
    // The providers' side as the gateway has it; only the pin-change report is noted here (a
    // real one starts a refresh, which is the providers' suites' business).
    const links: ProviderLinks = {
      spec: (name) => tg.providers.spec(name),
      launch: (spec, meter) => tg.providers.launch(spec, meter),
      pinChanged: (provider) => void pinChanges.push(provider),
    };
    pool = new UpstreamPool();
    runtime = new McpRuntime(links, pool);
  });

  after(async () => {
    await pool.close();
    await world.close();
  });

  const args = { sku: 'ABC-1234', amount: 9.99, currency: 'EUR', pair: ['a', 1] };

  test("checks an upstream's structured content against the tool's output schema", async () => {
    const d = def('rich_schema_tool');
    const ok = await runtime.run(d, args, contextFor({ def: d, args }));
    assert.equal(ok.ok, true, JSON.stringify(ok));
    assert.equal(ok.outcome, 'ok');
    const out = ok.ok ? (ok.output as { structuredContent?: { status?: string } }) : {};
    assert.equal(out.structuredContent?.status, 'accepted');
    const checked: unknown[] = [];
    const bad = await runtime.run(
      d,
      args,
      contextFor(
        { def: d, args },
        {
          validateOutput: (v) => {
            checked.push(v);
            return false;
          },
        },
      ),
    );
    assert.equal(bad.ok, false);
    assert.equal(!bad.ok && bad.code, 'OUTPUT_INVALID');
    assert.equal(!bad.ok && bad.rule, 'result.schema');
    assert.deepEqual(checked, [out.structuredContent], 'the structured content, not the result');
  });

  test("relays the upstream's progress while the call runs", async () => {
    const d = def('test_tool_with_progress');
    const seen: CallProgress[] = [];
    const r = await runtime.run(
      d,
      {},
      {
        ...contextFor({ def: d, args: {} }),
        onProgress: (p) => seen.push(p),
      },
    );
    assert.equal(r.ok, true, JSON.stringify(r));
    assert.deepEqual(
      seen.map((p) => p.progress),
      [0, 50, 100],
    );
  });

  test('a withdrawn call is cancelled upstream and ends as cancelled', async () => {
    const d = def('wait_for_cancel');
    const abort = new AbortController();
    const r = runtime.run(
      d,
      {},
      {
        ...contextFor({ def: d, args: {} }, { signal: abort.signal }),
        onProgress: () => abort.abort(),
      },
    );
    const done = await r;
    assert.equal(done.ok, false);
    assert.equal(!done.ok && done.code, 'CALL_CANCELLED');
    assert.equal(done.outcome, 'cancelled');
  });

  test('an unknown provider and a changed pin are refused, the pin change reported', async () => {
    const d = def('rich_schema_tool');
    const unknown = { ...d, runtime: { kind: 'mcp', provider: 'nope', tool: 'x' } } as const;
    const r1 = await runtime.run(unknown, args, contextFor({ def: unknown, args }));
    assert.equal(!r1.ok && r1.rule, 'provider.unknown');
    const repinned = { ...d, code_hash: `sha256:${'0'.repeat(64)}` };
    const r2 = await runtime.run(repinned, args, contextFor({ def: repinned, args }));
    assert.equal(!r2.ok && r2.rule, 'provider.pin_mismatch');
    assert.deepEqual(pinChanges, ['fixtures']);
  });

  test("closing a session ends that session's upstream processes", async () => {
    assert.ok(pool.size > 0, 'the calls above started a process');
    await runtime.closeSession('conformance-session');
    assert.equal(pool.size, 0);
  });
});
