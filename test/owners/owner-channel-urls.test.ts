/**
 * An owner channel's URL as the gateway understands it (docs/configuration.md "Owner channels";
 * attack round 22), on SQLite and PostgreSQL: "the same URL once per team" compares the URL as it
 * is parsed and sent — scheme and host case, a default port, dot segments, IPv4 spellings,
 * percent-encoding, surrounding spaces and tabs, a fragment — not its text, by `channels add`,
 * REST and `apply`, and a channel keyed before by its text is keyed again at the next change (Y12);
 * a channel whose sealed URL does not open is skipped, recorded and counted while the team's other
 * channels still hear, and `apply` re-seals it rather than calling it unchanged (Y14); a refusal
 * names the host and the rule, never the address the gateway resolved it to (Y16). Each attack
 * beside its benign neighbour.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { MasterKey } from '../../src/domain/credentials/index.js';
import type { Resolver } from '../../src/execution/sandbox/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { type Receiver, webhookReceiver } from '../support/webhook-receiver.js';
import { openWorld, type World } from '../support/world.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const dns = new Map<string, string>([
  ['hooks.test', '93.184.216.34'],
  ['internal.test', '10.1.2.3'],
  ['metadata.test', '169.254.169.254'],
  ['vm.test', '127.0.0.1'],
]);
const resolver: Resolver = async (host) => {
  const address = dns.get(host);
  if (address === undefined) throw new Error(`no such host ${host}`);
  return [{ address, family: 4 }];
};

type Refusal = { code: string; message: string; details: { problems: { rule: string }[] } };
const refusedAs = (rule: string) => (err: unknown) => {
  const e = err as Refusal;
  assert.equal(e.code, 'INPUT_INVALID', String(err));
  assert.equal(e.details.problems[0]?.rule, rule, e.message);
  return true;
};

for (const backend of backends()) {
  describe(`owner channel URLs (${backend.name})`, () => {
    let w: World;
    let tg: Gateway;
    let hook: Receiver;
    const masterKey = MasterKey.generate();

    before(async () => {
      hook = await webhookReceiver();
      w = await openWorld({
        backend,
        inspector: true,
        rest: true,
        operators: [{ id: 'olga', roles: ['owner'], teams: ['payments'], token: true }],
        options: {
          masterKey,
          outbound: { resolver, allowLoopback: true },
          notify: { publicUrl: 'https://toolgate.example.com', backoffMs: 5, maxAttempts: 1 },
        },
      });
      tg = w.tg;
    });
    after(async () => {
      await w?.close();
      await hook?.close();
    });

    test('Y12: spellings of one URL are one channel, by channels add, REST and apply; other URLs are others', async () => {
      const url = 'https://hooks.test/services/T0/B0/HOOK';
      await tg.ownerChannels.add({ team: 't9', url }, admin);
      const spellings = [
        'HTTPS://HOOKS.TEST/services/T0/B0/HOOK',
        'https://hooks.test:443/services/T0/B0/HOOK',
        'https://hooks.test/services/./T0/B0/HOOK',
        'https://hooks.test/services/x/../T0/B0/HOOK',
        `  ${url}`,
        `${url}  `,
        `${url}\n`,
        'https://hooks.test/services/T0/B0/HO\tOK',
        `${url}#f`,
        'https://hooks.test/services/T0/B0/%48OOK',
        'https://hooks.test/services/%54%30/B0/HOOK',
      ];
      for (const spelling of spellings) {
        await assert.rejects(
          tg.ownerChannels.add({ team: 't9', url: spelling }, admin),
          refusedAs('unique'),
          JSON.stringify(spelling),
        );
      }
      // IPv4 spellings of one loopback receiver (allowed on this gateway).
      await tg.ownerChannels.add({ team: 't9', url: `${hook.url}/T1` }, admin);
      const port = new URL(hook.url).port;
      for (const host of ['0x7f000001', '2130706433', '127.1', '0177.0.0.1']) {
        await assert.rejects(
          tg.ownerChannels.add({ team: 't9', url: `http://${host}:${port}/hook/T1` }, admin),
          refusedAs('unique'),
          host,
        );
      }
      // Over REST, as the team's owner.
      const olga = w.tokens.olga ?? '';
      const first = await w.send('POST', '/v1/owner-channels', { team: 'payments', url }, olga);
      assert.equal(first.status, 201, first.text);
      const again = await w.send(
        'POST',
        '/v1/owner-channels',
        { team: 'payments', url: `HTTPS://hooks.test:443/services/./T0/B0/HOOK#x` },
        olga,
      );
      assert.equal(again.status, 400, again.text);
      assert.match(String(again.body.message), /has a channel with this URL already/);
      // The benign neighbours: another path, another case of the path, another query are others.
      for (const other of [
        'https://hooks.test/services/T0/B0/HOOK2',
        'https://hooks.test/services/T0/B0/hook',
        'https://hooks.test/services/T0/B0/HOOK?x=1',
      ]) {
        await tg.ownerChannels.add({ team: 't9', url: other }, admin);
      }
      assert.equal((await tg.ownerChannels.list({ team: 't9' })).length, 5);
      // What is delivered is the parsed URL: no spaces, no fragment.
      const urls = (await tg.ownerChannels.urlsOf('t9')).map((c) => c.url);
      assert.ok(urls.includes(url), urls.join(' '));

      // apply: the same URL spelled otherwise (a secret store's trailing newline) is unchanged.
      const doc = (u: string) => ({
        kind: 'OwnerChannel',
        spec: { name: 'ci', team: 't10', url: u },
      });
      const made = await tg.config.apply([doc(url)], admin, { set: 'urls' });
      assert.deepEqual(
        made.changes.map((c) => c.action),
        ['create'],
      );
      for (const spelling of [`${url}\n`, 'HTTPS://hooks.test:443/services/T0/B0/HOOK#frag']) {
        const r = await tg.config.apply([doc(spelling)], admin, { set: 'urls' });
        assert.deepEqual(
          r.changes.map((c) => c.action),
          ['unchanged'],
          JSON.stringify(spelling),
        );
      }
      const moved = await tg.config.apply([doc(`${url}2`)], admin, { set: 'urls' });
      assert.deepEqual(
        moved.changes.map((c) => c.action),
        ['update'],
      );
    });

    test('Y12: a channel keyed by its text before is keyed again at the next change', async () => {
      assert.ok(w.inspector);
      // A row as an earlier version wrote it: sealed, its key the hash of the text as given.
      const raw = 'HTTPS://HOOKS.TEST/services/legacy/HOOK';
      const legacyKey = createHmac('sha256', masterKey.derive('toolgate owner-channel url key v1'))
        .update(raw, 'utf8')
        .digest('hex');
      const made = await tg.ownerChannels.add({ team: 'old', url: raw }, admin);
      await w.inspector.db
        .updateTable('owner_channels')
        .set({ url_key: legacyKey })
        .where('id', '=', made.id)
        .execute();
      await assert.rejects(
        tg.ownerChannels.add(
          { team: 'old', url: 'https://hooks.test/services/legacy/HOOK' },
          admin,
        ),
        refusedAs('unique'),
      );
      // The refusal rolled back with its write; the next change that succeeds keeps the new key.
      await tg.ownerChannels.add({ team: 'old', url: 'https://hooks.test/services/other' }, admin);
      const row = await w.inspector.db
        .selectFrom('owner_channels')
        .select('url_key')
        .where('id', '=', made.id)
        .executeTakeFirstOrThrow();
      assert.notEqual(row.url_key, legacyKey, 'keyed again by the parsed URL');
      assert.match(row.url_key ?? '', /^c1\.[0-9a-f]{64}$/);
    });

    test('Y14: a channel whose seal does not open is skipped, recorded and counted; the team still hears; apply re-seals it', async () => {
      assert.ok(w.inspector);
      const intact = await tg.ownerChannels.add(
        { team: 'notice', url: `${hook.url}/intact` },
        admin,
      );
      await tg.config.apply(
        [
          {
            kind: 'OwnerChannel',
            spec: { name: 'alerts', team: 'notice', url: `${hook.url}/alerts` },
          },
        ],
        admin,
        { set: 'notice' },
      );
      const ops = await tg.ownerChannels.add({ team: 'ops', url: `${hook.url}/ops` }, admin);
      const opsRow = await w.inspector.db
        .selectFrom('owner_channels')
        .select('url_sealed')
        .where('id', '=', ops.id)
        .executeTakeFirstOrThrow();
      // Another channel's seal copied onto notice/alerts: bound to its own id, it does not open.
      await w.inspector.db
        .updateTable('owner_channels')
        .set({ url_sealed: opsRow.url_sealed })
        .where('team', '=', 'notice')
        .where('name', '=', 'alerts')
        .execute();
      const alerts = (await tg.ownerChannels.list({ team: 'notice' })).find(
        (c) => c.name === 'alerts',
      );
      assert.ok(alerts);
      const before = hook.bodies.length;
      const outcome = await tg.ownerNotices.toolEvent({
        kind: 'deprecated',
        tool_id: 'lookup_invoice',
        version: '1.0.0',
        owner: 'notice',
        facts: { retire_at: null },
      });
      await tg.ownerNotices.settled();
      assert.equal(outcome, 'sent');
      assert.equal(hook.bodies.length - before, 1, 'the intact channel heard; ops did not');
      const notice = (await tg.events.list({ limit: 10_000 }))
        .filter((e) => e.action === 'owner.notice')
        .map((e) => JSON.parse(e.details) as Record<string, unknown>)
        .at(-1);
      assert.deepEqual(
        [notice?.outcome, notice?.channels, notice?.unreadable],
        ['sent', 1, [alerts.id]],
      );
      const metrics = (await tg.metrics.render()).body;
      assert.match(metrics, /toolgate_owner_notice_deliveries_total\{outcome="unreadable"\} 1/);
      assert.ok(intact.id);

      // A team whose every channel does not open: the notice is recorded as failed, not unrouted.
      const lone = await tg.ownerChannels.add({ team: 'lone', url: `${hook.url}/lone` }, admin);
      await w.inspector.db
        .updateTable('owner_channels')
        .set({ url_sealed: opsRow.url_sealed })
        .where('id', '=', lone.id)
        .execute();
      const failed = await tg.ownerNotices.toolEvent({
        kind: 'deprecated',
        tool_id: 'lone_tool',
        version: '1.0.0',
        owner: 'lone',
        facts: { retire_at: null },
      });
      assert.equal(failed, 'failed');
      const lonely = (await tg.events.list({ limit: 10_000 }))
        .filter((e) => e.action === 'owner.notice')
        .map((e) => JSON.parse(e.details) as Record<string, unknown>)
        .at(-1);
      assert.deepEqual([lonely?.outcome, lonely?.unreadable], ['failed', [lone.id]]);

      // apply does not call it unchanged: it seals the declared URL again.
      const r = await tg.config.apply(
        [
          {
            kind: 'OwnerChannel',
            spec: { name: 'alerts', team: 'notice', url: `${hook.url}/alerts` },
          },
        ],
        admin,
        { set: 'notice' },
      );
      assert.deepEqual(
        r.changes.map((c) => [c.action, c.summary]),
        [
          [
            'update',
            `updated: URL sealed again (the stored seal did not open) (now ${new URL(hook.url).origin}/…)`,
          ],
        ],
      );
      const urls = (await tg.ownerChannels.urlsOf('notice')).map((c) => c.url).sort();
      assert.deepEqual(urls, [`${hook.url}/alerts`, `${hook.url}/intact`].sort());
      // The benign neighbour: intact, the same file again is unchanged.
      const again = await tg.config.apply(
        [
          {
            kind: 'OwnerChannel',
            spec: { name: 'alerts', team: 'notice', url: `${hook.url}/alerts` },
          },
        ],
        admin,
        { set: 'notice' },
      );
      assert.deepEqual(
        again.changes.map((c) => c.action),
        ['unchanged'],
      );
    });

    test('Y16: a refusal names the host and the rule, never the address it resolved to', async () => {
      const olga = w.tokens.olga ?? '';
      for (const [host, address, rule] of [
        ['internal.test', '10.1.2.3', 'egress.address_forbidden'],
        ['metadata.test', '169.254.169.254', 'egress.metadata_address'],
      ] as const) {
        for (const token of [olga, undefined]) {
          const r = await w.send(
            'POST',
            '/v1/owner-channels',
            { team: 'payments', url: `https://${host}/x` },
            token,
          );
          assert.equal(r.status, 400, r.text);
          assert.ok(!r.text.includes(address), r.text);
          assert.match(String(r.body.message), new RegExp(`host ${host} resolves to a`));
          assert.match(r.text, new RegExp(rule));
        }
        await assert.rejects(
          tg.config.apply(
            [
              {
                kind: 'OwnerChannel',
                spec: { name: 'x', team: 'payments', url: `https://${host}/x` },
              },
            ],
            admin,
            { set: 'refused' },
          ),
          (err: unknown) =>
            !JSON.stringify(err).includes(address) && !String(err).includes(address),
        );
      }
      // The benign neighbour: a public host is accepted and shown by its origin.
      const ok = await w.send(
        'POST',
        '/v1/owner-channels',
        { team: 'payments', url: 'https://hooks.test/services/T9/ok' },
        olga,
      );
      assert.equal(ok.status, 201, ok.text);
      assert.equal(ok.body.url_hint, 'https://hooks.test/…');
    });
  });
}
