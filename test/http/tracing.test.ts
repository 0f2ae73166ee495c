/**
 * OpenTelemetry traces (docs/operations.md, "Tracing") exported to a real OTLP/HTTP receiver, in
 * JSON and in protobuf: a call over REST and over MCP (both eras) with the caller's `traceparent`
 * (header, `params._meta`) gets a `tools/call {tool}` (MCP) or `execute_tool {tool}` (REST) span
 * in the caller's trace, child spans where time goes and the gate's verdict as attributes; an
 * upstream MCP server (test/fixtures/mcp/trace-echo-server.mjs) receives the context of
 * toolgate's client span; the audit records carry the trace id; the response echoes a request
 * id. A canary sent as an argument appears nowhere in what was exported. Off by default: no
 * export, and the SDK is never loaded.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { tracingConfigFromEnv } from '../../src/operations/tracing/index.js';
import { startOtelTracing } from '../../src/operations/tracing/otel-call-tracer.js';
import type { Store } from '../../src/records/store/index.js';
import { FIXTURES, nodeProvider, publicRead } from '../providers/provider-support.js';
import { ROOT } from '../support/cli.js';
import {
  type OtlpReceiver,
  type ReceivedSpan,
  startOtlpReceiver,
} from '../support/otlp-receiver.js';
import { classifyReviewed } from '../support/reviews.js';
import {
  connectMcp,
  connectModernMcp,
  openWorld,
  restClient,
  type World,
} from '../support/world.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const CANARY = 'CANARY-ARG-5b1e0c77d2';
const SERVER = join(FIXTURES, 'trace-echo-server.mjs');

/** A fresh caller context: its trace id and span id, as a `traceparent`. */
function callerContext(tag: string) {
  const traceId = `${tag.padEnd(8, '0')}${'a'.repeat(24)}`.slice(0, 32);
  const spanId = `${tag.padEnd(4, '0')}${'b'.repeat(12)}`.slice(0, 16);
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

function childrenOf(spans: readonly ReceivedSpan[], parent: ReceivedSpan): string[] {
  return spans
    .filter((s) => s.parentSpanId === parent.spanId && s.traceId === parent.traceId)
    .map((s) => s.name)
    .sort();
}

for (const protocol of ['http/json', 'http/protobuf'] as const) {
  describe(`traces over OTLP ${protocol}`, () => {
    let receiver: OtlpReceiver;
    let world: World;
    let key = '';
    const closers: { close(): Promise<void> }[] = [];

    before(async () => {
      receiver = await startOtlpReceiver();
      const tracing = tracingConfigFromEnv({
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
        OTEL_SERVICE_NAME: 'toolgate-under-test',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
        OTEL_TRACES_SAMPLER: 'parentbased_always_on',
        OTEL_BSP_SCHEDULE_DELAY: '50',
        // Small batches: a burst of calls goes out in many exports (the last test).
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '16',
      });
      assert.ok(tracing);
      world = await openWorld({
        demo: true,
        rest: true,
        inspector: true,
        agents: [{ id: 'tracer-bot', capabilities: ['tickets:read', 'trace:use'] }],
        options: { tracing },
      });
      key = world.keys['tracer-bot'] ?? '';
      await world.tg.providers.register(
        nodeProvider('tracee', SERVER, [], { binds: [{ source: FIXTURES }] }),
        admin,
      );
      await classifyReviewed(world.tg, 'tracee', 'whoami', publicRead(['trace:use']), admin);
    });
    after(async () => {
      await Promise.all(closers.map((c) => c.close().catch(() => {})));
      await world?.close();
      await receiver?.close();
    });

    test('a REST call: its span in the caller trace, the verdict, children, request id, audit trace id', async () => {
      const rest = restClient(() => world.base, key);
      const sid = ((await rest('POST', '/v1/sessions', {})).body as { id: string }).id;
      const caller = callerContext('1e57');
      const before = BigInt(Date.now()) * 1_000_000n;
      const res = await fetch(`${world.base}/v1/sessions/${sid}/calls`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          traceparent: caller.traceparent,
          'x-request-id': 'req-from-client-42',
        },
        body: JSON.stringify({ tool: 'search_tickets', arguments: { query: CANARY } }),
      });
      assert.equal(res.status, 200, await res.text());
      const after = BigInt(Date.now()) * 1_000_000n;
      assert.equal(res.headers.get('x-request-id'), 'req-from-client-42');

      const isCall = (s: ReceivedSpan) =>
        s.traceId === caller.traceId && s.name === 'execute_tool search_tickets';
      await receiver.waitFor((spans) => spans.some(isCall));
      await receiver.waitFor((spans) => {
        const call = spans.find(isCall);
        return call !== undefined && childrenOf(spans, call).length >= 4;
      });
      const call = receiver.spans.find(isCall) as ReceivedSpan;
      assert.equal(call.parentSpanId, caller.spanId);
      assert.equal(call.kind, 2, 'a server span');
      assert.equal(call.attributes['gen_ai.tool.name'], 'search_tickets');
      assert.equal(call.attributes['gen_ai.operation.name'], 'execute_tool');
      assert.equal(call.attributes['toolgate.decision'], 'allow');
      assert.equal(call.attributes['toolgate.tool.id'], 'search_tickets');
      assert.equal(call.attributes['toolgate.tool.version'], '1.0.0');
      assert.equal(call.attributes['toolgate.action_class'], 'read');
      assert.equal(call.attributes['toolgate.request.id'], 'req-from-client-42');
      assert.equal(call.attributes['network.transport'], 'tcp');
      assert.equal(call.resource['service.name'], 'toolgate-under-test');
      assert.equal(call.resource['deployment.environment.name'], 'test');
      assert.deepEqual(childrenOf(receiver.spans, call), [
        'toolgate.approval',
        'toolgate.audit-pre',
        'toolgate.execute',
        'toolgate.policy',
      ]);
      assert.equal(call.status, 0, 'an allowed call is not an error');
      // Times: the call's within the request (wall clock, a second of slack for its adjustments),
      // its children inside it and one after another in the order the steps run.
      const second = 1_000_000_000n;
      assert.ok(call.startNs >= before - second && call.endNs <= after + second, 'call times');
      assert.ok(call.startNs < call.endNs);
      let last = call.startNs;
      for (const step of ['policy', 'approval', 'audit-pre', 'execute']) {
        const child = receiver.spans.find(
          (s) => s.parentSpanId === call.spanId && s.name === `toolgate.${step}`,
        ) as ReceivedSpan;
        assert.ok(child.startNs >= last && child.startNs <= child.endNs, `${step} starts in order`);
        assert.ok(child.endNs <= call.endNs, `${step} ends inside the call`);
        assert.equal(child.kind, 1, 'an internal span');
        last = child.endNs;
      }

      await world.tg.gate.flush();
      const rows = await (world.inspector as Store).db
        .selectFrom('audit_log')
        .select(['kind', 'trace_id'])
        .where('session_id', '=', sid)
        .execute();
      const kinds = rows.filter((r) => r.trace_id === caller.traceId).map((r) => r.kind);
      assert.deepEqual(kinds.sort(), ['call.post', 'call.pre']);
    });

    test('MCP tools/call (2025 era): the context from params._meta, MCP attributes', async () => {
      const client = await connectMcp(world.base, key, 'trace-test');
      closers.push(client);
      const caller = callerContext('2e57');
      const result = await client.callTool({
        name: 'search_tickets',
        arguments: { query: CANARY },
        _meta: { traceparent: caller.traceparent },
      });
      assert.notEqual(result.isError, true, JSON.stringify(result));
      const isCall = (s: ReceivedSpan) =>
        s.traceId === caller.traceId && s.name === 'tools/call search_tickets';
      await receiver.waitFor((spans) => spans.some(isCall));
      const call = receiver.spans.find(isCall) as ReceivedSpan;
      assert.equal(call.parentSpanId, caller.spanId);
      assert.equal(call.attributes['mcp.method.name'], 'tools/call');
      assert.equal(call.attributes['gen_ai.tool.name'], 'search_tickets');
      assert.equal(call.attributes['network.transport'], 'tcp');
      assert.equal(typeof call.attributes['jsonrpc.request.id'], 'string');
      assert.equal(typeof call.attributes['mcp.session.id'], 'string');
      assert.equal(call.attributes['toolgate.decision'], 'allow');
    });

    test('MCP tools/call (2026-07-28): the context from the traceparent header; the upstream MCP server receives the client span context', async () => {
      const caller = callerContext('3e57');
      const traced: typeof fetch = (input, init) => {
        const headers = new Headers(init?.headers);
        headers.set('traceparent', caller.traceparent);
        return fetch(input, { ...init, headers });
      };
      const client = await connectModernMcp(world.base, key, 'trace-test', {}, { fetch: traced });
      closers.push(client);
      const result = (await client.callTool({
        name: 'whoami',
        arguments: { note: CANARY },
      })) as { content?: { text?: string }[]; isError?: boolean };
      assert.notEqual(result.isError, true, JSON.stringify(result));
      const text = result.content?.[0]?.text ?? '';
      const received = /^traceparent=00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(text);
      assert.ok(received, `the upstream received: ${text}`);
      assert.equal(received[1], caller.traceId);

      const isCall = (s: ReceivedSpan) =>
        s.traceId === caller.traceId && s.name === 'tools/call whoami' && s.kind === 2;
      await receiver.waitFor((spans) =>
        spans.some((s) => s.traceId === caller.traceId && s.kind === 3),
      );
      await receiver.waitFor((spans) => spans.some(isCall));
      const call = receiver.spans.find(isCall) as ReceivedSpan;
      assert.equal(call.parentSpanId, caller.spanId);
      assert.equal(call.attributes['mcp.protocol.version'], '2026-07-28');
      const upstream = receiver.spans.find(
        (s) => s.traceId === caller.traceId && s.kind === 3,
      ) as ReceivedSpan;
      assert.equal(upstream.name, 'tools/call whoami');
      assert.equal(upstream.spanId, received[2], 'the upstream is sent its client span');
      const execute = receiver.spans.find((s) => s.spanId === upstream.parentSpanId);
      assert.equal(execute?.name, 'toolgate.execute');
      assert.equal(execute?.parentSpanId, call.spanId);
    });

    test('a denied call: its span has the verdict, the code as error.type, an error status', async () => {
      const rest = restClient(() => world.base, key);
      const sid = ((await rest('POST', '/v1/sessions', {})).body as { id: string }).id;
      const caller = callerContext('6e57');
      const res = await fetch(`${world.base}/v1/sessions/${sid}/calls`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          traceparent: caller.traceparent,
        },
        body: JSON.stringify({ tool: 'search_tickets', arguments: { query: CANARY, limit: 99 } }),
      });
      assert.equal(res.status, 400, await res.text());
      const isCall = (s: ReceivedSpan) =>
        s.traceId === caller.traceId && s.name === 'execute_tool search_tickets';
      await receiver.waitFor((spans) => spans.some(isCall));
      const call = receiver.spans.find(isCall) as ReceivedSpan;
      assert.equal(call.attributes['toolgate.decision'], 'deny');
      assert.equal(call.attributes['toolgate.code'], 'INPUT_INVALID');
      assert.equal(call.attributes['error.type'], 'INPUT_INVALID');
      assert.equal(typeof call.attributes['toolgate.rule'], 'string');
      assert.equal(call.status, 2, 'an error status');
      assert.deepEqual(childrenOf(receiver.spans, call), [], 'refused before policy');
    });

    test('a caller context not sampled: no span, its trace id in the audit records, passed on not sampled', async () => {
      const rest = restClient(() => world.base, key);
      const sid = ((await rest('POST', '/v1/sessions', {})).body as { id: string }).id;
      const caller = callerContext('7e57');
      const unsampled = caller.traceparent.replace(/-01$/, '-00');
      const res = await fetch(`${world.base}/v1/sessions/${sid}/calls`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          traceparent: unsampled,
        },
        body: JSON.stringify({ tool: 'search_tickets', arguments: { query: 'refund' } }),
      });
      assert.equal(res.status, 200, await res.text());
      const client = await connectModernMcp(
        world.base,
        key,
        'trace-test',
        {},
        {
          fetch: (input, init) => {
            const headers = new Headers(init?.headers);
            headers.set('traceparent', unsampled);
            return fetch(input, { ...init, headers });
          },
        },
      );
      closers.push(client);
      const result = (await client.callTool({ name: 'whoami', arguments: { note: 'x' } })) as {
        content?: { text?: string }[];
      };
      const text = result.content?.[0]?.text ?? '';
      const sent = /^traceparent=00-([0-9a-f]{32})-([0-9a-f]{16})-00$/.exec(text);
      assert.ok(sent, `the upstream received: ${text}`);
      assert.equal(sent[1], caller.traceId);
      assert.notEqual(sent[2], caller.spanId, 'a span id of its own');

      // A sampled call after them: once its span is in, theirs would have been too.
      const marker = callerContext('8e57');
      await fetch(`${world.base}/v1/sessions/${sid}/calls`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          traceparent: marker.traceparent,
        },
        body: JSON.stringify({ tool: 'search_tickets', arguments: { query: 'refund' } }),
      });
      await receiver.waitFor((spans) => spans.some((s) => s.traceId === marker.traceId));
      assert.deepEqual(
        receiver.spans.filter((s) => s.traceId === caller.traceId).map((s) => s.name),
        [],
      );
      await world.tg.gate.flush();
      const rows = await (world.inspector as Store).db
        .selectFrom('audit_log')
        .select(['kind'])
        .where('session_id', '=', sid)
        .where('trace_id', '=', caller.traceId)
        .execute();
      assert.deepEqual(rows.map((r) => r.kind).sort(), ['call.post', 'call.pre']);
    });

    test('a burst of calls: every span is exported, in batches', async () => {
      const rest = restClient(() => world.base, key);
      const exportsBefore = receiver.bodies.length;
      const callers = Array.from({ length: 40 }, (_, i) =>
        callerContext(`9${String(i).padStart(3, '0')}`),
      );
      // In waves of ten, each in a session of its own (search_tickets allows 30 calls a run).
      const answers: number[] = [];
      for (let i = 0; i < callers.length; i += 10) {
        const sid = ((await rest('POST', '/v1/sessions', {})).body as { id: string }).id;
        const wave = callers.slice(i, i + 10).map((c) =>
          fetch(`${world.base}/v1/sessions/${sid}/calls`, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${key}`,
              'content-type': 'application/json',
              traceparent: c.traceparent,
            },
            body: JSON.stringify({ tool: 'search_tickets', arguments: { query: 'refund' } }),
          }).then((a) => a.status),
        );
        answers.push(...(await Promise.all(wave)));
      }
      assert.deepEqual(
        answers,
        callers.map(() => 200),
      );
      const ids = new Set(callers.map((c) => c.traceId));
      const ofBurst = (spans: readonly ReceivedSpan[]) => spans.filter((s) => ids.has(s.traceId));
      // Five spans a call: the call's and its four children.
      await receiver.waitFor((spans) => ofBurst(spans).length >= 5 * callers.length);
      const burst = ofBurst(receiver.spans);
      assert.equal(burst.length, 5 * callers.length, 'no span twice');
      assert.equal(new Set(burst.map((s) => s.spanId)).size, burst.length, 'span ids unique');
      assert.ok(burst.every((s) => /^[0-9a-f]{16}$/.test(s.spanId) && !/^0+$/.test(s.spanId)));
      assert.ok(receiver.bodies.length - exportsBefore >= (5 * callers.length) / 16);
    });

    test('no argument value, result or credential is exported', async () => {
      assert.ok(receiver.bodies.length > 0);
      for (const body of receiver.bodies) {
        assert.equal(body.includes(CANARY), false, 'the canary argument was exported');
        assert.equal(body.includes(key), false, 'the API key was exported');
        assert.equal(body.includes('traceparent='), false, 'a result was exported');
      }
      const expected = protocol === 'http/json' ? 'application/json' : 'application/x-protobuf';
      assert.ok(
        receiver.contentTypes.every((t) => t.startsWith(expected)),
        receiver.contentTypes.join(),
      );
    });
  });
}

describe('closing the tracer', () => {
  test('close exports every span ended, a full batch already handed to the exporter included', async () => {
    const receiver = await startOtlpReceiver();
    try {
      const config = tracingConfigFromEnv({
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        // A call's five spans fill one batch: its export is on its way when close is called.
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '5',
        OTEL_BSP_SCHEDULE_DELAY: '60000',
      });
      assert.ok(config);
      const tracing = startOtelTracing(config);
      const call = tracing.tracer.startCall(undefined, 'ses_close', 'tools/call');
      for (const step of ['policy', 'approval', 'audit-pre', 'execute']) call.step(step).end();
      call.end({ decision: 'allow' });
      await tracing.close();
      assert.deepEqual(receiver.spans.map((s) => s.name).sort(), [
        'execute_tool',
        'toolgate.approval',
        'toolgate.audit-pre',
        'toolgate.execute',
        'toolgate.policy',
      ]);
    } finally {
      await receiver.close();
    }
  });
});

describe('request ids and the trace id in logs and audit, tracing off', () => {
  let world: World;
  let key = '';
  const lines: string[] = [];

  before(async () => {
    const stream = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    world = await openWorld({
      demo: true,
      inspector: true,
      keys: ['support-bot'],
      rest: { logger: { level: 'info', stream } },
    });
    key = world.keys['support-bot'] ?? '';
  });
  after(async () => {
    await world?.close();
  });

  const call = (sid: string, headers: Record<string, string>) =>
    fetch(`${world.base}/v1/sessions/${sid}/calls`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ tool: 'search_tickets', arguments: { query: 'refund' } }),
    });

  test('X-Request-Id is echoed when short and printable, else replaced by the trace id or a fresh id', async () => {
    const rest = restClient(() => world.base, key);
    const sid = ((await rest('POST', '/v1/sessions', {})).body as { id: string }).id;
    const caller = callerContext('4e57');
    const kept = await call(sid, { 'x-request-id': 'abc-123_XYZ' });
    assert.equal(kept.headers.get('x-request-id'), 'abc-123_XYZ');
    const spaced = await call(sid, {
      'x-request-id': 'has space',
      traceparent: caller.traceparent,
    });
    assert.equal(spaced.headers.get('x-request-id'), caller.traceId);
    const long = await call(sid, { 'x-request-id': 'x'.repeat(129) });
    assert.match(long.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    const none = await call(sid, {});
    assert.match(none.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    // A refusal before any route carries it too.
    const refused = await fetch(`${world.base}/v1/tools`, { headers: { 'x-request-id': 'r-401' } });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get('x-request-id'), 'r-401');
  });

  test("the caller's trace id is in the request's log lines and the call's audit records", async () => {
    const rest = restClient(() => world.base, key);
    const sid = ((await rest('POST', '/v1/sessions', {})).body as { id: string }).id;
    const caller = callerContext('5e57');
    const res = await call(sid, { traceparent: caller.traceparent, 'x-request-id': 'log-me-1' });
    assert.equal(res.status, 200);
    const logged = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.request_id === 'log-me-1');
    assert.ok(logged.length >= 2, 'the request and its completion are logged');
    assert.ok(logged.every((l) => l.trace_id === caller.traceId));
    await world.tg.gate.flush();
    const rows = await (world.inspector as Store).db
      .selectFrom('audit_log')
      .select(['kind', 'trace_id'])
      .where('session_id', '=', sid)
      .where('trace_id', '=', caller.traceId)
      .execute();
    assert.deepEqual(rows.map((r) => r.kind).sort(), ['call.post', 'call.pre']);
  });
});

describe('tracing is off by default', () => {
  test('no OTEL variables, or OTEL_TRACES_EXPORTER=none: no export, and no SDK module loaded', async () => {
    const receiver = await startOtlpReceiver();
    try {
      // A child process: this file loads the SDK itself. It records every module resolved. The
      // API package (@opentelemetry/api, no-ops) is loaded by other dependencies anyway.
      const script = `
        import { registerHooks } from 'node:module';
        const seen = [];
        registerHooks({ resolve(spec, ctx, next) { const r = next(spec, ctx); seen.push(r.url); return r; } });
        const { tracingConfigFromEnv } = await import('./src/operations/tracing/index.ts');
        const { openWorld } = await import('./test/support/world.ts');
        for (const env of [{}, { OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: process.env.RECEIVER }]) {
          const world = await openWorld({ demo: true, keys: ['support-bot'], options: { tracing: tracingConfigFromEnv(env) } });
          const sid = (await world.tg.sessions.open('support-bot')).id;
          const d = await world.tg.gate.invoke({ agentId: 'support-bot', sessionId: sid }, 'search_tickets', { query: 'x' });
          if (d.kind !== 'allow') throw new Error(JSON.stringify(d));
          await world.close();
        }
        console.log(JSON.stringify(seen.filter((u) => (u.includes('@opentelemetry/') && !u.includes('@opentelemetry/api/')) || u.includes('otel-call-tracer'))));
      `;
      const child = spawnSync(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', script],
        {
          cwd: ROOT,
          env: { ...process.env, RECEIVER: receiver.url },
          encoding: 'utf8',
          timeout: 60_000,
        },
      );
      assert.equal(child.status, 0, child.stderr);
      const loaded = JSON.parse(child.stdout.trim().split('\n').at(-1) ?? '[]') as string[];
      assert.deepEqual(loaded, [], 'OpenTelemetry SDK modules were loaded with tracing off');
      assert.equal(receiver.bodies.length, 0, 'something was exported');
    } finally {
      await receiver.close();
    }
  });

  test('a variable tracing cannot use fails the start, naming it', () => {
    assert.equal(tracingConfigFromEnv({}), null);
    assert.equal(
      tracingConfigFromEnv({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' }),
      null,
    );
    assert.throws(
      () => tracingConfigFromEnv({ OTEL_TRACES_EXPORTER: 'zipkin' }),
      /OTEL_TRACES_EXPORTER/,
    );
    assert.throws(
      () =>
        tracingConfigFromEnv({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }),
      /OTEL_EXPORTER_OTLP_PROTOCOL/,
    );
    assert.throws(
      () =>
        tracingConfigFromEnv({
          OTEL_TRACES_EXPORTER: 'otlp',
          OTEL_TRACES_SAMPLER: 'traceidratio',
          OTEL_TRACES_SAMPLER_ARG: '2',
        }),
      /OTEL_TRACES_SAMPLER_ARG/,
    );
    const c = tracingConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' });
    assert.equal(c?.endpoint, 'http://collector:4318/v1/traces');
    assert.equal(c?.protocol, 'http/protobuf');
    const t = tracingConfigFromEnv({
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://collector.example/custom',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
    });
    assert.equal(t?.endpoint, 'https://collector.example/custom');
    assert.equal(t?.protocol, 'http/json');
    // The batch processor's settings: the standard defaults, a batch never above the queue.
    assert.deepEqual(
      [c?.scheduleDelayMs, c?.maxQueueSize, c?.maxExportBatchSize, c?.exportTimeoutMs],
      [5000, 2048, 512, 30000],
    );
    const small = tracingConfigFromEnv({
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_BSP_MAX_QUEUE_SIZE: '100',
    });
    assert.equal(small?.maxExportBatchSize, 100, 'the default batch fits a smaller queue');
    const set = tracingConfigFromEnv({
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '64',
      OTEL_BSP_EXPORT_TIMEOUT: '2000',
    });
    assert.deepEqual([set?.maxExportBatchSize, set?.exportTimeoutMs], [64, 2000]);
    assert.throws(
      () =>
        tracingConfigFromEnv({
          OTEL_TRACES_EXPORTER: 'otlp',
          OTEL_BSP_MAX_QUEUE_SIZE: '100',
          OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '600',
        }),
      /OTEL_BSP_MAX_EXPORT_BATCH_SIZE/,
    );
    assert.throws(
      () => tracingConfigFromEnv({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_BSP_EXPORT_TIMEOUT: '0' }),
      /OTEL_BSP_EXPORT_TIMEOUT/,
    );
  });
});
