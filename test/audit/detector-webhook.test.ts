/**
 * The alert webhook goes only to a host of allow_hosts (plain http and loopback are the outbound
 * rules' to refuse: test/oauth/outbound-endpoints.test.ts), never waits on a call,
 * times out, and counts every outcome; a bad detector configuration is refused whole.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import {
  DEFAULT_DETECTORS_CONFIG,
  resolveDetectorsConfig,
  type WebhookOutcome,
} from '../../src/operations/detectors/index.js';
import { WebhookSender } from '../../src/operations/detectors/webhook.js';
import { loopbackFetch } from '../support/webhook-receiver.js';

describe('detector configuration', () => {
  test('defaults: every detector on, none suspends, no webhook, a 5-minute read-then-egress window', () => {
    const c = resolveDetectorsConfig({});
    assert.deepEqual(c, DEFAULT_DETECTORS_CONFIG);
    assert.equal(c.read_then_egress.window_seconds, 300);
    assert.ok(Object.values(c).every((s) => !('suspend' in s) || s.suspend === false));
  });

  test('webhook URLs: a host of allow_hosts only, loopback too (the outbound rules apply besides)', () => {
    for (const [url, host] of [
      ['http://127.0.0.1:9/x', '127.0.0.1'],
      ['http://localhost:9/x', 'localhost'],
      ['http://[::1]:9/x', '[::1]'],
    ] as const) {
      assert.equal(
        resolveDetectorsConfig({ webhook: { url, allow_hosts: [host] } }).webhook.url,
        url,
      );
      // Loopback is no exception to the list: unlisted, it is refused here already.
      assert.throws(() => resolveDetectorsConfig({ webhook: { url } }), { code: 'INPUT_INVALID' });
    }
    assert.equal(
      resolveDetectorsConfig({
        webhook: { url: 'https://hooks.example.com/a', allow_hosts: ['hooks.example.com'] },
      }).webhook.url,
      'https://hooks.example.com/a',
    );
    const refused = [
      { url: 'https://hooks.example.com/a' },
      { url: 'https://evilhooks.example.com/a', allow_hosts: ['hooks.example.com'] },
      { url: 'https://hooks.example.com.evil.net/a', allow_hosts: ['hooks.example.com'] },
      { url: 'https://user:pw@127.0.0.1/a' },
      { url: 'file:///etc/passwd' },
      { url: 'not a url' },
      { url: 'http://169.254.169.254/latest' },
    ];
    for (const webhook of refused) {
      assert.throws(
        () => resolveDetectorsConfig({ webhook }),
        { code: 'INPUT_INVALID' },
        webhook.url,
      );
    }
  });

  test('unknown keys and out-of-range thresholds are refused with every problem listed', () => {
    assert.throws(
      () =>
        resolveDetectorsConfig({
          deny_rate: { threshold: 0 },
          read_then_egress: { window: 5 },
          surprise: true,
        }),
      (err: { code: string; details: { problems: unknown[] } }) =>
        err.code === 'INPUT_INVALID' && err.details.problems.length === 3,
    );
  });
});

describe('webhook delivery', () => {
  let ok: Server;
  let stuck: Server;
  let okUrl = '';
  let stuckUrl = '';
  let received = 0;
  before(async () => {
    ok = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received += 1;
        res.writeHead(200).end('{}');
      });
    });
    // Accepts the request and never answers.
    stuck = createServer(() => {});
    await new Promise<void>((r) => ok.listen(0, '127.0.0.1', r));
    await new Promise<void>((r) => stuck.listen(0, '127.0.0.1', r));
    okUrl = `http://127.0.0.1:${(ok.address() as AddressInfo).port}/`;
    stuckUrl = `http://127.0.0.1:${(stuck.address() as AddressInfo).port}/`;
  });
  after(async () => {
    stuck.closeAllConnections();
    await new Promise((r) => ok.close(r));
    await new Promise((r) => stuck.close(r));
  });

  // 200 ms bounds the tests of a receiver that never answers; one that answers gets 10 s, so a
  // loaded machine cannot turn its delivery into a timeout.
  const sender = (url: string, outcomes: WebhookOutcome[], max = 8, timeout_ms = 200) =>
    new WebhookSender({ url, timeout_ms, max_in_flight: max, fetch: loopbackFetch }, (o) =>
      outcomes.push(o),
    );

  test('delivers to a loopback receiver and counts ok', async () => {
    const outcomes: WebhookOutcome[] = [];
    const s = sender(okUrl, outcomes, 8, 10_000);
    s.send({ a: 1 });
    await s.settled();
    assert.deepEqual(outcomes, ['ok']);
    assert.equal(received, 1);
  });

  test('a receiver that never answers times out (bounded) and is counted as failed; send never waits', async () => {
    const outcomes: WebhookOutcome[] = [];
    const s = sender(stuckUrl, outcomes);
    const t0 = performance.now();
    s.send({ a: 1 });
    assert.ok(performance.now() - t0 < 50, 'send waited for the delivery');
    await s.settled();
    assert.ok(performance.now() - t0 < 2000);
    assert.deepEqual(outcomes, ['failed']);
  });

  test('a closed port is a failure; past the in-flight cap deliveries are dropped and counted', async () => {
    const outcomes: WebhookOutcome[] = [];
    const closed = sender('http://127.0.0.1:1/', outcomes);
    closed.send({});
    await closed.settled();
    assert.deepEqual(outcomes, ['failed']);
    const capped: WebhookOutcome[] = [];
    const s = sender(stuckUrl, capped, 2);
    for (let i = 0; i < 5; i++) s.send({ i });
    assert.deepEqual(capped, ['dropped', 'dropped', 'dropped']);
    await s.settled();
    assert.equal(capped.filter((o) => o === 'failed').length, 2);
  });
});
