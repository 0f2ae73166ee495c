/**
 * @module Owner channels over REST (docs/architecture.md §6, §8): an admin adds a channel for any
 * team and the URL never comes back; an owner manages only their own teams' channels (another
 * team's: FORBIDDEN to add, not found to remove, absent from lists); an auditor reads and cannot
 * change; bad bodies are refused with a structured error and store nothing; every change is an
 * audited event naming the operator. The notice then reaches the real receiver.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { MasterKey } from '../../src/domain/credentials/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import type { OwnerNoticePayload } from '../../src/operations/owners/index.js';
import { backends } from '../support/backends.js';
import { validTool } from '../support/tools.js';
import { LOOPBACK_OUTBOUND, type Receiver, webhookReceiver } from '../support/webhook-receiver.js';
import { addOperators, openWorld, type World } from '../support/world.js';

/** Channel URLs are sealed: every gateway of this file shares one master key. */
const MASTER_KEY = MasterKey.generate();

const admin: Actor = { id: 'test-admin', via: 'library' };
const ADMIN_TOKEN = 'admin-token-for-owner-channel-tests-0123456789';

describe('owner channels over REST', () => {
  let tg: Gateway;
  let world: World;
  let base = '';
  let hook: Receiver;
  const tokens: Record<string, string> = {};

  const call = (method: string, path: string, who: string, body?: unknown) =>
    fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${who === 'admin' ? ADMIN_TOKEN : tokens[who]}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });

  before(async () => {
    hook = await webhookReceiver();
    const backend = backends()[0];
    assert.ok(backend);
    world = await openWorld({
      backend,
      rest: { adminToken: ADMIN_TOKEN },
      options: {
        outbound: LOOPBACK_OUTBOUND,
        masterKey: MASTER_KEY,
        detectors: false,
        teams: ['billing-team'],
      },
    });
    ({ tg, base } = world);
    await tg.config.apply([{ kind: 'Tool', spec: validTool() }], admin);
    Object.assign(
      tokens,
      await addOperators(tg, [
        { id: 'olga', roles: ['owner'], teams: ['billing-team'], token: true },
        { id: 'otto', roles: ['owner'], teams: ['ops-team'], token: true },
        { id: 'audrey', roles: ['auditor'], teams: [], token: true },
      ]),
    );
  });
  after(async () => {
    await world.close();
    await hook.close();
  });

  test('an owner adds a channel for their team; the URL is never returned, the event names them', async () => {
    const url = `${hook.url}/T01/B02/verysecretpart`;
    const res = await call('POST', '/v1/owner-channels', 'olga', { team: 'billing-team', url });
    assert.equal(res.status, 201);
    const text = await res.text();
    assert.ok(!text.includes('verysecretpart'));
    const created = JSON.parse(text) as {
      id: string;
      team: string;
      url_hint: string;
      created_by: string;
    };
    assert.equal(created.team, 'billing-team');
    assert.equal(created.created_by, 'operator:olga');
    const list = await call('GET', '/v1/owner-channels', 'admin');
    assert.equal(list.status, 200);
    assert.ok(!(await list.text()).includes('verysecretpart'));
    const ev = (await tg.events.list({ limit: 1000 })).filter(
      (e) => e.action === 'owner_channel.added',
    );
    assert.deepEqual(
      ev.map((e) => [e.actor, e.via, e.subject]),
      [['operator:olga', 'rest', 'team:billing-team']],
    );
    // The channel is live: a notice for the team's tool reaches it.
    assert.equal(
      await tg.ownerNotices.toolEvent({
        kind: 'unhealthy',
        tool_id: 'lookup_invoice',
        version: '1.0.0',
      }),
      'sent',
    );
    await hook.received(1);
    const msg = hook.json<OwnerNoticePayload>()[0];
    assert.equal(msg?.toolgate.type, 'owner.unhealthy');
    assert.equal(msg?.toolgate.team, 'billing-team');
  });

  test('an owner of another team cannot add, see or remove the channel', async () => {
    const before = await tg.ownerChannels.list();
    const add = await call('POST', '/v1/owner-channels', 'otto', {
      team: 'billing-team',
      url: 'https://hooks.example.com/x',
    });
    assert.equal(add.status, 403);
    assert.equal(((await add.json()) as { code: string }).code, 'FORBIDDEN');
    const list = (await (await call('GET', '/v1/owner-channels', 'otto')).json()) as {
      channels: unknown[];
    };
    assert.deepEqual(list.channels, []);
    const id = before[0]?.id ?? '';
    const del = await call('DELETE', `/v1/owner-channels/${id}`, 'otto');
    assert.equal(del.status, 404);
    // An auditor reads every team's and changes none.
    const seen = (await (await call('GET', '/v1/owner-channels', 'audrey')).json()) as {
      channels: unknown[];
    };
    assert.equal(seen.channels.length, before.length);
    assert.equal((await call('DELETE', `/v1/owner-channels/${id}`, 'audrey')).status, 403);
    assert.deepEqual(await tg.ownerChannels.list(), before);
  });

  test('bad bodies are refused with a structured error and store nothing', async () => {
    const before = await tg.ownerChannels.list();
    for (const body of [
      { team: 'billing-team', url: 'http://hooks.example.com/plain-http' },
      { team: 'billing-team', url: 'https://169.254.169.254.nip.io:8443/x', extra: 1 },
      { team: 'billing-team' },
      { team: '../etc', url: 'https://hooks.example.com/x' },
    ]) {
      const res = await call('POST', '/v1/owner-channels', 'admin', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      const err = (await res.json()) as { code: string };
      assert.ok(['INPUT_INVALID'].includes(err.code), err.code);
    }
    assert.deepEqual(await tg.ownerChannels.list(), before);
  });

  test('the owner removes their channel; removal is audited', async () => {
    const [c] = await tg.ownerChannels.list({ team: 'billing-team' });
    assert.ok(c);
    assert.equal((await call('DELETE', `/v1/owner-channels/${c.id}`, 'olga')).status, 204);
    assert.deepEqual(await tg.ownerChannels.list({ team: 'billing-team' }), []);
    const ev = (await tg.events.list({ limit: 1000 })).filter(
      (e) => e.action === 'owner_channel.removed',
    );
    assert.deepEqual(
      ev.map((e) => e.actor),
      ['operator:olga'],
    );
  });
});
