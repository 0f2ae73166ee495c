/**
 * Observability through REST (C16): GET /metrics needs the admin token and counts what
 * the gate did, per gateway; logs at debug level never hold a secret or a raw argument.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { openWorld, restClient, type World } from '../support/world.js';

const ADMIN_TOKEN = 'admin-token-for-observability-tests-0123456789';
const SECRET_ARG = 'ZEBRA-ARGUMENT-7f3a91c2';
const actor = { id: 'test-admin', via: 'library' } as const;

for (const backend of backends()) {
  describe(`observability over REST on ${backend.name}`, () => {
    let world: World;
    let tg: Gateway;
    let base = '';
    let apiKey = '';
    const logLines: string[] = [];

    before(async () => {
      const stream = new Writable({
        write(chunk: Buffer, _enc, done) {
          logLines.push(chunk.toString('utf8'));
          done();
        },
      });
      world = await openWorld({
        backend,
        demo: true,
        actor,
        keys: ['support-bot'],
        rest: { adminToken: ADMIN_TOKEN, logger: { level: 'debug', stream } },
      });
      ({ tg, base } = world);
      apiKey = world.keys['support-bot'] ?? '';
    });
    after(async () => {
      await world.close();
    });

    const rest = restClient(() => base);
    const call = async (method: string, path: string, token: string | null, body?: unknown) => {
      const { status, headers, text } = await rest(method, path, body, token);
      return { status, type: headers.get('content-type') ?? '', text };
    };
    const openSession = async () =>
      (JSON.parse((await call('POST', '/v1/sessions', apiKey, {})).text) as { id: string }).id;
    const invoke = (sid: string, tool: string, args: unknown) =>
      call('POST', `/v1/sessions/${sid}/calls`, apiKey, { tool, arguments: args });

    test('GET /metrics needs the admin token: no token and an agent key are refused', async () => {
      assert.equal((await call('GET', '/metrics', null)).status, 401);
      assert.equal((await call('GET', '/metrics', apiKey)).status, 401);
      const ok = await call('GET', '/metrics', ADMIN_TOKEN);
      assert.equal(ok.status, 200);
      assert.match(ok.type, /^text\/plain/);
    });

    test('metrics count calls, errors, latency, denials by rule, unregistered probes, approvals, deprecation, outcomes, audit appends', async () => {
      const sid = await openSession();
      assert.equal((await invoke(sid, 'search_tickets', { query: 'refund' })).status, 200);
      assert.equal((await invoke(sid, 'search_tickets', { query: 'login' })).status, 200);
      assert.equal((await invoke(sid, 'get_order', { order_id: 'nope' })).status, 400);
      assert.equal((await invoke(sid, 'no_such_tool', {})).status, 404);
      const held = await invoke(sid, 'send_email', {
        to: 'ana@customer.example',
        subject: 'Refund',
        body: 'On its way',
      });
      assert.equal(held.status, 202, held.text);
      await tg.catalog.deprecate('add_label', '1.0.0', actor, { windowDays: 10 });
      const labelled = await invoke(sid, 'add_label', { ticket_id: 'T-1001', label: 'urgent' });
      assert.equal(labelled.status, 200, labelled.text);
      await tg.gate.flush();
      const m = (await call('GET', '/metrics', ADMIN_TOKEN)).text;
      assert.match(m, /toolgate_tool_calls_total\{tool="search_tickets"\} 2/);
      assert.match(m, /toolgate_sandbox_outcomes_total\{tool="search_tickets",outcome="ok"\} 2/);
      assert.match(m, /toolgate_tool_call_duration_seconds_count\{tool="search_tickets"\} 2/);
      assert.match(m, /toolgate_denials_total\{rule="schema\.pattern",code="INPUT_INVALID"\} 1/);
      assert.match(
        m,
        /toolgate_denials_total\{rule="resolve\.not_registered",code="TOOL_NOT_REGISTERED"\} 1/,
      );
      assert.match(m, /toolgate_unregistered_attempts_total 1/);
      // The probed name is counted, never a label.
      assert.ok(!m.includes('no_such_tool'));
      assert.match(m, /toolgate_approvals_requested_total\{tool="send_email"\} 1/);
      assert.match(m, /toolgate_approvals\{status="pending"\} 1/);
      assert.match(m, /toolgate_deprecated_calls_total\{tool="add_label",version="1\.0\.0"\} 1/);
      assert.match(m, /toolgate_audit_append_seconds_count [1-9]/);
      assert.match(m, /toolgate_audit_records_total\{kind="call\.pre"\} 3/);
      assert.match(
        m,
        /toolgate_detector_alerts_total\{detector="read_then_egress",suspended="false"\} 1/,
      );
    });

    test('each gateway has its own registry: a second gateway in this process starts at zero', async () => {
      const fresh = await backend.fresh();
      const other = await openGateway({ db: fresh.url, detectors: false });
      try {
        const m = (await other.metrics.render()).body;
        assert.ok(!/toolgate_tool_calls_total\{/.test(m));
        assert.match(
          (await tg.metrics.render()).body,
          /toolgate_tool_calls_total\{tool="search_tickets"\}/,
        );
      } finally {
        await other.close();
        await fresh.drop();
      }
    });

    test('debug logs never hold a token, an API key or a raw argument', async () => {
      const sid = await openSession();
      await invoke(sid, 'search_tickets', { query: SECRET_ARG });
      await invoke(sid, 'get_order', { order_id: SECRET_ARG });
      await invoke(sid, SECRET_ARG, { x: SECRET_ARG });
      await call('GET', `/v1/discovery?q=${SECRET_ARG}`, ADMIN_TOKEN);
      await call('GET', '/v1/tools', `wrong-${SECRET_ARG}`);
      await call('POST', '/v1/sessions', `tgk_${SECRET_ARG}`, {});
      await call('POST', '/v1/apply', ADMIN_TOKEN, { kind: 'Agent', spec: { id: SECRET_ARG } });
      await call('GET', '/metrics', ADMIN_TOKEN);
      await tg.gate.flush();
      const text = logLines.join('');
      // Logging is on and detailed: the requests themselves are there.
      assert.ok(logLines.length > 10, 'nothing was logged');
      assert.match(text, /"url":"\/v1\/sessions\/[^"]+\/calls"/);
      assert.ok(
        !text.includes(SECRET_ARG),
        'a raw argument or presented credential reached the log',
      );
      assert.ok(!text.includes(apiKey), 'an API key reached the log');
      // The key is `tgk_<16-char key id>_<43-char secret>`, and either part may hold `_` itself:
      // the secret is cut by its fixed length, never by splitting on `_` (which once left a few
      // random characters that happened to occur in the log).
      const secret = /^tgk_[A-Za-z0-9_-]{16}_([A-Za-z0-9_-]{43})$/.exec(apiKey)?.[1];
      assert.ok(secret, `unexpected key format ${apiKey.slice(0, 4)}…`);
      assert.ok(!text.includes(secret), 'an API key secret reached the log');
      assert.ok(!text.includes(ADMIN_TOKEN), 'the admin token reached the log');
    });
  });
}
