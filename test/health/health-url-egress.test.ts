/**
 * A tool's health URL goes out under the tool-egress rules, as a call of its http runtime does:
 * when configured it must be https on the default port to one of the tool's egress hosts (names,
 * never IP literals), and at each probe the name is resolved and every address checked, so a
 * health URL whose name points at loopback, a private, a metadata or an IPv6-embedded address
 * reaches nothing and the probe fails with the egress rule. The benign neighbour (a health URL
 * on a host whose address is allowed, answered) is test/health/health-e2e.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkToolDefinition, type ToolDefinition } from '../../src/domain/catalog/index.js';
import { HttpToolRunner } from '../../src/execution/runtimes/index.js';
import { ToolProber } from '../../src/operations/health/index.js';
import { tableResolver } from '../support/egress.js';
import { validSendTool } from '../support/tools.js';

function probedTool(probeUrl: string, host = 'api.example.test'): ToolDefinition {
  const check = checkToolDefinition(
    validSendTool({
      id: 'api_item',
      name: 'api_item',
      action_class: 'read',
      data_access: 'public',
      access_tier: 'public',
      approval: { mode: 'none' },
      egress: { mode: 'constrained', hosts: [host] },
      runtime: { kind: 'http', base_url: `https://${host}/v1`, method: 'GET', path: '/items' },
      input_schema: { type: 'object', additionalProperties: false, properties: {} },
      output_schema: { type: 'object' },
      probe: { kind: 'http', url: probeUrl },
    }),
  );
  if (!check.ok) throw new Error(JSON.stringify(check.problems));
  return check.definition;
}

test('a health URL whose name resolves to loopback, private, metadata or embedded addresses reaches nothing', async () => {
  const resolver = tableResolver({
    'loop.example.test': ['127.0.0.1'],
    'private.example.test': ['10.1.2.3'],
    'meta.example.test': ['169.254.169.254'],
    'mapped.example.test': ['::ffff:169.254.169.254'],
    'six.example.test': ['::1'],
  });
  const prober = new ToolProber({ runtimes: {}, http: new HttpToolRunner({ resolver }) });
  for (const [host, rule] of [
    ['loop.example.test', 'egress.address_forbidden'],
    ['six.example.test', 'egress.address_forbidden'],
    ['private.example.test', 'egress.address_forbidden'],
    ['meta.example.test', 'egress.metadata_address'],
    ['mapped.example.test', 'egress.metadata_address'],
  ] as const) {
    const outcome = await prober.probe(probedTool(`https://${host}/healthz`, host), 2_000);
    assert.equal(outcome.ok, false, host);
    assert.equal(outcome.ok ? '' : outcome.rule, rule, host);
  }
});

test('a health URL must be https on the default port to one of the tool egress hosts, by name', () => {
  for (const [url, host] of [
    ['http://api.example.test/healthz', 'api.example.test'],
    ['https://api.example.test:8443/healthz', 'api.example.test'],
    ['https://other.example.test/healthz', 'api.example.test'],
    ['https://127.0.0.1/healthz', '127.0.0.1'],
    ['https://169.254.169.254/healthz', '169.254.169.254'],
  ] as const) {
    assert.throws(() => probedTool(url, host), /probe\/url|egress\/hosts/, url);
  }
  assert.equal(
    probedTool('https://api.example.test/healthz').probe?.kind,
    'http',
    'the benign neighbour is accepted',
  );
});
