/**
 * @module `command` tools end to end over REST: registered by apply, called by an agent,
 * run in a real bubblewrap or gVisor sandbox; each way a run can end maps to its own code and rule
 * and lands in the audit record's `outcome`. Real server on loopback, real SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { buildServer } from '../../src/edge/rest/index.js';
import {
  memoryEnforcement,
  NamespaceRunner,
  SandboxService,
} from '../../src/execution/sandbox/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import type { Store } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { echoTool } from '../support/tools.js';
import { openWorld, restClient, type World } from '../support/world.js';

const ADMIN = 'test-admin-token-sandbox-0123456789';
const SCRIPT = fileURLToPath(new URL('../fixtures/sandbox/echo-tool.sh', import.meta.url));

function commandTool(id: string, isolation: string, mode: string[], limits = {}) {
  return {
    apiVersion: 'toolgate/v1',
    kind: 'Tool',
    spec: echoTool(id, {
      output_schema: {
        type: 'object',
        required: ['echo', 'uid'],
        properties: { echo: { type: 'object' }, uid: { type: 'integer' } },
      },
      runtime: { kind: 'command', argv: ['/bin/sh', SCRIPT, ...mode] },
      sandbox: { isolation, limits },
    }),
  };
}

const CONFIG = [
  {
    apiVersion: 'toolgate/v1',
    kind: 'Agent',
    spec: {
      id: 'sb-bot',
      display_name: 'Sandbox bot',
      description: 'Calls sandboxed tools.',
      owner: 'sandbox-team',
    },
  },
  {
    apiVersion: 'toolgate/v1',
    kind: 'Grant',
    spec: { agent: 'sb-bot', capabilities: ['sandbox:test'] },
  },
  commandTool('sb_echo', 'namespace', []),
  commandTool('sb_echo_gvisor', 'gvisor', []),
  commandTool('sb_slow', 'namespace', ['sleep'], { wall_time_ms: 400 }),
  commandTool('sb_garbage', 'namespace', ['garbage']),
  commandTool('sb_flood', 'namespace', ['flood'], { output_bytes: 4096 }),
];

for (const backend of backends()) {
  describe(`command tools over REST on ${backend.name}`, () => {
    let world: World;
    let tg: Gateway;
    let store: Store;
    let base = '';
    let dbUrl = '';
    let key = '';
    let session = '';

    // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field
    const send = restClient<Record<string, any>>(() => base);
    const post = (path: string, body: unknown, token: string) => send('POST', path, body, token);
    const callTool = (tool: string, args: unknown) =>
      post(`/v1/sessions/${session}/calls`, { tool, arguments: args }, key);
    const postRecord = async (callId: string) => {
      await tg.gate.flush();
      return store.db
        .selectFrom('audit_log')
        .selectAll()
        .where('call_id', '=', callId)
        .where('kind', '=', 'call.post')
        .executeTakeFirstOrThrow();
    };

    before(async () => {
      world = await openWorld({ backend, rest: { adminToken: ADMIN }, inspector: true });
      ({ tg, base, db: dbUrl } = world);
      store = world.inspector as Store;
      const applied = await post('/v1/apply', CONFIG, ADMIN);
      assert.equal(applied.status, 200, JSON.stringify(applied.body));
      key = String((await post('/v1/agents/sb-bot/keys', {}, ADMIN)).body.api_key);
      session = String((await post('/v1/sessions', {}, key)).body.id);
    });
    after(async () => {
      await world?.close();
    });

    test('a namespace command tool gets its arguments as JSON on stdin and answers JSON, as nobody', async () => {
      const text = `$(touch /tmp/pwned) "quoted" ; rm -rf /`;
      const res = await callTool('sb_echo', { text });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.output, { echo: { text }, uid: 65534 });
      const rec = await postRecord(String(res.body.call_id));
      assert.equal(rec.outcome, 'ok');
      const details = JSON.parse(String(rec.details)) as {
        sandbox: { driver: string; memory?: string; memory_peak_mb?: number };
      };
      assert.equal(details.sandbox.driver, 'namespace');
      // The record says which mechanism held the run's memory, and with a cgroup its peak.
      const memory = memoryEnforcement().enforcement;
      assert.equal(details.sandbox.memory, memory);
      if (memory !== 'rlimit-watch') assert.ok((details.sandbox.memory_peak_mb ?? 0) > 0);
    });

    test('a gvisor command tool runs under runsc', async () => {
      const res = await callTool('sb_echo_gvisor', { text: 'hi' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.output, { echo: { text: 'hi' }, uid: 65534 });
      const details = JSON.parse(String((await postRecord(String(res.body.call_id))).details)) as {
        sandbox: { driver: string };
      };
      assert.equal(details.sandbox.driver, 'gvisor');
    });

    test('a tool past its wall-clock limit is killed: 504 SANDBOX_TIMEOUT, audited as timeout', async () => {
      const res = await callTool('sb_slow', { text: 'x' });
      assert.equal(res.status, 504, JSON.stringify(res.body));
      assert.equal(res.body.code, 'SANDBOX_TIMEOUT');
      assert.equal(res.body.details.rule, 'sandbox.timeout');
      const rec = await postRecord(String(res.body.details.call_id));
      assert.equal(rec.outcome, 'timeout');
      assert.equal(rec.code, 'SANDBOX_TIMEOUT');
    });

    test('a tool that prints something other than JSON fails with EXECUTION_FAILED', async () => {
      const res = await callTool('sb_garbage', { text: 'x' });
      assert.equal(res.status, 502);
      assert.equal(res.body.code, 'EXECUTION_FAILED');
      assert.equal(res.body.details.rule, 'execute.output_not_json');
      assert.ok(!JSON.stringify(res.body).includes('this is not json'));
    });

    test('a tool flooding stdout is cut: SANDBOX_LIMIT sandbox.output_limit, audited', async () => {
      const res = await callTool('sb_flood', { text: 'x' });
      assert.equal(res.status, 502);
      assert.equal(res.body.code, 'SANDBOX_LIMIT');
      assert.equal(res.body.details.rule, 'sandbox.output_limit');
      assert.equal((await postRecord(String(res.body.details.call_id))).outcome, 'output_limit');
    });

    test('a gateway whose bubblewrap is missing refuses with 503 SANDBOX_UNAVAILABLE, never a weaker sandbox', async () => {
      const broken = await openGateway({
        db: dbUrl,
        sandbox: new SandboxService({
          namespace: new NamespaceRunner({ bwrap: '/nonexistent/bwrap' }),
        }),
      });
      const brokenApp = await buildServer(broken, { adminToken: ADMIN });
      try {
        const brokenBase = await brokenApp.listen({ host: '127.0.0.1', port: 0 });
        const opened = await fetch(`${brokenBase}/v1/sessions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: '{}',
        });
        const sid = String(((await opened.json()) as { id: string }).id);
        const res = await fetch(`${brokenBase}/v1/sessions/${sid}/calls`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ tool: 'sb_echo', arguments: { text: 'x' } }),
        });
        const body = (await res.json()) as {
          code: string;
          message: string;
          details: { rule: string };
        };
        assert.equal(res.status, 503);
        assert.equal(body.code, 'SANDBOX_UNAVAILABLE');
        assert.equal(body.details.rule, 'sandbox.unavailable');
        assert.match(body.message, /install bubblewrap/);
      } finally {
        await brokenApp.close();
        await broken.close();
      }
    });

    test('the gateway keeps answering after the failed runs', async () => {
      const res = await fetch(`${base}/healthz`);
      assert.equal(res.status, 200);
      const again = await callTool('sb_echo', { text: 'still here' });
      assert.equal(again.status, 200);
    });
  });
}
