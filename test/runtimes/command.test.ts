/**
 * The command runtime on its own, with the real sandbox and the real egress proxy: the lease lets
 * a constrained tool reach its registered hosts and an unconstrained one only the hosts the call's
 * URL arguments named; no lease, no run; the credential reaches the tool's environment (the
 * runtime hands what the tool printed back unscrubbed: scrubbing is the gate's result step); and
 * each run reports its sandbox fields for the audit record.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { checkToolDefinition, type ToolDefinition } from '../../src/domain/catalog/index.js';
import { CommandRuntime } from '../../src/execution/runtimes/index.js';
import { EgressProxy } from '../../src/execution/sandbox/index.js';
import { ROOT } from '../support/cli.js';
import { tableResolver } from '../support/egress.js';
import { validTool } from '../support/tools.js';
import {
  type Case,
  contextFor,
  credentialsFor,
  hasBwrap,
  SECRET,
  sandboxService,
  startApi,
  type TestApi,
} from './harness.js';

const FETCH = join(ROOT, 'test', 'fixtures', 'egress', 'fetch-through-proxy.mjs');

function fetcher(egress: Record<string, unknown>): ToolDefinition {
  const checked = checkToolDefinition(
    validTool({
      data_access: 'public',
      egress,
      sandbox: { isolation: 'namespace', network: 'egress_proxy' },
      runtime: { kind: 'command', argv: ['/usr/bin/node', FETCH] },
      input_schema: {
        type: 'object',
        additionalProperties: false,
        properties: { host: { type: 'string' }, path: { type: 'string' } },
      },
      output_schema: { type: 'object' },
    }),
  );
  assert.ok(checked.ok, JSON.stringify(checked.ok ? null : checked.problems));
  return checked.definition;
}

function pure(argv: string[]): ToolDefinition {
  const checked = checkToolDefinition(
    validTool({
      data_access: 'none',
      sandbox: { isolation: 'process' },
      runtime: { kind: 'command', argv },
      input_schema: { type: 'object', additionalProperties: false, properties: {} },
      output_schema: { type: 'object' },
    }),
  );
  assert.ok(checked.ok, JSON.stringify(checked.ok ? null : checked.problems));
  return checked.definition;
}

describe('command runtime', { skip: hasBwrap ? false : 'bubblewrap is not available' }, () => {
  let api: TestApi;
  let proxy: EgressProxy;
  let runtime: CommandRuntime;

  before(async () => {
    api = await startApi();
    proxy = new EgressProxy({
      resolver: tableResolver({
        'api.example.test': ['127.0.0.1'],
        'other.example.test': ['127.0.0.1'],
      }),
      unsafeTestTargets: ['127.0.0.1:443'],
      unsafeTestPorts: { '127.0.0.1:443': api.port },
    });
    runtime = new CommandRuntime(sandboxService, proxy);
  });

  after(async () => {
    await proxy.close();
    await api.close();
  });

  const run = (c: Case, destinations: string[] = []) =>
    runtime.run(c.def, c.args, { ...contextFor(c), destinations: new Set(destinations) });

  test('a constrained tool reaches its registered hosts and no other', async () => {
    const def = fetcher({ mode: 'constrained', hosts: ['api.example.test'] });
    const ok = await run({ def, args: { host: 'api.example.test', path: '/v1/a' } });
    assert.equal(ok.ok && (ok.output as { status: string }).status, 'ok', JSON.stringify(ok));
    assert.equal(ok.egress?.egressHost, 'api.example.test=127.0.0.1');
    const other = await run({ def, args: { host: 'other.example.test', path: '/v1/a' } });
    assert.equal(other.ok && (other.output as { status: string }).status, 'refused');
    assert.ok(other.egress?.denials.length, 'the refusal is in the record');
  });

  test("an unconstrained tool reaches only the hosts the call's URL arguments named", async () => {
    const def = fetcher({ mode: 'unconstrained' });
    const args = { host: 'api.example.test', path: '/v1/b' };
    const named = await run({ def, args }, ['api.example.test']);
    assert.equal(named.ok && (named.output as { status: string }).status, 'ok');
    const unnamed = await run({ def, args }, ['other.example.test']);
    assert.equal(unnamed.ok && (unnamed.output as { status: string }).status, 'refused');
  });

  test('no lease, no run: a proxy that cannot open one refuses the call', async () => {
    const closed = new EgressProxy();
    await closed.close();
    const def = fetcher({ mode: 'constrained', hosts: ['api.example.test'] });
    const r = await new CommandRuntime(sandboxService, closed).run(
      def,
      { host: 'api.example.test', path: '/v1/c' },
      contextFor({ def, args: {} }),
    );
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.rule, 'egress.unavailable');
    assert.equal(r.sandbox, undefined, 'nothing ran');
  });

  test('without a proxy, a tool that needs one is refused by the sandbox', async () => {
    const def = fetcher({ mode: 'constrained', hosts: ['api.example.test'] });
    const r = await new CommandRuntime(sandboxService).run(def, {}, contextFor({ def, args: {} }));
    assert.equal(!r.ok && r.rule, 'sandbox.egress_unavailable');
  });

  test("the credential reaches the tool's environment; what it prints comes back as printed", async () => {
    const def = pure(['/bin/sh', '-c', 'echo "{\\"token\\":\\"$API_TOKEN\\"}"']);
    const r = await run({ def, args: {}, credentials: credentialsFor('API_TOKEN', null) });
    assert.equal(r.ok, true, JSON.stringify(r));
    // Unscrubbed here on purpose: the gate's result step scrubs with `redact`.
    assert.deepEqual(r.ok && r.output, { token: SECRET });
    assert.equal(r.outcome, 'ok');
    assert.equal(r.sandbox?.driver, 'process');
    assert.equal(r.sandbox?.exit_code, 0);
  });

  test('a failed run reports its sandbox fields and how much it printed, never what', async () => {
    const def = pure(['/bin/sh', '-c', 'echo partial; exit 4']);
    const r = await run({ def, args: {} });
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.rule, 'execute.exit_nonzero');
    assert.equal(!r.ok && r.bytes, 'partial\n'.length);
    assert.equal(r.outcome, 'exit_nonzero');
    assert.equal(r.sandbox?.exit_code, 4);
    assert.ok(!JSON.stringify(r).includes('partial'));
  });
});
