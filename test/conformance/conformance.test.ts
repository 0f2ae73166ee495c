/**
 * @module The official MCP conformance server suite (@modelcontextprotocol/conformance) against
 * toolgate's /mcp, once per era: 2026-07-28 (stateless) and 2025-11-25 (sessions). Behind toolgate
 * is the suite's fixture tools as an upstream MCP provider (test/fixtures/mcp/conformance-server.mjs),
 * classified and reviewed; the suite reaches /mcp through a proxy that adds the agent's key (its CLI
 * takes only a URL). The suite needs Node 22 or later; it runs on the tests' own Node (24).
 * Every scenario that fails must be named in expected-failures.json with the reason; one named
 * there that passes fails this test too, so the file stays true.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Actor } from '../../src/core/index.js';
import { buildServer } from '../../src/edge/rest/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { classifyReadPublic, fixtureProvider } from '../providers/provider-support.js';
import { type BearerProxy, startBearerProxy } from '../support/bearer-proxy.js';
import { ROOT } from '../support/cli.js';
import { approvePendingReviews } from '../support/reviews.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const ADMIN_TOKEN = 'conformance-admin-token-0123456789abcdef0123';
const SUITE = join(
  ROOT,
  'node_modules',
  '@modelcontextprotocol',
  'conformance',
  'dist',
  'index.js',
);
const ERAS = ['2026-07-28', '2025-11-25'] as const;
type Era = (typeof ERAS)[number];

/**
 * The fixture's tools the suite calls or lists; all are offered to the agent. The fixture also
 * serves the suite's resources, resource template and prompts: once upstream resources and
 * prompts are governed, classifying them here is what turns their scenarios from expected
 * failures into passes.
 */
const FIXTURE_TOOLS = [
  'test_simple_text',
  'test_image_content',
  'test_audio_content',
  'test_embedded_resource',
  'test_multiple_content_types',
  'test_error_handling',
  'test_param_header',
  'test_tool_with_progress',
  'json_schema_2020_12_tool',
];

/** `scenario` or `scenario:check-id` → why it cannot pass through a gateway (or what is pending). */
type Expected = Record<Era, Record<string, string>>;
const EXPECTED = JSON.parse(
  readFileSync(join(ROOT, 'test', 'conformance', 'expected-failures.json'), 'utf8'),
) as Expected & { $comment?: unknown };

interface Check {
  readonly id: string;
  readonly status: string;
  readonly errorMessage?: string;
}

let dir: string;
let tg: Gateway;
let app: FastifyInstance;
let proxy: BearerProxy;

/** Runs the suite for one era; returns each scenario's checks (skipped scenarios have none). */
function runSuite(era: Era): Promise<{ results: Map<string, Check[]>; log: string }> {
  const out = join(dir, `results-${era}`);
  const args = [
    SUITE,
    'server',
    '--url',
    `${proxy.url}/mcp`,
    '--suite',
    'all',
    '--spec-version',
    era,
    '--timeout',
    '15000',
    '-o',
    out,
  ];
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      args,
      { cwd: dir, maxBuffer: 64 * 1024 * 1024, timeout: 240_000 },
      (_err, stdout, stderr) => {
        // The exit code is the suite's own verdict without our baseline: the checks decide here.
        const results = new Map<string, Check[]>();
        for (const name of existsSync(out) ? readdirSync(out) : []) {
          const scenario = name.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\dTZ-]+$/, '');
          const file = join(out, name, 'checks.json');
          if (existsSync(file)) {
            results.set(scenario, JSON.parse(readFileSync(file, 'utf8')) as Check[]);
          }
        }
        resolve({ results, log: `${stdout}\n${stderr}` });
      },
    );
  });
}

/** Failing scenarios, and failing checks of scenarios baselined check by check. */
function verdict(era: Era, results: Map<string, Check[]>) {
  const expected = EXPECTED[era];
  const unexpected: string[] = [];
  const stale: string[] = [];
  for (const [scenario, checks] of results) {
    const failed = checks.filter((c) => c.status === 'FAILURE');
    if (scenario in expected) {
      if (failed.length === 0) stale.push(scenario);
      continue;
    }
    for (const c of failed) {
      if (`${scenario}:${c.id}` in expected) continue;
      unexpected.push(`${scenario}:${c.id} — ${c.errorMessage ?? ''}`.slice(0, 400));
    }
  }
  for (const entry of Object.keys(expected)) {
    const [scenario, check] = entry.split(':', 2) as [string, string | undefined];
    const checks = results.get(scenario);
    if (!checks) {
      stale.push(`${entry} (did not run)`);
      continue;
    }
    if (check === undefined) continue;
    const states = checks.filter((c) => c.id === check).map((c) => c.status);
    if (states.length > 0 && !states.includes('FAILURE')) stale.push(entry);
  }
  return { unexpected, stale };
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-conformance-'));
  tg = await openGateway({ db: `sqlite:${join(dir, 'tg.db')}` });
  await tg.config.apply(
    [
      {
        kind: 'Agent',
        spec: {
          id: 'conformance-bot',
          display_name: 'Conformance suite',
          description: "Runs the MCP conformance suite's scenarios through toolgate.",
          owner: 'platform-team',
        },
      },
      { kind: 'Grant', spec: { agent: 'conformance-bot', capabilities: ['everything:use'] } },
    ],
    admin,
  );
  await tg.providers.register(fixtureProvider('fixtures', 'conformance-server.mjs'), admin);
  for (const name of FIXTURE_TOOLS) {
    const { tool } = await classifyReadPublic(tg, 'fixtures', name, admin);
    assert.equal(tool.quarantined, false, `${name}: ${JSON.stringify(tool.findings)}`);
  }
  // The fixture's resources, resource template and prompts are governed entries: classified
  // (public, the agent's capability) and reviewed like its tools before anything offers them.
  for (const entry of (await tg.providers.show('fixtures')).entries) {
    await tg.providers.classifyEntry(
      'fixtures',
      entry.kind,
      entry.key,
      { data_access: 'public', access_tier: 'public', required_capabilities: ['everything:use'] },
      admin,
    );
  }
  await approvePendingReviews(tg.admin);
  const { apiKey } = await tg.keys.issue('conformance-bot', admin);
  app = await buildServer(tg, { adminToken: ADMIN_TOKEN, bodyLimit: 256 * 1024 });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  proxy = await startBearerProxy(base, apiKey);
});

after(async () => {
  await proxy?.close();
  await app?.close();
  await tg?.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

describe('the MCP conformance server suite through toolgate', () => {
  test('the suite is installed, and runs on the Node the tests run on (22 or later)', () => {
    assert.ok(existsSync(SUITE), 'npm ci installs @modelcontextprotocol/conformance');
    assert.ok(Number(process.versions.node.split('.')[0]) >= 22, process.version);
  });

  for (const era of ERAS) {
    test(`${era}: every failing scenario is an expected one, and every expected one fails`, async () => {
      const { results, log } = await runSuite(era);
      assert.ok(results.size > 10, `the suite ran no scenarios:\n${log.slice(-4000)}`);
      // The core of the protocol passes on this era (never baselined wholesale).
      for (const core of ['tools-list', 'tools-call-simple-text', 'tools-call-error']) {
        const checks = results.get(core);
        assert.ok(checks && checks.length > 0, `${core} ran`);
      }
      const { unexpected, stale } = verdict(era, results);
      // Both lists in one message: unexpected failures, and entries that pass now (update the file).
      assert.deepEqual({ unexpected, stale }, { unexpected: [], stale: [] }, `on ${era}`);
    });
  }
});
