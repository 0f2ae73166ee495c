/**
 * The `http` runtime against a real HTTPS server on 127.0.0.1 with a test certificate for
 * api.example.test. Names resolve through a table; only `127.0.0.1:<port>` is an unsafe test
 * target, and the test CA is trusted only by the runner built for these tests.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { checkToolDefinition, type ToolDefinition } from '../../src/domain/catalog/index.js';
import { checkedFetch } from '../../src/execution/providers/index.js';
import {
  fillPathTemplate,
  HttpRuntime,
  HttpToolRunner,
  type RuntimeContext,
} from '../../src/execution/runtimes/index.js';
import { createByteBudget } from '../../src/execution/sandbox/index.js';
import { tableResolver } from '../support/egress.js';
import { validSendTool } from '../support/tools.js';

const tlsDir = new URL('../fixtures/egress-tls/', import.meta.url);
const ca = readFileSync(new URL('ca.pem', tlsDir), 'utf8');
const TABLE: Record<string, readonly string[]> = {
  'api.example.test': ['127.0.0.1'],
  'meta.example.test': ['169.254.169.254'],
  'other.example.test': ['127.0.0.1'],
};

interface Seen {
  method: string;
  url: string;
  headers: Record<string, unknown>;
  body: string;
}
const seen: Seen[] = [];
const hangClosed: (() => void)[] = [];
let server: https.Server;
let P = 0;
let runner: HttpToolRunner;

function def(
  runtime: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): ToolDefinition {
  const checked = checkToolDefinition(
    validSendTool({
      egress: { mode: 'constrained', hosts: ['api.example.test'] },
      runtime: {
        kind: 'http',
        base_url: 'https://api.example.test/v1',
        method: 'POST',
        path: '/x',
      },
      ...extra,
    }),
  );
  if (!checked.ok) throw new Error(JSON.stringify(checked.problems));
  // The catalog only registers default ports; the test upstream has its own.
  const base = String(runtime.base_url ?? `https://api.example.test:${P}/v1`);
  return {
    ...checked.definition,
    runtime: { ...(checked.definition.runtime as object), ...runtime, base_url: base },
  } as ToolDefinition;
}

const budget = () => createByteBudget(1_000_000);

before(async () => {
  server = https.createServer(
    {
      key: readFileSync(new URL('server.key', tlsDir)),
      cert: readFileSync(new URL('server.pem', tlsDir)),
    },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        });
        if (req.url?.startsWith('/v1/hang')) {
          // Never answers; tells the test when the runtime hung up.
          req.socket.once('close', () => {
            for (const f of hangClosed) f();
          });
          return;
        }
        if (req.url?.startsWith('/v1/redirect-echo')) {
          // Echoes the request's credential into the Location, as a careless API might.
          const key = String(req.headers['x-api-key'] ?? '');
          res.writeHead(302, { location: `https://login.example.test/sso?key=${key}&next=/v1` });
          res.end();
        } else if (req.url?.startsWith('/v1/redirect')) {
          res.writeHead(302, { location: 'https://evil.example.test/' });
          res.end();
        } else if (req.url?.startsWith('/v1/big')) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ blob: 'b'.repeat(20_000) }));
        } else if (req.url?.startsWith('/v1/text')) {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.end('hello');
        } else if (req.url?.startsWith('/v1/missing')) {
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end('{"error":"nope"}');
        } else {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ id: 'r-1', url: req.url }));
        }
      });
    },
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  P = (server.address() as AddressInfo).port;
  runner = new HttpToolRunner({
    resolver: tableResolver(TABLE),
    unsafeTestTargets: [`127.0.0.1:${P}`],
    unsafeTestCa: ca,
    ports: [P],
  });
});

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

describe('http runtime: the allowed path', () => {
  test('a POST sends the arguments as JSON to the assembled URL and returns parsed JSON', async () => {
    const n = seen.length;
    const b = budget();
    const r = await runner.run(
      def({ method: 'POST', path: '/send/{to}' }),
      { to: 'ana@customer.example', text: 'hi' },
      { budget: b },
    );
    assert.ok(r.ok, JSON.stringify(r));
    assert.equal(r.status, 200);
    assert.deepEqual(r.output, { id: 'r-1', url: '/v1/send/ana%40customer.example' });
    assert.equal(r.resolvedHost, 'api.example.test');
    assert.equal(r.address, '127.0.0.1');
    assert.ok(r.bytesOut > 0 && r.bytesIn > 0);
    assert.equal(b.spent(), r.bytesOut + r.bytesIn);
    assert.deepEqual(JSON.parse(seen[n]?.body ?? ''), { text: 'hi' });
    assert.equal(seen[n]?.headers.host, `api.example.test:${P}`);
  });

  test('a GET sends the other arguments as the query', async () => {
    const n = seen.length;
    const r = await runner.run(
      def({ method: 'GET', path: '/items/{id}' }),
      { id: 42, q: 'a b&c=d', tags: ['x', 'y'] },
      { budget: budget() },
    );
    assert.ok(r.ok, JSON.stringify(r));
    assert.equal(seen[n]?.url, '/v1/items/42?q=a+b%26c%3Dd&tags=x&tags=y');
  });

  test('the credential goes in its header to its own host', async () => {
    const n = seen.length;
    const token = `ghp_${'T'.repeat(36)}`;
    const r = await runner.run(
      def(
        { method: 'GET', path: '/me' },
        { credentials: { secret: 'api-token', inject: 'header', as: 'X-Api-Key' } },
      ),
      {},
      { budget: budget(), credential: token },
    );
    assert.ok(r.ok, JSON.stringify(r));
    assert.equal(seen[n]?.headers['x-api-key'], token);
  });

  test("a traced call's context goes in the traceparent header; an untraced call sends none", async () => {
    const n = seen.length;
    const traceparent = `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01`;
    const traced = await runner.run(
      def({ method: 'GET', path: '/me' }),
      {},
      { budget: budget(), traceparent },
    );
    assert.ok(traced.ok, JSON.stringify(traced));
    assert.equal(seen[n]?.headers.traceparent, traceparent);
    const plain = await runner.run(def({ method: 'GET', path: '/me' }), {}, { budget: budget() });
    assert.ok(plain.ok, JSON.stringify(plain));
    assert.equal(seen[n + 1]?.headers.traceparent, undefined);
  });

  test("an HTTP MCP upstream's request carries the traceparent of its _meta as its header", async () => {
    const n = seen.length;
    const url = `https://api.example.test:${P}/v1/mcp`;
    const fetchUpstream = checkedFetch(url, {
      resolver: tableResolver(TABLE),
      unsafeTestTargets: [`127.0.0.1:${P}`],
      unsafeTestCa: ca,
    });
    const traceparent = `00-${'3'.repeat(32)}-${'4'.repeat(16)}-01`;
    const message = (meta: Record<string, unknown>) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'x', _meta: meta },
      });
    const headers = { 'content-type': 'application/json' };
    await fetchUpstream(url, { method: 'POST', headers, body: message({ traceparent }) });
    assert.equal(seen[n]?.headers.traceparent, traceparent);
    // Not a traceparent: no header (the value is checked before it becomes one).
    await fetchUpstream(url, {
      method: 'POST',
      headers,
      body: message({ traceparent: 'x\r\nevil: 1' }),
    });
    assert.equal(seen[n + 1]?.headers.traceparent, undefined);
  });
});

describe('http runtime: the URL is assembled, never supplied', () => {
  test('placeholders are one percent-encoded segment: no "/", "..", "?", "#" or scheme', () => {
    const cases: [unknown, string][] = [
      ['a/b', '/x/a%2Fb'],
      ['a?b=1', '/x/a%3Fb%3D1'],
      ['a#b', '/x/a%23b'],
      ['https://evil.example/', '/x/https%3A%2F%2Fevil.example%2F'],
      ['@evil.example', '/x/%40evil.example'],
      ['%2e%2e', '/x/%252e%252e'],
      ['..%2f', '/x/..%252f'],
    ];
    for (const [value, expected] of cases) {
      const r = fillPathTemplate('/x/{v}', { v: value });
      assert.ok(r.ok, String(value));
      if (r.ok) assert.equal(r.path, expected);
    }
    for (const value of ['..', '.', '', null, { a: 1 }, [1], Number.NaN, undefined, '\ud800']) {
      const r = fillPathTemplate('/x/{v}', { v: value });
      assert.equal(r.ok, false, JSON.stringify(value));
      if (!r.ok) assert.equal(r.rule, 'http.path_argument');
    }
  });

  test('a path argument that would climb or break out is refused before anything is sent', async () => {
    const n = seen.length;
    const r = await runner.run(
      def({ method: 'GET', path: '/items/{id}' }),
      { id: '..' },
      {
        budget: budget(),
      },
    );
    assert.equal(r.ok, false);
    if (!r.ok) assert.equal(r.rule, 'http.path_argument');
    assert.equal(seen.length, n);
  });

  test('an argument named like the host does not change the host', async () => {
    const n = seen.length;
    const r = await runner.run(
      def({ method: 'GET', path: '/items' }),
      { host: 'evil.example.test', base_url: 'https://evil.example.test' },
      { budget: budget() },
    );
    assert.ok(r.ok);
    assert.equal(seen[n]?.headers.host, `api.example.test:${P}`);
  });
});

describe('http runtime: egress rules', () => {
  test('a base host not on the egress list is refused', async () => {
    const r = await runner.run(
      def({ method: 'GET', path: '/x', base_url: `https://other.example.test:${P}/v1` }),
      {},
      { budget: budget() },
    );
    assert.equal(r.ok, false);
    if (!r.ok) assert.equal(r.rule, 'egress.host_not_allowed');
  });

  test('an allowed name resolving to a metadata address is refused', async () => {
    const d = def(
      { method: 'GET', path: '/x', base_url: `https://meta.example.test:${P}/v1` },
      { egress: { mode: 'constrained', hosts: ['api.example.test', 'meta.example.test'] } },
    );
    const r = await runner.run(d, {}, { budget: budget() });
    assert.equal(r.ok, false);
    if (!r.ok) assert.equal(r.rule, 'egress.metadata_address');
  });

  test('without the test exemption, loopback is refused', async () => {
    const strict = new HttpToolRunner({
      resolver: tableResolver(TABLE),
      unsafeTestCa: ca,
      ports: [P],
    });
    const r = await strict.run(def({ method: 'GET', path: '/x' }), {}, { budget: budget() });
    assert.equal(r.ok, false);
    if (!r.ok) assert.equal(r.rule, 'egress.address_forbidden');
  });

  test('only port 443 by default', async () => {
    const plain = new HttpToolRunner({ resolver: tableResolver(TABLE) });
    const r = await plain.run(def({ method: 'GET', path: '/x' }), {}, { budget: budget() });
    assert.equal(r.ok, false);
    if (!r.ok) assert.equal(r.rule, 'egress.port');
  });

  test('an upstream certificate the runner does not trust fails the call', async () => {
    const untrusting = new HttpToolRunner({
      resolver: tableResolver(TABLE),
      unsafeTestTargets: [`127.0.0.1:${P}`],
      ports: [P],
    });
    const r = await untrusting.run(def({ method: 'GET', path: '/x' }), {}, { budget: budget() });
    assert.equal(r.ok, false);
    if (!r.ok) assert.equal(r.rule, 'http.tls');
  });

  test('a redirect is never followed and is reported as an egress denial', async () => {
    const r = await runner.run(def({ method: 'GET', path: '/redirect' }), {}, { budget: budget() });
    assert.equal(r.ok, false);
    if (!r.ok) {
      assert.equal(r.rule, 'egress.redirect');
      assert.equal(r.status, 302);
    }
  });

  test("a refused redirect's message names its host, never the Location's path or query", async () => {
    const token = 'tok-redirect-0123456789abcdef';
    const r = await runner.run(
      def(
        { method: 'GET', path: '/redirect-echo' },
        { credentials: { secret: 'api-token', inject: 'header', as: 'X-Api-Key' } },
      ),
      {},
      { budget: budget(), credential: token },
    );
    assert.equal(r.ok, false);
    if (!r.ok) {
      assert.equal(r.rule, 'egress.redirect');
      assert.ok(!JSON.stringify(r).includes(token), JSON.stringify(r));
      assert.match(r.message, /redirect to "login\.example\.test";/);
    }
  });

  test('a secret-shaped argument is not sent', async () => {
    const n = seen.length;
    const r = await runner.run(
      def({ method: 'POST', path: '/send' }),
      { to: 'a@b.example', text: `key: xoxb-${'1'.repeat(12)}-abcdefghijkl` },
      { budget: budget() },
    );
    assert.equal(r.ok, false);
    if (!r.ok) {
      assert.equal(r.code, 'EGRESS_DENIED');
      assert.equal(r.rule, 'egress.secret.slack_token');
    }
    assert.equal(seen.length, n);
  });

  test("the tool's own credential in an argument is still its audience's (not a leak)", async () => {
    const token = `ghp_${'T'.repeat(36)}`;
    const r = await runner.run(
      def(
        { method: 'POST', path: '/send' },
        {
          credentials: { secret: 'api-token', inject: 'header', as: 'X-Api-Key' },
        },
      ),
      { to: 'a@b.example', text: token },
      { budget: budget(), credential: token },
    );
    assert.ok(r.ok, JSON.stringify(r));
  });

  test('the byte budget is checked before sending and while receiving', async () => {
    const n = seen.length;
    const tiny = await runner.run(
      def({ method: 'GET', path: '/x' }),
      {},
      {
        budget: createByteBudget(10),
      },
    );
    assert.equal(tiny.ok, false);
    if (!tiny.ok) assert.equal(tiny.code, 'BUDGET_EXCEEDED');
    assert.equal(seen.length, n);
    const b = createByteBudget(3_000);
    const big = await runner.run(def({ method: 'GET', path: '/big' }), {}, { budget: b });
    assert.equal(big.ok, false);
    if (!big.ok) assert.equal(big.rule, 'egress.budget');
    assert.ok(b.spent() <= 3_000);
  });

  test('a response over the size cap is refused', async () => {
    const capped = new HttpToolRunner({
      resolver: tableResolver(TABLE),
      unsafeTestTargets: [`127.0.0.1:${P}`],
      unsafeTestCa: ca,
      ports: [P],
      maxResponseBytes: 1_000,
    });
    const r = await capped.run(def({ method: 'GET', path: '/big' }), {}, { budget: budget() });
    assert.equal(r.ok, false);
    if (!r.ok) assert.equal(r.rule, 'http.response_too_large');
  });

  test('non-JSON and non-2xx answers are failures with their status', async () => {
    const text = await runner.run(def({ method: 'GET', path: '/text' }), {}, { budget: budget() });
    assert.equal(text.ok, false);
    if (!text.ok) assert.equal(text.rule, 'http.response_not_json');
    const missing = await runner.run(
      def({ method: 'GET', path: '/missing' }),
      {},
      {
        budget: budget(),
      },
    );
    assert.equal(missing.ok, false);
    if (!missing.ok) {
      assert.equal(missing.rule, 'http.status');
      assert.equal(missing.status, 404);
    }
  });

  test('a call past the wall-time limit is cut and reported', async () => {
    const d = def({ method: 'GET', path: '/hang' });
    const slow = {
      ...d,
      sandbox: { ...d.sandbox, limits: { ...d.sandbox.limits, wall_time_ms: 300 } },
    };
    const t0 = Date.now();
    const closed = new Promise<void>((resolve) => hangClosed.push(resolve));
    const r = await runner.run(slow, {}, { budget: budget() });
    assert.equal(r.ok, false);
    if (!r.ok) assert.equal(r.rule, 'http.timeout');
    assert.ok(Date.now() - t0 < 2_000);
    // The connection is cut, not left to run on after the call was answered.
    const cut = await Promise.race([
      closed.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 1_000)),
    ]);
    assert.ok(cut, 'the upstream connection stayed open after the deadline');
  });

  test('a tool whose runtime is not http is refused', async () => {
    const checked = checkToolDefinition(
      validSendTool({ runtime: { kind: 'inline', handler: 'x' } }),
    );
    assert.ok(checked.ok);
    if (checked.ok) {
      const r = await runner.run(checked.definition, {}, { budget: budget() });
      assert.equal(r.ok, false);
    }
  });
});

describe('the http runtime behind the port (HttpRuntime)', () => {
  const port = () => new HttpRuntime(runner);
  const context = (def: ToolDefinition, credentials: RuntimeContext['credentials']) => ({
    callId: 'call-http-port',
    sessionId: 'session-http-port',
    agentId: 'agent-http-port',
    userId: null,
    credentials,
    budget: createByteBudget(1_000_000),
    destinations: new Set<string>(),
    wallTimeMs: def.sandbox.limits.wall_time_ms,
    validateOutput: () => true,
  });
  const TOKEN = 'sk-port-token-0123456789abcdef';

  test('a header credential goes in its header; the result reports host, address and bytes', async () => {
    const d = def(
      { method: 'GET', path: '/items/{id}' },
      { credentials: { secret: 'api-token', inject: 'header', as: 'X-Api-Key' } },
    );
    const n = seen.length;
    const ctx = context(d, {
      env: {},
      headers: { 'X-Api-Key': TOKEN },
      redact: [TOKEN],
      audience: [],
    });
    const r = await port().run(d, { id: 'a1' }, ctx);
    assert.equal(r.ok, true, JSON.stringify(r));
    assert.equal(r.outcome, 'ok');
    assert.equal(seen[n]?.headers['x-api-key'], TOKEN);
    assert.equal(r.egress?.egressHost, 'api.example.test=127.0.0.1');
    assert.equal(ctx.budget.spent(), (r.egress?.bytesOut ?? 0) + (r.egress?.bytesIn ?? 0));
    assert.deepEqual(r.egress?.denials, []);
  });

  test('an env credential is never sent by the http runtime', async () => {
    const d = def(
      { method: 'GET', path: '/items/{id}' },
      { credentials: { secret: 'api-token', inject: 'env', as: 'API_TOKEN' } },
    );
    const n = seen.length;
    const creds = { env: { API_TOKEN: TOKEN }, headers: {}, redact: [TOKEN], audience: [] };
    const r = await port().run(d, { id: 'a2' }, context(d, creds));
    assert.equal(r.ok, true, JSON.stringify(r));
    assert.ok(!JSON.stringify(seen[n]).includes(TOKEN));
  });

  test("a failure's outcome is its rule, and the refusal is in the egress record", async () => {
    const d = def({ method: 'GET', path: '/missing' });
    const r = await port().run(d, {}, context(d, null));
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.rule, 'http.status');
    assert.equal(r.outcome, 'http.status');
    assert.deepEqual(r.egress?.denials, [{ rule: 'http.status', host: 'api.example.test' }]);
  });
});
