/**
 * @module Owner channels go out under the tool-egress rules (docs/security-model.md "Outbound
 * requests that people configure"), over REST with an owner's personal token: loopback, private,
 * link-local and metadata addresses (as literals or behind a name) are refused with a structured
 * error when the channel is added, unless — loopback only — the gateway's admin allowed it; a
 * public host is accepted. At delivery the name is resolved again and the checked address dialled:
 * a name that later points at a forbidden address reaches nothing. A test resolver stands in for
 * DNS (the injection point the egress tests use); the receiver is a real server on 127.0.0.1.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { BOOTSTRAP_OPERATOR } from '../../src/domain/operators/index.js';
import { buildServer } from '../../src/edge/rest/index.js';
import { OutboundGuard, type Resolver } from '../../src/execution/sandbox/index.js';
import { openGateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { validTool } from '../support/tools.js';
import { type Receiver, webhookReceiver } from '../support/webhook-receiver.js';

/** Channel URLs are sealed: every gateway of this file shares one master key. */
const MASTER_KEY = MasterKey.generate();

const ADMIN_TOKEN = 'admin-token-for-owner-egress-tests-0123456789';
const dns = new Map<string, string>([
  ['hooks.test', '93.184.216.34'],
  ['metadata.test', '169.254.169.254'],
  ['internal.test', '10.1.2.3'],
  ['home.test', '127.0.0.1'],
]);
const resolver: Resolver = async (host) => {
  const address = dns.get(host);
  if (address === undefined) throw new Error(`no such host ${host}`);
  return [{ address, family: address.includes(':') ? 6 : 4 }];
};

async function gatewayWith(allowLoopback: boolean) {
  const backend = backends()[0];
  assert.ok(backend);
  const fresh = await backend.fresh();
  const tg = await openGateway({
    db: fresh.url,
    detectors: false,
    teams: ['billing-team'],
    outbound: { resolver, allowLoopback },
    masterKey: MASTER_KEY,
  });
  await tg.admin.operators.create(BOOTSTRAP_OPERATOR, {
    id: 'olga',
    roles: ['owner'],
    teams: ['billing-team'],
  });
  const token = (
    await tg.admin.operators.issueToken(BOOTSTRAP_OPERATOR, {
      operatorId: 'olga',
      name: 'test',
      expiresInDays: 1,
    })
  ).token;
  const app = await buildServer(tg, { adminToken: ADMIN_TOKEN });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  const add = async (url: string) => {
    const res = await fetch(`${base}/v1/owner-channels`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ team: 'billing-team', url }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  return { tg, app, add, drop: fresh.drop };
}

const ruleOf = (body: Record<string, unknown>) =>
  (body.details as { problems: { rule: string; pointer: string }[] }).problems[0];

describe('owner channels under the egress rules', () => {
  let hook: Receiver;
  let strict: Awaited<ReturnType<typeof gatewayWith>>;
  let lenient: Awaited<ReturnType<typeof gatewayWith>>;

  before(async () => {
    hook = await webhookReceiver();
    strict = await gatewayWith(false);
    lenient = await gatewayWith(true);
  });
  after(async () => {
    for (const g of [strict, lenient]) {
      await (g.app as FastifyInstance).close();
      await g.tg.close();
      await g.drop();
    }
    await hook.close();
  });

  test('an owner cannot point a channel at loopback, private or metadata addresses', async () => {
    for (const [url, rule] of [
      [hook.url, 'egress.address_forbidden'],
      ['https://127.0.0.1:8443/x', 'egress.address_forbidden'],
      ['https://localhost/x', 'egress.address_forbidden'],
      ['https://[::1]/x', 'egress.address_forbidden'],
      ['https://[::ffff:127.0.0.1]/x', 'egress.address_forbidden'],
      ['https://169.254.169.254/latest/meta-data', 'egress.metadata_address'],
      ['https://10.0.0.8/x', 'egress.address_forbidden'],
      ['https://metadata.test/x', 'egress.metadata_address'],
      ['https://internal.test/x', 'egress.address_forbidden'],
      ['https://home.test/x', 'egress.address_forbidden'],
      ['https://hooks.test:8443/x', 'egress.port'],
      ['http://hooks.test/x', 'egress.scheme'],
      ['https://93.184.216.34/x', 'egress.ip_literal'],
      ['https://nowhere.test/x', 'egress.dns'],
    ] as const) {
      const res = await strict.add(url);
      assert.equal(res.status, 400, url);
      assert.equal(res.body.code, 'INPUT_INVALID', url);
      assert.deepEqual([ruleOf(res.body)?.pointer, ruleOf(res.body)?.rule], ['/url', rule], url);
    }
    assert.deepEqual(await strict.tg.ownerChannels.list(), []);
    // The benign neighbour: a public host on https.
    assert.equal((await strict.add('https://hooks.test/T01/secret')).status, 201);
  });

  test("loopback only where the gateway's admin allowed it, and nothing else with it", async () => {
    const res = await lenient.add(hook.url);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    for (const url of [
      'https://169.254.169.254/x',
      'https://metadata.test/x',
      'https://internal.test/x',
      'http://10.0.0.8:8080/x',
    ]) {
      assert.equal((await lenient.add(url)).status, 400, url);
    }
    // The allowed loopback channel is delivered to.
    await lenient.tg.config.apply([{ kind: 'Tool', spec: validTool() }], {
      id: 'test-admin',
      via: 'library',
    });
    const before = hook.bodies.length;
    assert.equal(
      await lenient.tg.ownerNotices.toolEvent({
        kind: 'unhealthy',
        tool_id: 'lookup_invoice',
        version: '1.0.0',
      }),
      'sent',
    );
    await hook.received(before + 1);
  });

  test('at delivery the name is resolved again and a forbidden answer reaches nothing', async () => {
    const answers = new Map<string, string>([['flip.test', '93.184.216.34']]);
    const flipping: Resolver = async (host) => [{ address: answers.get(host) ?? host, family: 4 }];
    const guard = new OutboundGuard({ resolver: flipping });
    assert.equal(await guard.problem('https://flip.test/hook'), null);
    answers.set('flip.test', '127.0.0.1');
    await assert.rejects(guard.fetch('https://flip.test/hook', { method: 'POST', body: '{}' }), {
      rule: 'egress.address_forbidden',
    });
    answers.set('flip.test', '169.254.169.254');
    await assert.rejects(guard.fetch('https://flip.test/hook', { method: 'POST', body: '{}' }), {
      rule: 'egress.metadata_address',
    });
    // With loopback allowed, the same guard reaches the real loopback receiver by its address.
    const before = hook.bodies.length;
    const open = new OutboundGuard({ resolver: flipping, allowLoopback: true });
    const res = await open.fetch(hook.url, { method: 'POST', body: '{"ok":true}' });
    assert.equal(res.status, 200);
    await hook.received(before + 1);
    // A redirect is answered as it is, never followed.
    hook.reply = () => 302;
    const redirected = await open.fetch(hook.url, { method: 'POST', body: '{}' });
    assert.equal(redirected.status, 302);
    hook.reply = () => 200;
  });
});
