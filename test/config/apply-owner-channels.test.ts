/**
 * apply -f with `kind: OwnerChannel` (docs/configuration.md "Configuration documents"): an owner
 * team's webhook by name, its URL a credential. The file names an environment variable of the
 * applying process (`url_env`; a REST request never reads the server's) or carries the URL
 * (`url`); either way the URL is checked under the outbound rules of `channels add`, stored
 * sealed, and appears in no plan, response, event, ledger row or error: a canary in it is searched
 * for in every output and every table (and the SQLite file). Create, unchanged, update, drift and
 * prune; each attack beside its benign neighbour.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { MasterKey } from '../../src/domain/credentials/index.js';
import type { Operator } from '../../src/domain/operators/index.js';
import type { Resolver } from '../../src/execution/sandbox/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import type { Store } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { openWorld, type World } from '../support/world.js';

const ADMIN_TOKEN = 'admin-token-for-apply-owner-channels-0123456789';
const admin: Actor = { id: 'cli:channels-admin', via: 'cli' };
const CANARY = 'XOXB-canary-3f1e9a77c2-never-echo';
const SECOND = 'XOXB-second-8d2c41b0aa-never-echo';
const SERVER = 'XOXB-server-env-5b7e0c19f4-never-read';
const hook = (token: string, host = 'hooks.test') => `https://${host}/services/T0/B0/${token}`;

const dns = new Map<string, string>([
  ['hooks.test', '93.184.216.34'],
  ['internal.test', '10.1.2.3'],
  ['metadata.test', '169.254.169.254'],
]);
const resolver: Resolver = async (host) => {
  const address = dns.get(host);
  if (address === undefined) throw new Error(`no such host ${host}`);
  return [{ address, family: 4 }];
};

const channel = (name: string, spec: Record<string, unknown>, team = 'payments') => ({
  kind: 'OwnerChannel',
  spec: { name, team, ...spec },
});

/** Every row of every table, as text (binary columns as latin1), for a canary search. */
async function everyRow(store: Store): Promise<string> {
  const tables = await store.db.introspection.getTables();
  const out: string[] = [];
  for (const t of tables) {
    const rows = await store.db
      .selectFrom(t.name as 'events')
      .selectAll()
      .execute();
    out.push(
      JSON.stringify(rows, (_k, v) =>
        Buffer.isBuffer(v) || v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : v,
      ),
    );
  }
  return out.join('\n');
}

async function state(tg: Gateway) {
  return {
    channels: (await tg.ownerChannels.list()).map((c) => `${c.team}/${c.name}:${c.url_hint}`),
    events: (await tg.events.list({ limit: 100_000 })).length,
  };
}

for (const backend of backends()) {
  describe(`apply OwnerChannel on ${backend.name}`, () => {
    let w: World;
    let tg: Gateway;
    const outputs: string[] = [];
    /** Applies as the library with an environment, keeping what it answered or threw. */
    const apply = async (
      docs: unknown[],
      options: Parameters<Gateway['config']['apply']>[2] = {},
    ) => {
      try {
        const r = await tg.config.apply(docs, admin, { set: 'hooks', ...options });
        outputs.push(JSON.stringify(r));
        return r;
      } catch (err) {
        outputs.push(JSON.stringify(err), String(err));
        throw err;
      }
    };
    const rest = async (docs: unknown[], query = 'set=rest') => {
      const r = await w.send('POST', `/v1/apply?${query}`, docs, ADMIN_TOKEN);
      outputs.push(r.text);
      return r;
    };

    before(async () => {
      w = await openWorld({
        backend,
        inspector: true,
        rest: { adminToken: ADMIN_TOKEN },
        options: { masterKey: MasterKey.generate(), outbound: { resolver } },
      });
      tg = w.tg;
    });
    after(async () => {
      delete process.env.TOOLGATE_TEST_SERVER_HOOK;
      await w?.close();
    });

    const declared = [channel('alerts', { url_env: 'PAYMENTS_HOOK' })];
    const env = { PAYMENTS_HOOK: hook(CANARY) };

    test('a dry run is the plan and writes nothing', async () => {
      const was = await state(tg);
      const r = await apply(declared, { env, dryRun: true });
      assert.deepEqual(
        r.changes.map((c) => c.action),
        ['create'],
      );
      assert.deepEqual(await state(tg), was);
    });

    test('create from an environment variable: sealed, shown by its origin, delivered to the URL', async () => {
      const r = await apply(declared, { env });
      assert.deepEqual(
        r.changes.map((c) => [c.subject, c.action, c.summary]),
        [['owner channel payments/alerts', 'create', 'created (webhook to https://hooks.test/…)']],
      );
      const [made] = await tg.ownerChannels.list({ team: 'payments' });
      assert.deepEqual([made?.name, made?.url_hint], ['alerts', 'https://hooks.test/…']);
      assert.deepEqual(
        (await tg.ownerChannels.urlsOf('payments')).map((c) => c.url),
        [hook(CANARY)],
        'delivery opens the sealed URL',
      );
      const added = (await tg.events.list({ subject: 'team:payments', limit: 10 })).at(-1);
      assert.deepEqual([added?.action, added?.actor], ['owner_channel.added', admin.id]);
    });

    test('the same file again changes nothing; another URL in the variable replaces it', async () => {
      const was = await state(tg);
      const again = await apply(declared, { env });
      assert.deepEqual(
        again.changes.map((c) => c.action),
        ['unchanged'],
      );
      assert.deepEqual(await state(tg), was);
      const moved = await apply(declared, { env: { PAYMENTS_HOOK: hook(SECOND) } });
      assert.deepEqual(
        moved.changes.map((c) => [c.action, c.summary]),
        [['update', 'updated: URL replaced (now https://hooks.test/…)']],
      );
      assert.deepEqual(
        (await tg.ownerChannels.urlsOf('payments')).map((c) => c.url),
        [hook(SECOND)],
      );
      const updated = (await tg.events.list({ subject: 'team:payments', limit: 10 })).at(-1);
      assert.equal(updated?.action, 'owner_channel.updated');
      await apply(declared, { env });
    });

    test('over REST a url_env is refused, even one the server’s own environment holds; an inline url is taken', async () => {
      process.env.TOOLGATE_TEST_SERVER_HOOK = hook(SERVER);
      const was = await state(tg);
      const refused = await rest([channel('server', { url_env: 'TOOLGATE_TEST_SERVER_HOOK' })]);
      assert.equal(refused.status, 422, refused.text);
      const problems = (refused.body.details as { problems: { pointer: string; rule: string }[] })
        .problems;
      assert.deepEqual(
        problems.map((p) => [p.pointer, p.rule]),
        [['/0/spec/url_env', 'channel.url_env']],
      );
      assert.deepEqual(await state(tg), was);
      const inline = await rest([channel('inline', { url: hook(CANARY) }, 'ops')]);
      assert.equal(inline.status, 200, inline.text);
      assert.equal(
        (inline.body.changes as { summary: string }[])[0]?.summary,
        'created (webhook to https://hooks.test/…)',
      );
      const listed = await w.send('GET', '/v1/owner-channels?team=ops', undefined, ADMIN_TOKEN);
      outputs.push(listed.text);
      assert.equal(listed.status, 200);
      assert.match(listed.text, /"name":"inline"/);
    });

    test('the outbound rules of channels hold through apply: private, metadata, loopback and plain http refused; a public https host taken', async () => {
      const was = await state(tg);
      for (const [url, rule] of [
        [hook(CANARY, 'internal.test'), 'egress.address_forbidden'],
        [hook(CANARY, 'metadata.test'), 'egress.address_forbidden'],
        [`http://127.0.0.1:9/${CANARY}`, 'egress.address_forbidden'],
        [`http://hooks.test/${CANARY}`, 'egress.scheme'],
        [`https://user:${CANARY}@hooks.test/x`, 'egress.userinfo'],
      ] as const) {
        await assert.rejects(
          apply([channel('bad', { url_env: 'BAD_HOOK' })], { env: { BAD_HOOK: url } }),
          (err: { code: string; details: { problems: { pointer: string; rule: string }[] } }) => {
            assert.equal(err.code, 'CONFIG_INVALID');
            const [p] = err.details.problems;
            assert.equal(p?.pointer, '/0/spec/url_env', url);
            assert.ok(p?.rule.startsWith('egress.'), `${url}: ${p?.rule}`);
            if (rule !== 'egress.address_forbidden') assert.equal(p?.rule, rule, url);
            return true;
          },
        );
      }
      assert.deepEqual(await state(tg), was);
      const ok = await apply([channel('good', { url_env: 'GOOD_HOOK' }, 'ops')], {
        env: { GOOD_HOOK: hook(`${CANARY}-good`) },
        set: 'good',
      });
      assert.equal(ok.changes[0]?.action, 'create');
    });

    test('a variable that is not set, or a second source, refuses the whole file and writes nothing', async () => {
      const was = await state(tg);
      await assert.rejects(
        apply(
          [
            { kind: 'Agent', spec: { id: 'ch-agent', owner: 'ops' } },
            channel('x', { url_env: 'NOT_SET_HERE' }),
          ],
          {
            env: {},
          },
        ),
        (err: { code: string; message: string }) =>
          err.code === 'CONFIG_INVALID' && /NOT_SET_HERE is not set/.test(err.message),
      );
      await assert.rejects(
        apply([channel('x', { url_env: 'PAYMENTS_HOOK', url: hook(CANARY) })], { env }),
        (err: { code: string }) => err.code === 'CONFIG_INVALID',
      );
      await assert.rejects(
        apply([channel('x', { url_env: 'PAYMENTS_HOOK', signing_secret: CANARY })], { env }),
        (err: { code: string }) => err.code === 'CONFIG_INVALID',
      );
      assert.deepEqual(await state(tg), was);
      await assert.rejects(tg.agents.get('ch-agent'));
    });

    test('an owner applies only their teams’ channels', async () => {
      const owner: Operator = {
        id: 'olga',
        name: 'Olga',
        roles: ['owner'],
        teams: ['payments'],
        authenticatedBy: 'personal-token',
      };
      await assert.rejects(
        apply([channel('theirs', { url_env: 'PAYMENTS_HOOK' }, 'ops')], {
          env,
          operator: owner,
          set: 'olga',
        }),
        (err: { code: string }) => err.code === 'FORBIDDEN',
      );
      const own = await apply([channel('mine', { url_env: 'MINE' })], {
        env: { MINE: hook(`${CANARY}-mine`) },
        operator: owner,
        set: 'olga',
      });
      assert.equal(own.changes[0]?.action, 'create');
    });

    test('sets: a channel two sets declare says so; a one-off is never pruned; narrower files drift, then prune removes', async () => {
      const shared = await apply(declared, { env, set: 'hooks-too' });
      assert.match(shared.changes[0]?.summary ?? '', /also declared by set hooks/);
      await apply([channel('one-off', { url_env: 'ONE' })], {
        env: { ONE: hook(`${CANARY}-one`) },
        set: null,
      });
      const wide = [...declared, channel('pager', { url_env: 'PAGER' })];
      const envs = { ...env, PAGER: hook(`${CANARY}-pager`) };
      await apply(wide, { env: envs, set: 'narrowing' });
      const was = await state(tg);
      const drift = await apply(declared, { env: envs, set: 'narrowing' });
      assert.deepEqual(
        drift.changes.filter((c) => c.action === 'drift').map((c) => c.subject),
        ['owner channel payments/pager'],
      );
      assert.deepEqual(await state(tg), was);
      const pruned = await apply(declared, { env: envs, set: 'narrowing', prune: true });
      const p = pruned.changes.find((c) => c.subject === 'owner channel payments/pager');
      assert.deepEqual([p?.action, p?.summary], ['prune', 'removed']);
      const names = (await tg.ownerChannels.list({ team: 'payments' })).map((c) => c.name);
      assert.ok(!names.includes('pager'));
      assert.ok(names.includes('one-off'), 'a one-off channel stays');
      const removed = (await tg.events.list({ subject: 'team:payments', limit: 100 })).at(-1);
      assert.deepEqual([removed?.action, removed?.actor], ['owner_channel.removed', admin.id]);
    });

    test('a URL stored before sealing is sealed by the next channel change', async () => {
      assert.ok(w.inspector);
      await w.inspector.db
        .insertInto('owner_channels')
        .values({
          id: 'ch_legacy',
          team: 'legacy',
          kind: 'webhook',
          url: hook('legacy-plain'),
          created_at: new Date().toISOString(),
          created_by: 'upgrade',
          name: null,
          url_sealed: null,
          url_key: null,
          url_hint: null,
          updated_at: null,
        })
        .execute();
      assert.deepEqual(
        (await tg.ownerChannels.urlsOf('legacy')).map((c) => c.url),
        [hook('legacy-plain')],
      );
      await apply([channel('after', { url_env: 'AFTER' }, 'legacy')], {
        env: { AFTER: hook(`${CANARY}-after`) },
        set: 'legacy',
      });
      const row = await w.inspector.db
        .selectFrom('owner_channels')
        .selectAll()
        .where('id', '=', 'ch_legacy')
        .executeTakeFirstOrThrow();
      assert.equal(row.url, '');
      assert.ok(row.url_sealed !== null && !row.url_sealed.includes('legacy-plain'));
      assert.deepEqual(
        (await tg.ownerChannels.urlsOf('legacy')).map((c) => c.url).sort(),
        [hook(`${CANARY}-after`), hook('legacy-plain')].sort(),
      );
    });

    test('the published schema holds the three kinds; a DestinationSet and an Operator apply over REST too', async () => {
      const schema = await w.send('GET', '/v1/schemas/config.json', undefined, ADMIN_TOKEN);
      assert.equal(schema.status, 200);
      const kinds = (
        schema.body.oneOf as {
          properties: { kind: { const: string }; spec: Record<string, unknown> };
        }[]
      ).map((o) => o.properties.kind.const);
      for (const kind of ['DestinationSet', 'OwnerChannel', 'Operator'])
        assert.ok(kinds.includes(kind), kind);
      const channelSpec = (
        schema.body.oneOf as {
          properties: {
            kind: { const: string };
            spec: { properties: Record<string, { writeOnly?: boolean }> };
          };
        }[]
      ).find((o) => o.properties.kind.const === 'OwnerChannel')?.properties.spec;
      assert.equal(channelSpec?.properties.url?.writeOnly, true);
      const r = await rest(
        [
          {
            kind: 'DestinationSet',
            spec: { name: 'rest-set', kind: 'email', members: ['a@b.example'] },
          },
          { kind: 'Operator', spec: { id: 'rest-audit', roles: ['auditor'] } },
        ],
        'set=rest-kinds',
      );
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(
        (r.body.changes as { subject: string; action: string }[]).map((c) => [c.subject, c.action]),
        [
          ['destination set rest-set', 'create'],
          ['operator rest-audit', 'create'],
        ],
      );
    });

    test('a file that does not parse is refused by where it breaks, never by its text (attack round 22, Y1)', async () => {
      const was = await state(tg);
      const bad = [
        // JSON that ends early, YAML with a key twice, an unclosed quote, a bad indent.
        `{"kind":"OwnerChannel","spec":{"name":"x","team":"payments","url":"${hook(CANARY)}"}`,
        `kind: OwnerChannel\nspec:\n  name: x\n  team: payments\n  url: ${hook(CANARY)}\n  url: ${hook(CANARY)}\n`,
        `kind: Operator\nspec: { id: paul, roles: [auditor], password: "${CANARY}\n`,
        `kind: OwnerChannel\nspec:\n  name: x\n    url: ${hook(CANARY)}\n`,
      ];
      for (const text of bad) {
        const r = await fetch(`${w.base}/v1/apply?dry_run=true`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/yaml' },
          body: text,
        });
        const body = await r.text();
        outputs.push(body);
        assert.ok(r.status === 400 || r.status === 422, `${r.status} ${body}`);
        assert.match(body, /at line \d+, column \d+/, body);
        assert.ok(!body.includes(CANARY), `the text was echoed: ${body}`);
      }
      assert.deepEqual(await state(tg), was);
      // The benign neighbour: the same channel, well formed, plans its creation by origin only.
      const good = await fetch(`${w.base}/v1/apply?dry_run=true`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/yaml' },
        body: `kind: OwnerChannel\nspec:\n  name: x\n  team: payments\n  url: ${hook(`${CANARY}-fresh`)}\n`,
      });
      const planned = await good.text();
      assert.equal(good.status, 200, planned);
      assert.ok(!planned.includes(CANARY));
    });

    test('no canary in any plan, response, error, event, ledger row or table; none in the SQLite file', async () => {
      const said = outputs.join('\n');
      for (const canary of [CANARY, SECOND, SERVER]) {
        assert.ok(!said.includes(canary), `${canary} in an output`);
      }
      assert.ok(w.inspector);
      const rows = await everyRow(w.inspector);
      for (const canary of [CANARY, SECOND, SERVER, 'legacy-plain']) {
        assert.ok(!rows.includes(canary), `${canary} in a table`);
      }
      assert.match(rows, /payments\/alerts/, 'the search did read the ledger');
      if (backend.name === 'sqlite') {
        const file = w.db.replace(/^sqlite:/, '');
        for (const f of [file, `${file}-wal`]) {
          if (!existsSync(f)) continue;
          const bytes = readFileSync(f).toString('latin1');
          for (const canary of [CANARY, SECOND, SERVER]) {
            assert.ok(!bytes.includes(canary), `${canary} in ${f}`);
          }
        }
      }
    });
  });
}
