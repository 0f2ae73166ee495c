/**
 * The health monitor's rules (C14) on the real gate, runtimes and store: passive health and the
 * circuit breaker for a tool without a probe (opens after repeated failures of more than one caller
 * — test/health/health-breaker-callers.test.ts pins that one caller's never do —, fails fast, half-opens
 * to let one trial call through, closes on its success); a probe that finds a command tool's
 * code_hash no longer matches the file on disk quarantines that tool (seed §8) and leaves its
 * unchanged neighbour alone; probe coverage falls when probes cannot keep up, raising one alert
 * (an audit record and an event) and one all-clear.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { InlineExecutor } from '../../src/execution/runtimes/index.js';
import { commandCodeHash } from '../../src/execution/sandbox/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import type { HealthEvent } from '../../src/operations/health/index.js';
import { validTool } from '../support/tools.js';

const admin: Actor = { id: 'test-admin', via: 'library' };

/** Resolves with the first event `match` accepts (the test holds the process open meanwhile). */
function next(tg: Gateway, match: (e: HealthEvent) => boolean): Promise<HealthEvent> {
  return new Promise((resolve, reject) => {
    const deadline = setTimeout(() => {
      off();
      reject(new Error('no such health event'));
    }, 20_000);
    const off = tg.health.on((e) => {
      if (!match(e)) return;
      off();
      clearTimeout(deadline);
      resolve(e);
    });
  });
}

describe('passive health and the circuit breaker', () => {
  let dir: string;
  let tg: Gateway;
  let failing = true;
  let runs = 0;
  /** While set, a run waits for it (the trial call is held inside the tool). */
  let held: Promise<void> | null = null;
  let entered: () => void = () => {};

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'toolgate-health-breaker-'));
    const executor = new InlineExecutor().register('test.flaky', async () => {
      runs += 1;
      entered();
      if (held) await held;
      if (failing) throw new Error('downstream refused');
      return { status: 'ok' };
    });
    tg = await openGateway({
      db: `sqlite:${join(dir, 'tg.db')}`,
      executor,
      health: { breakerFailures: 3, breakerOpenMs: 300, tickMs: 20 },
    });
    await tg.config.apply(
      [
        {
          kind: 'Tool',
          spec: validTool({
            id: 'flaky_lookup',
            name: 'flaky_lookup',
            data_access: 'public',
            runtime: { kind: 'inline', handler: 'test.flaky' },
          }),
        },
        {
          kind: 'Tool',
          spec: validTool({
            id: 'steady_lookup',
            name: 'steady_lookup',
            data_access: 'public',
            runtime: { kind: 'inline', handler: 'test.flaky_neighbour' },
          }),
        },
        { kind: 'Agent', spec: { id: 'reader', owner: 'qa' } },
        { kind: 'Grant', spec: { agent: 'reader', capabilities: ['billing:read'] } },
        { kind: 'Agent', spec: { id: 'second-reader', owner: 'qa' } },
        { kind: 'Grant', spec: { agent: 'second-reader', capabilities: ['billing:read'] } },
      ],
      admin,
    );
    await tg.health.sync();
  });

  after(async () => {
    await tg.close();
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });

  test('three failed calls of two callers open the breaker; calls then fail fast; one trial after the cool-down closes it', async () => {
    const s = await tg.sessions.open('reader');
    const ctx = { agentId: 'reader', sessionId: s.id };
    const other = await tg.sessions.open('second-reader');
    const otherCtx = { agentId: 'second-reader', sessionId: other.id };
    const args = { invoice: 'INV-1' };
    assert.equal(tg.health.healthOf('flaky_lookup', '1.0.0').state, 'unchecked');
    for (const c of [ctx, ctx, otherCtx]) {
      const d = await tg.gate.invoke(c, 'flaky_lookup', args);
      assert.equal(d.kind === 'deny' && d.code, 'EXECUTION_FAILED');
    }
    assert.deepEqual(tg.health.healthOf('flaky_lookup', '1.0.0'), {
      state: 'unavailable',
      score: 0,
    });
    const before = runs;
    const fast = await tg.gate.invoke(ctx, 'flaky_lookup', args);
    assert.equal(
      fast.kind === 'deny' && `${fast.code}/${fast.rule}`,
      'TOOL_UNAVAILABLE/health.circuit_open',
    );
    assert.equal(runs, before, 'a call refused fast never runs');
    // Withdrawn from a new session's set while open.
    const fresh = await tg.sessions.open('reader');
    const names = (
      (await tg.sessions.exportTools(fresh.id, 'reader', 'mcp')) as { name: string }[]
    ).map((t) => t.name);
    assert.deepEqual(names, ['steady_lookup']);

    // Half-open (no probe: offered again as degraded), one trial admitted at a time.
    await next(
      tg,
      (e) => e.kind === 'health_changed' && e.toolId === 'flaky_lookup' && e.cause === 'breaker',
    );
    assert.equal(tg.health.healthOf('flaky_lookup', '1.0.0').state, 'degraded');
    failing = false;
    let releaseTrial: () => void = () => {};
    held = new Promise<void>((r) => {
      releaseTrial = r;
    });
    const inside = new Promise<void>((r) => {
      entered = r;
    });
    const trial = tg.gate.invoke(ctx, 'flaky_lookup', args);
    await inside;
    const second = await tg.gate.invoke(ctx, 'flaky_lookup', args);
    assert.equal(
      second.kind === 'deny' && second.code,
      'TOOL_UNAVAILABLE',
      'only one trial at a time',
    );
    releaseTrial();
    held = null;
    assert.equal((await trial).kind, 'allow');
    assert.equal(tg.health.status('flaky_lookup', '1.0.0').breaker, 'closed');
    assert.equal(tg.health.healthOf('flaky_lookup', '1.0.0').state, 'healthy');
    assert.equal((await tg.gate.invoke(ctx, 'flaky_lookup', args)).kind, 'allow');
    await tg.health.flush();
    const audited = (await tg.events.list({ subject: 'tool:flaky_lookup@1.0.0', limit: 50 }))
      .filter((e) => e.action === 'tool.health_changed')
      .map((e) => (JSON.parse(e.details) as { to: string }).to);
    assert.ok(audited.includes('unavailable') && audited.at(-1) === 'healthy', audited.join(' → '));
  });
});

const ORIGINAL = `let s = '';
process.stdin.on('data', (c) => { s += c; });
process.stdin.on('end', () => { process.stdout.write(JSON.stringify({ ok: true })); });
`;

describe('a probe checks the code_hash (seed §8)', () => {
  let dir: string;
  let tg: Gateway;
  let tampered: string;
  let untouched: string;

  function commandTool(id: string, script: string) {
    return {
      kind: 'Tool',
      spec: validTool({
        id,
        name: id,
        data_access: 'none',
        required_capabilities: ['echo:run'],
        sandbox: { isolation: 'process' },
        runtime: { kind: 'command', argv: [process.execPath, script] },
        input_schema: { type: 'object', additionalProperties: false, properties: {} },
        output_schema: { type: 'object' },
        code_hash: commandCodeHash([process.execPath, script]),
      }),
    };
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'toolgate-health-hash-'));
    chmodSync(dir, 0o755);
    tampered = join(dir, 'tampered.mjs');
    untouched = join(dir, 'untouched.mjs');
    writeFileSync(tampered, ORIGINAL, { mode: 0o644 });
    writeFileSync(untouched, ORIGINAL, { mode: 0o644 });
    tg = await openGateway({ db: `sqlite:${join(dir, 'tg.db')}` });
    await tg.config.apply(
      [commandTool('tampered_tool', tampered), commandTool('untouched_tool', untouched)],
      admin,
    );
    await tg.health.sync();
  });

  after(async () => {
    await tg.close();
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });

  test('a changed file quarantines its tool at the next probe; the unchanged one stays', async () => {
    const ok = await tg.admin.toolHealth.probeNow('tampered_tool', '1.0.0');
    assert.equal(ok.probe, 'code_hash');
    assert.equal(ok.last_probe_ok, true);
    writeFileSync(tampered, ORIGINAL.replace('ok: true', 'ok: 1234'));
    const mismatch = next(tg, (e) => e.kind === 'code_hash_mismatch');
    const after = await tg.admin.toolHealth.probeNow('tampered_tool', '1.0.0');
    assert.equal(after.last_rule, 'probe.code_hash_mismatch');
    const event = await mismatch;
    assert.equal(event.kind === 'code_hash_mismatch' && event.toolId, 'tampered_tool');
    assert.equal((await tg.catalog.get('tampered_tool', '1.0.0')).quarantined, true);
    const quarantine = (
      await tg.events.list({ subject: 'tool:tampered_tool@1.0.0', limit: 20 })
    ).find((e) => e.action === 'tool.quarantined');
    assert.ok(quarantine);
    assert.equal(quarantine.actor, 'system:health');
    assert.match(quarantine.details, /code_hash mismatch/);
    const neighbour = await tg.admin.toolHealth.probeNow('untouched_tool', '1.0.0');
    assert.equal(neighbour.last_probe_ok, true);
    assert.equal((await tg.catalog.get('untouched_tool', '1.0.0')).quarantined, false);
  });
});

describe('probe coverage', () => {
  let dir: string;
  let tg: Gateway;
  const held: (() => void)[] = [];
  let hold = true;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'toolgate-health-coverage-'));
    const executor = new InlineExecutor().register('test.slow', async () => {
      // Held until the test lets go: the only probe slot stays busy, the other tool waits.
      if (hold) await new Promise<void>((r) => held.push(r));
      return { status: 'ok' };
    });
    tg = await openGateway({
      db: `sqlite:${join(dir, 'tg.db')}`,
      executor,
      health: {
        intervalMs: { public: 200 },
        maxConcurrentProbes: 1,
        coverageEveryMs: 50,
        coverageGraceMs: 100,
        probeTimeoutMs: 60_000,
        tickMs: 20,
      },
    });
    const probed = (id: string) => ({
      kind: 'Tool',
      spec: validTool({
        id,
        name: id,
        data_access: 'public',
        runtime: { kind: 'inline', handler: 'test.slow' },
        probe: { kind: 'call', arguments: { invoice: 'PROBE-1' } },
      }),
    });
    await tg.config.apply([probed('slow_a'), probed('slow_b')], admin);
  });

  after(async () => {
    hold = false;
    for (const r of held) r();
    await tg.close();
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });

  test('a probe that cannot run within its interval raises one alert, and one all-clear after', async () => {
    const alert = await next(tg, (e) => e.kind === 'coverage_alert');
    assert.equal(alert.kind === 'coverage_alert' && alert.probed, 2);
    assert.ok(alert.kind === 'coverage_alert' && alert.overdue >= 1);
    assert.ok(tg.health.coverage().ratio < 1);
    const metrics = (await tg.metrics.render()).body;
    assert.match(metrics, /toolgate_health_coverage_alerts_total 1/);
    const restored = next(tg, (e) => e.kind === 'coverage_restored');
    hold = false;
    for (const r of held.splice(0)) r();
    await restored;
    await tg.health.flush();
    const actions = (await tg.events.list({ subject: 'health:coverage', limit: 10 })).map(
      (e) => e.action,
    );
    assert.deepEqual(actions.filter((a) => a === 'health.coverage_alert').length, 1);
    assert.ok(actions.includes('health.coverage_restored'));
  });
});
