/**
 * Metrics people can use, through a real server: HTTP and MCP requests
 * counted and timed by route pattern, method and outcome; admission refusals by reason; process
 * and Node metrics and the build-info metric. Whatever a client sends — random paths, made-up
 * HTTP and JSON-RPC methods — the label sets stay bounded.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { Registry } from 'prom-client';
import { RequestMetrics } from '../../src/operations/metrics/request-metrics.js';
import { openWorld, postMcp, restClient, type World } from '../support/world.js';

const ADMIN = 'admin-token-for-request-metrics-0123456789';

/** The series of one metric family in a Prometheus text exposition. */
function series(text: string, name: string): string[] {
  return text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
}

/** The value of the one series of `name` whose labels include every one of `labels`. */
function value(text: string, name: string, labels: Record<string, string>): number {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const lines = series(text, name).filter((l) => want.every((w) => l.includes(w)));
  assert.equal(lines.length, 1, `one series of ${name} ${want.join(',')}: ${lines.join(' | ')}`);
  return Number(lines[0]?.split(' ').at(-1));
}

describe('request metrics over a real server', () => {
  let world: World;
  let base = '';
  let key = '';
  const rest = restClient(() => base);
  const scrape = async () => {
    const r = await rest('GET', '/metrics', undefined, ADMIN);
    assert.equal(r.status, 200);
    return r.text;
  };

  before(async () => {
    world = await openWorld({
      demo: true,
      keys: ['support-bot'],
      // One agent request at a time and no queue: a held request makes the next one a refusal.
      rest: { adminToken: ADMIN, admission: { maxInFlight: 1, maxQueued: 0 } },
      options: { caps: { maxSessionsPerAgent: 4, maxPendingApprovalsPerAgent: 1 } },
    });
    base = world.base;
    key = world.keys['support-bot'] ?? '';
  });
  after(async () => {
    await world.close();
  });

  test('HTTP requests are counted and timed by route pattern, method and status class', async () => {
    const sid = (await rest('POST', '/v1/sessions', {}, key)).body.id as string;
    const call = await rest(
      'POST',
      `/v1/sessions/${sid}/calls`,
      { tool: 'search_tickets', arguments: { query: 'refund' } },
      key,
    );
    assert.equal(call.status, 200, call.text);
    assert.equal((await rest('GET', '/v1/tools', undefined, null)).status, 401);
    const m = await scrape();
    const route = '/v1/sessions/:id/calls';
    assert.equal(
      value(m, 'toolgate_http_requests_total', { route, method: 'POST', outcome: '2xx' }),
      1,
    );
    assert.equal(
      value(m, 'toolgate_http_request_duration_seconds_count', {
        route,
        method: 'POST',
        outcome: '2xx',
      }),
      1,
    );
    assert.equal(
      value(m, 'toolgate_http_requests_total', {
        route: '/v1/tools',
        method: 'GET',
        outcome: '4xx',
      }),
      1,
    );
    // The raw URL (a session id) is never a label.
    assert.ok(!m.includes(sid), 'a session id reached a label');
  });

  test('MCP requests are counted by JSON-RPC method; unknown methods are "other"', async () => {
    const init = await postMcp(
      base,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'metrics', version: '1' },
        },
      },
      key,
    );
    assert.equal(init.status, 200);
    await init.text();
    const m = await scrape();
    assert.equal(value(m, 'toolgate_mcp_requests_total', { method: 'initialize' }), 1);
    assert.equal(
      value(m, 'toolgate_mcp_request_duration_seconds_count', { method: 'initialize' }),
      1,
    );
    assert.equal(
      value(m, 'toolgate_http_requests_total', { route: '/mcp', method: 'POST', outcome: '2xx' }),
      1,
    );
  });

  test('label sets stay bounded whatever clients send: random paths, methods, JSON-RPC methods', async () => {
    const before = await scrape();
    const families = [
      'toolgate_http_requests_total',
      'toolgate_mcp_requests_total',
      'toolgate_http_request_duration_seconds_bucket',
    ];
    // One round of each kind first, so every series a kind can make exists.
    const round = async (i: number) => {
      const junk = `${randomUUID()}-${i}`;
      await rest('GET', `/${junk}`, undefined, null);
      await rest('GET', `/v1/${junk}/x?y=${junk}`, undefined, ADMIN);
      await rest('PROPFIND', `/v1/tools/${junk}`, undefined, null);
      const r = await postMcp(base, { jsonrpc: '2.0', id: i, method: `x/${junk}` }, key);
      await r.text();
    };
    await round(0);
    const counts = async () => {
      const m = await scrape();
      return families.map((f) => series(m, f).length);
    };
    const first = await counts();
    for (let i = 1; i <= 25; i++) await round(i);
    assert.deepEqual(await counts(), first, 'new requests grew a label set');
    const m = await scrape();
    assert.ok(!m.includes('x/'), 'an unknown JSON-RPC method reached a label');
    assert.ok(!/PROPFIND/.test(m), 'an unknown HTTP method reached a label');
    assert.ok(
      value(m, 'toolgate_http_requests_total', { route: 'unmatched', method: 'GET' }) >= 26,
    );
    assert.ok(value(m, 'toolgate_mcp_requests_total', { method: 'other' }) >= 26);
    assert.ok(before.length > 0);
  });

  test("a cap's refusal is counted by its cap; the pending-approval cap (a gate decision) is not", async () => {
    const opened = await rest('POST', '/v1/sessions', {}, key);
    assert.equal(opened.status, 201, opened.text);
    const sid = opened.body.id as string;
    const send = (body: string) =>
      rest(
        'POST',
        `/v1/sessions/${sid}/calls`,
        { tool: 'send_email', arguments: { to: 'ana@customer.example', subject: 'Hi', body } },
        key,
      );
    assert.equal((await send('first')).status, 202);
    const over = await send('second');
    assert.equal(over.status, 429, over.text);
    assert.ok(over.headers.get('retry-after'));
    let status = 0;
    for (let i = 0; i < 6 && status !== 429; i++)
      status = (await rest('POST', '/v1/sessions', {}, key)).status;
    assert.equal(status, 429, 'the session cap refused');
    const m = await scrape();
    assert.equal(
      value(m, 'toolgate_admission_refusals_total', { reason: 'sessions_per_agent' }),
      1,
    );
    assert.equal(
      series(m, 'toolgate_admission_refusals_total').filter((l) => l.includes('"other"')).length,
      0,
    );
  });

  test('process and Node metrics and the build info are exposed', async () => {
    const m = await scrape();
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    assert.match(
      m,
      new RegExp(
        `toolgate_build_info\\{version="${version.replaceAll('.', '\\.')}",node_version="${process.version}"[^}]*\\} 1`,
      ),
    );
    for (const name of [
      'toolgate_process_cpu_seconds_total',
      'toolgate_process_resident_memory_bytes',
      'toolgate_nodejs_eventloop_lag_p99_seconds',
      'toolgate_nodejs_heap_size_used_bytes',
    ])
      assert.ok(series(m, name).length > 0, `${name} missing`);
  });

  test('admission refusals are counted by reason', async () => {
    const port = new URL(base).port;
    // A request whose body never finishes holds the agents' only slot.
    const held = request({
      host: '127.0.0.1',
      port,
      path: '/v1/sessions',
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'content-length': '100',
      },
    });
    held.on('error', () => {});
    held.write('{');
    try {
      let refused = 0;
      for (let i = 0; i < 20 && refused === 0; i++) {
        await new Promise((r) => setTimeout(r, 50));
        const r = await rest('POST', '/v1/sessions', {}, key);
        if (r.status === 503) refused = 1;
      }
      assert.equal(refused, 1, 'the second request was not refused');
      const m = await scrape();
      assert.ok(value(m, 'toolgate_admission_refusals_total', { reason: 'queue' }) >= 1);
    } finally {
      held.destroy();
    }
  });
});

test('the metrics bound every label themselves: routes past the cap, methods, reasons', async () => {
  const registry = new Registry();
  const m = new RequestMetrics(registry);
  for (let i = 0; i < 700; i++) {
    m.http(`/r/${i}`, `M${i}`, 200 + i, 0.01);
    m.mcp(`m/${i}`, 200, 0.01);
    m.refused(`cap-${i}`);
  }
  const text = await registry.metrics();
  const routes = new Set([...text.matchAll(/route="([^"]*)"/g)].map((r) => r[1]));
  assert.ok(routes.size <= 513, `${routes.size} routes`);
  assert.ok(routes.has('other'));
  assert.deepEqual(
    new Set([...text.matchAll(/[{,]method="([^"]*)"/g)].map((r) => r[1])),
    new Set(['other']),
  );
  const outcomes = new Set([...text.matchAll(/outcome="([^"]*)"/g)].map((r) => r[1]));
  assert.ok(
    [...outcomes].every((o) => /^[1-5]xx$|^other$/.test(o ?? '')),
    [...outcomes].join(),
  );
  assert.deepEqual(
    new Set([...text.matchAll(/reason="([^"]*)"/g)].map((r) => r[1])),
    new Set(['other']),
  );
});
