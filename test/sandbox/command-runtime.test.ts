/**
 * @module Which driver a command tool gets, and the refusals: never a weaker driver than the
 * tool names, process isolation only for pure computation, a missing driver refused with what to
 * install; and `toolgate doctor` reporting each driver.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { checkToolDefinition, type ToolDefinition } from '../../src/domain/catalog/index.js';
import {
  GvisorRunner,
  NamespaceRunner,
  planCommand,
  SandboxService,
} from '../../src/execution/sandbox/index.js';
import { cleanEnv, ensureBuilt, MAIN } from '../support/cli.js';
import { validTool } from '../support/tools.js';

function definition(overrides: Record<string, unknown> = {}): ToolDefinition {
  const checked = checkToolDefinition(
    validTool({
      data_access: 'none',
      runtime: { kind: 'command', argv: ['/bin/cat'] },
      output_schema: { type: 'object' },
      ...overrides,
    }),
  );
  assert.ok(checked.ok, JSON.stringify(checked.ok ? null : checked.problems));
  return checked.definition;
}

/** A stored definition changed behind registration's back: the runtime must still refuse it. */
function withSandbox(
  def: ToolDefinition,
  sandbox: Partial<ToolDefinition['sandbox']>,
): ToolDefinition {
  return { ...def, sandbox: { ...def.sandbox, ...sandbox } };
}

test('a command tool runs in exactly the driver its isolation names', () => {
  for (const isolation of ['namespace', 'gvisor'] as const) {
    const plan = planCommand(withSandbox(definition(), { isolation }), { a: 1 });
    assert.ok(plan.ok);
    assert.equal(plan.driver, isolation);
    assert.equal(plan.spec.stdin, '{"a":1}');
    assert.deepEqual(plan.spec.argv, ['/bin/cat']);
  }
});

test('process isolation is refused for a tool that touches data or the network; allowed when pure', () => {
  const pure = withSandbox(definition(), { isolation: 'process' });
  assert.equal(planCommand(pure, {}).ok, true);
  const reads = { ...pure, data_access: 'private' as const };
  const plan = planCommand(reads, {});
  assert.ok(!plan.ok);
  assert.equal(plan.code, 'SANDBOX_UNAVAILABLE');
  assert.equal(plan.rule, 'sandbox.process_not_pure');
  const net = withSandbox({ ...pure, egress: { mode: 'constrained', hosts: ['a.example'] } }, {});
  assert.equal((planCommand(net, {}) as { rule: string }).rule, 'sandbox.process_not_pure');
});

test('a command tool with isolation "none" is never run', () => {
  const plan = planCommand(withSandbox(definition(), { isolation: 'none' }), {});
  assert.ok(!plan.ok);
  assert.equal(plan.rule, 'sandbox.isolation_none');
});

test('a tool that needs the egress proxy is refused when no proxy socket is given', () => {
  const def = withSandbox(
    { ...definition(), egress: { mode: 'constrained', hosts: ['api.example.com'] } },
    { network: 'egress_proxy' },
  );
  const refused = planCommand(def, {});
  assert.ok(!refused.ok);
  assert.equal(refused.rule, 'sandbox.egress_unavailable');
  const wired = planCommand(def, {}, { egressSocket: '/run/proxy.sock' });
  assert.ok(wired.ok);
  assert.equal(wired.spec.egressSocket, '/run/proxy.sock');
});

test('a missing driver refuses the call with what to install, never running it elsewhere', async () => {
  const sandbox = new SandboxService({
    namespace: new NamespaceRunner({ bwrap: '/nonexistent/bwrap' }),
    gvisor: new GvisorRunner({ runsc: '/nonexistent/runsc' }),
  });
  for (const isolation of ['namespace', 'gvisor'] as const) {
    const result = await sandbox.runCommand(withSandbox(definition(), { isolation }), {});
    assert.ok(!result.ok);
    assert.equal(result.code, 'SANDBOX_UNAVAILABLE');
    assert.equal(result.rule, 'sandbox.unavailable');
    assert.equal(result.outcome, 'driver_unavailable');
    assert.match(result.message, isolation === 'namespace' ? /bubblewrap/ : /runsc/);
  }
  const report = await sandbox.doctor();
  assert.deepEqual(
    report.map((d) => [d.driver, d.available]),
    [
      ['process', true],
      ['namespace', false],
      ['gvisor', false],
    ],
  );
});

test('toolgate doctor --json reports every driver working on this host', async () => {
  ensureBuilt();
  const stdout = await new Promise<string>((resolve, reject) =>
    execFile(process.execPath, [MAIN, '--json', 'doctor'], { env: cleanEnv() }, (err, out) =>
      err ? reject(err) : resolve(out),
    ),
  );
  const { drivers } = JSON.parse(stdout) as { drivers: { driver: string; available: boolean }[] };
  assert.deepEqual(
    drivers.map((d) => [d.driver, d.available]),
    [
      ['process', true],
      ['namespace', true],
      ['gvisor', true],
    ],
  );
});

test('a tool’s path roots are bound read-only at their real path; the host root and kernel folders never are', async () => {
  const { mkdtempSync, mkdirSync, symlinkSync, realpathSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'toolgate-roots-')));
  try {
    const workspace = join(dir, 'workspace');
    mkdirSync(workspace);
    symlinkSync(workspace, join(dir, 'alias'));
    symlinkSync('/', join(dir, 'host-root'));
    const roots = [
      join(dir, 'alias'),
      join(dir, 'missing'),
      join(dir, 'host-root'),
      '/',
      '/proc',
      '/sys/kernel',
      '/dev',
    ];
    const def = definition({
      input_schema: {
        type: 'object',
        additionalProperties: false,
        properties: { path: { type: 'string', 'x-toolgate': 'path' } },
      },
      arguments_policy: { path_roots: roots },
      sandbox: { isolation: 'namespace' },
    });
    const plan = planCommand(def, { path: 'x' });
    assert.ok(plan.ok);
    const rootBinds = plan.ok ? plan.spec.binds?.filter((b) => b.source !== '/bin/cat') : [];
    // Only the workspace, through its alias, at its real path: never the host's /, /proc, /sys, /dev.
    assert.deepEqual(rootBinds, [{ source: workspace, target: workspace }]);
  } finally {
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  }
});
