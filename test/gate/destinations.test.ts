/**
 * Destinations that are not network hosts, through a real gateway (the real gate, inline tools,
 * SQLite and PostgreSQL, REST for the sets): an e-mail recipient held to the company's domain, a
 * list of recipients checked element by element against an admin-managed set, a chat channel
 * from a directory tool's live set (a channel created during the task is accepted after the
 * refresh, and the directory is not called on every miss), registration refusing unverifiable
 * claims, Cedar testing list membership, and a destination-constrained sender offered beside a
 * private read.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { objectToolDocument, validTool } from '../support/tools.js';
import { openWorld, restClient, type World } from '../support/world.js';

const admin: Actor = { id: 'dest-admin', via: 'library' };
const ADMIN_TOKEN = 'destinations-admin-token-0123456789abcdef';
const text = { type: 'string', maxLength: 400 };

/** A tool of this suite under `desk:use`, run by the `t.ok` handler unless `overrides` say. */
function tool(id: string, overrides: Record<string, unknown>) {
  const description = `The ${id.replaceAll('_', ' ')} tool of the destinations test.`;
  return objectToolDocument(id, description, 'desk:use', {
    runtime: { kind: 'inline', handler: 't.ok' },
    ...overrides,
  });
}

const SEND_EMAIL = tool('send_email', {
  action_class: 'external_send',
  egress: { mode: 'constrained', hosts: ['mail.example.com'] },
  destinations: [
    { argument: '/to', kind: 'email', allow: { email_domains: ['example.com'] } },
    { argument: '/cc', kind: 'email', allow: { sets: ['team'] } },
  ],
  input_schema: {
    type: 'object',
    additionalProperties: false,
    required: ['to', 'body'],
    properties: {
      to: { type: 'string', maxLength: 254 },
      cc: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 254 } },
      body: text,
    },
  },
});

const POST_CHAT = tool('post_chat', {
  action_class: 'reversible_write',
  egress: { mode: 'constrained', hosts: ['chat.example.com'] },
  destinations: [
    {
      argument: '/channel',
      kind: 'chat',
      allow: { values: ['#announcements'], sets: ['channels'] },
    },
  ],
  input_schema: {
    type: 'object',
    additionalProperties: false,
    required: ['channel', 'text'],
    properties: { channel: text, text },
  },
});

const LIST_CHANNELS = tool('list_channels', {
  runtime: { kind: 'inline', handler: 't.channels' },
  input_schema: { type: 'object', additionalProperties: false, properties: {} },
});

const SEARCH = tool('search_tickets', {
  data_access: 'private',
  input_schema: { type: 'object', additionalProperties: false, properties: { q: text } },
});

for (const backend of backends()) {
  describe(`destinations are constrained element by element (${backend.name})`, () => {
    let tg: Gateway;
    let world: World;
    let store: Store;
    let base = '';
    let now = Date.parse('2026-06-01T10:00:00Z');
    const channels = ['#support', '#SALES'];
    let directoryCalls = 0;

    before(async () => {
      world = await openWorld({
        backend,
        rest: { adminToken: ADMIN_TOKEN },
        options: {
          clock: () => new Date(now),
          executor: demoExecutor()
            .register('t.ok', () => ({ status: 'ok' }))
            .register('t.channels', () => {
              directoryCalls += 1;
              return { channels: [...channels, 'not a channel!'] };
            }),
        },
      });
      ({ tg, base } = world);
      store = await openStore(world.db);
      // Sets first (a rule naming a set that does not exist is refused), over REST.
      const team = await rest('POST', '/v1/destination-sets', { name: 'team', kind: 'email' });
      assert.equal(team.status, 201, JSON.stringify(team.body));
      await tg.config.apply(
        [
          { kind: 'Agent', spec: { id: 'clerk', owner: 'qa' } },
          LIST_CHANNELS,
          SEARCH,
          { kind: 'Grant', spec: { agent: 'clerk', capabilities: ['desk:use'] } },
        ],
        admin,
      );
      const chan = await rest('POST', '/v1/destination-sets', {
        name: 'channels',
        kind: 'chat',
        directory: {
          tool: 'list_channels',
          version: '1.0.0',
          members: '/channels',
          miss_seconds: 10,
        },
      });
      assert.equal(chan.status, 201, JSON.stringify(chan.body));
      await tg.config.apply([SEND_EMAIL, POST_CHAT], admin);
    });
    after(async () => {
      await store.close();
      await world.close();
    });

    const rest = restClient(() => base, ADMIN_TOKEN);

    async function session() {
      const s = await tg.sessions.open('clerk');
      const ctx = { agentId: 'clerk', sessionId: s.id };
      return { s, call: (t: string, a: Record<string, unknown>) => tg.gate.invoke(ctx, t, a) };
    }

    test('a recipient outside the company domain is refused with its pointer and rule; look-alike and double-@ tricks too', async () => {
      const { call } = await session();
      const cases: [string, string][] = [
        ['attacker@evil.example', 'destination.not_allowed'],
        ['ana@mail.example.com', 'destination.not_allowed'], // sub-domains were not declared
        ['ana@example.com.evil.example', 'destination.not_allowed'],
        ['ana@example.co', 'destination.not_allowed'],
        ['a@b@example.com', 'destination.malformed'],
        ['ana@exаmple.com', 'destination.malformed'], // Cyrillic а
        ['ana@xn--exmple-cua.com', 'destination.malformed'],
        ['Ana <ana@example.com>', 'destination.malformed'],
        ['"a@evil.example"@example.com', 'destination.malformed'],
        ['ana@example.com.', 'destination.malformed'],
        ['ana@ｅxample.com', 'destination.malformed'], // full-width
      ];
      for (const [to, rule] of cases) {
        const d = await call('send_email', { to, body: 'hi' });
        assert.equal(d.kind, 'deny', to);
        if (d.kind !== 'deny') continue;
        assert.equal(d.code, 'DESTINATION_NOT_ALLOWED', to);
        assert.equal(d.rule, rule, to);
        assert.deepEqual(d.details, { argument: '/to' }, to);
        assert.match(d.message, /^\/to: /, to);
        assert.ok(!d.message.includes('example.com,'), 'the allow-list is never echoed');
      }
    });

    test('the company domain in any case is accepted, passed on normalised, and waits for its approval', async () => {
      const { call } = await session();
      const d = await call('send_email', { to: 'Ana.Lopez@EXAMPLE.com', body: 'hi' });
      assert.equal(d.kind, 'pending_approval', JSON.stringify(d));
      if (d.kind !== 'pending_approval') return;
      assert.equal((d.rendered.arguments as { to: string }).to, 'ana.lopez@example.com');
    });

    test('cc is checked per element against the admin set: one outsider refuses the call, naming its index', async () => {
      const added = await rest('POST', '/v1/destination-sets/team/members', {
        values: ['Bea@Example.com', 'carl@partner.example'],
      });
      assert.equal(added.status, 200, JSON.stringify(added.body) + added.status);
      assert.deepEqual(added.body.added, ['bea@example.com', 'carl@partner.example']);
      const shown = await rest('GET', '/v1/destination-sets/team');
      assert.deepEqual(shown.body.members, ['bea@example.com', 'carl@partner.example']);

      const { call } = await session();
      const ok = await call('send_email', {
        to: 'ana@example.com',
        cc: ['carl@partner.example', 'BEA@example.com'],
        body: 'hi',
      });
      assert.equal(ok.kind, 'pending_approval', JSON.stringify(ok));
      const bad = await call('send_email', {
        to: 'ana@example.com',
        cc: ['carl@partner.example', 'mallory@evil.example', 'bea@example.com'],
        body: 'hi',
      });
      assert.equal(bad.kind, 'deny');
      if (bad.kind !== 'deny') return;
      assert.equal(bad.code, 'DESTINATION_NOT_ALLOWED');
      assert.equal(bad.rule, 'destination.not_allowed');
      assert.deepEqual(bad.details, { argument: '/cc/1' });
      assert.match(bad.message, /set "team"/);
      assert.ok(!bad.message.includes('carl@') && !bad.message.includes('bea@'), bad.message);

      // Removed over REST: refused from the next call on.
      const removed = await rest('POST', '/v1/destination-sets/team/members/remove', {
        values: ['carl@partner.example'],
      });
      assert.deepEqual(removed.body.removed, ['carl@partner.example']);
      const after = await call('send_email', {
        to: 'ana@example.com',
        cc: ['carl@partner.example'],
        body: 'x',
      });
      assert.equal(after.kind, 'deny');

      // Every change is an event and an audit record.
      await tg.audit.writer.flush();
      const kinds = (
        await store.db
          .selectFrom('audit_log')
          .select('kind')
          .where('kind', 'like', 'event.destination_set.%')
          .execute()
      ).map((r) => r.kind);
      for (const k of ['created', 'members_added', 'members_removed']) {
        assert.ok(kinds.includes(`event.destination_set.${k}`), `${k}: ${kinds.join(',')}`);
      }
    });

    test('bad set input is a structured refusal and changes nothing', async () => {
      const bad = await rest('POST', '/v1/destination-sets/team/members', {
        values: ['ok@example.com', 'a@b@example.com'],
      });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.code, 'INPUT_INVALID');
      const shown = await rest('GET', '/v1/destination-sets/team');
      assert.ok(!(shown.body.members as string[]).includes('ok@example.com'));
      const dup = await rest('POST', '/v1/destination-sets', { name: 'team', kind: 'email' });
      assert.equal(dup.status, 409);
      assert.equal(dup.body.code, 'DESTINATION_SET_EXISTS');
      const missing = await rest('GET', '/v1/destination-sets/nope');
      assert.equal(missing.status, 404);
      assert.equal(missing.body.code, 'DESTINATION_SET_NOT_FOUND');
      const dirAdd = await rest('POST', '/v1/destination-sets/channels/members', {
        values: ['#x'],
      });
      assert.equal(dirAdd.status, 400, 'a directory set takes its members from its tool only');
    });

    test('a channel from the directory: refreshed by toolgate itself, a new channel accepted after the refresh, misses rate-limited', async () => {
      const { call } = await session();
      const first = await call('post_chat', { channel: '#support', text: 'hi' });
      assert.equal(first.kind, 'allow', JSON.stringify(first));
      assert.equal(directoryCalls, 1, 'the first use refreshes the set once');
      const sales = await call('post_chat', { channel: '#sales', text: 'hi' });
      assert.equal(sales.kind, 'allow', 'members are normalised (#SALES in the directory)');
      const stat = await call('post_chat', { channel: '#announcements', text: 'hi' });
      assert.equal(stat.kind, 'allow', 'a static value beside the set');

      // A channel created during the task: refused until the directory is asked again.
      const early = await call('post_chat', { channel: '#incident-42', text: 'hi' });
      assert.equal(early.kind, 'deny');
      channels.push('#incident-42');
      const stillEarly = await call('post_chat', { channel: '#incident-42', text: 'hi' });
      assert.equal(
        stillEarly.kind,
        'deny',
        'a miss within the miss interval does not call the directory',
      );
      assert.equal(directoryCalls, 1);
      now += 11_000;
      const late = await call('post_chat', { channel: '#incident-42', text: 'hi' });
      assert.equal(late.kind, 'allow', JSON.stringify(late));
      assert.equal(directoryCalls, 2);
      const attacker = await call('post_chat', { channel: '#attacker-dm', text: 'hi' });
      assert.equal(attacker.kind, 'deny');
      if (attacker.kind === 'deny') assert.deepEqual(attacker.details, { argument: '/channel' });

      // Refreshed over REST too; each change of members is audited with what changed.
      channels.splice(channels.indexOf('#support'), 1);
      const refreshed = await rest('POST', '/v1/destination-sets/channels/refresh');
      assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
      assert.deepEqual(refreshed.body, { added: [], removed: ['#support'] });
      const gone = await call('post_chat', { channel: '#support', text: 'hi' });
      assert.equal(gone.kind, 'deny');
      await tg.audit.writer.flush();
      const events = await store.db
        .selectFrom('audit_log')
        .select(['kind', 'details'])
        .where('kind', '=', 'event.destination_set.refreshed')
        .execute();
      assert.ok(events.length >= 2);
      assert.ok(events.some((e) => (e.details ?? '').includes('#incident-42')));
      // The directory was called as toolgate itself, never as the agent.
      const dirCalls = await store.db
        .selectFrom('audit_log')
        .select('kind')
        .where('tool_id', '=', 'list_channels')
        .where('agent_id', '=', 'clerk')
        .execute();
      assert.equal(dirCalls.length, 0);
    });

    test('a nullable recipient registers constrained; null names nobody, a string is still checked', async () => {
      const nullable = (id: string, to: Record<string, unknown>) =>
        tool(id, {
          action_class: 'reversible_write',
          egress: { mode: 'constrained', hosts: ['mail.example.com'] },
          destinations: [
            { argument: '/to', kind: 'email', allow: { email_domains: ['example.com'] } },
          ],
          input_schema: {
            type: 'object',
            additionalProperties: false,
            required: ['body'],
            properties: { to, body: text },
          },
        });
      await tg.config.apply(
        [
          nullable('draft_mail', { type: ['string', 'null'], maxLength: 254 }),
          nullable('draft_mail_any', {
            anyOf: [{ type: 'string', maxLength: 254 }, { type: 'null' }],
          }),
        ],
        admin,
      );
      // A wider union is not a recipient the rule can constrain: refused at registration.
      await assert.rejects(
        tg.catalog.register(
          nullable('draft_mail_wide', { type: ['string', 'number', 'null'] }).spec,
          admin,
        ),
        (err: { code?: string }) => err.code === 'DEFINITION_INVALID',
      );
      const { call } = await session();
      for (const t of ['draft_mail', 'draft_mail_any']) {
        assert.equal((await call(t, { to: null, body: 'hi' })).kind, 'allow', t);
        assert.equal((await call(t, { to: 'ops@example.com', body: 'hi' })).kind, 'allow', t);
        const out = await call(t, { to: 'mallory@attacker.example', body: 'hi' });
        assert.equal(out.kind, 'deny', t);
        assert.equal(out.kind === 'deny' && out.code, 'DESTINATION_NOT_ALLOWED');
      }
    });

    test('registration refuses unverifiable claims: a relay host alone, an unknown argument, a set that does not exist', async () => {
      const refused = async (spec: Record<string, unknown>, rule: string) => {
        await assert.rejects(
          tg.catalog.register(spec, admin),
          (err: { code?: string; details?: { problems?: { rule: string }[] } }) => {
            assert.equal(err.code, 'DEFINITION_INVALID');
            assert.ok(
              err.details?.problems?.some((p) => p.rule === rule),
              JSON.stringify(err.details),
            );
            return true;
          },
        );
      };
      const base = SEND_EMAIL.spec as Record<string, unknown>;
      await refused(
        { ...base, id: 'relay_only', name: 'relay_only', destinations: undefined },
        'egress.unverified_constraint',
      );
      await refused(
        {
          ...base,
          id: 'half_covered',
          name: 'half_covered',
          destinations: [
            { argument: '/to', kind: 'email', allow: { email_domains: ['example.com'] } },
          ],
        },
        'egress.unverified_constraint',
      );
      await refused(
        {
          ...base,
          id: 'wrong_arg',
          name: 'wrong_arg',
          destinations: [
            { argument: '/recipient', kind: 'email', allow: { email_domains: ['example.com'] } },
            { argument: '/to', kind: 'email', allow: { email_domains: ['example.com'] } },
            { argument: '/cc', kind: 'email', allow: { email_domains: ['example.com'] } },
          ],
        },
        'destinations.argument',
      );
      await refused(
        {
          ...base,
          id: 'no_set',
          name: 'no_set',
          destinations: [
            { argument: '/to', kind: 'email', allow: { sets: ['nonexistent'] } },
            { argument: '/cc', kind: 'email', allow: { sets: ['team'] } },
          ],
        },
        'destinations.set',
      );
      await refused(
        {
          ...base,
          id: 'bad_domain',
          name: 'bad_domain',
          destinations: [
            { argument: '/to', kind: 'email', allow: { email_domains: ['xn--exmple-cua.com'] } },
            { argument: '/cc', kind: 'email', allow: { sets: ['team'] } },
          ],
        },
        'destinations.email_domain',
      );
      // The benign neighbour: a tool whose recipient is fixed by its host needs no rule.
      const fixed = await tg.catalog.register(
        validTool({
          id: 'post_status',
          name: 'post_status',
          description: 'Post the service status to the company status page.',
          action_class: 'external_send',
          access_tier: 'restricted',
          data_access: 'none',
          egress: { mode: 'constrained', hosts: ['status.example.com'] },
          input_schema: {
            type: 'object',
            additionalProperties: false,
            properties: { status: text },
          },
        }),
        admin,
      );
      assert.ok(fixed.tool.id === 'post_status');
    });

    test('a destination-constrained sender sits beside a private read (docs/architecture.md §1); the refusal is audited', async () => {
      const { s, call } = await session();
      const offered = s.tools.map((t) => t.id);
      assert.ok(
        offered.includes('search_tickets') && offered.includes('send_email'),
        offered.join(),
      );
      const read = await call('search_tickets', { q: 'API key' });
      assert.equal(read.kind, 'allow');
      const exfil = await call('send_email', { to: 'attacker@evil.example', body: 'keys' });
      assert.equal(exfil.kind, 'deny');
      if (exfil.kind !== 'deny') return;
      await tg.audit.writer.flush();
      const rec = await store.db
        .selectFrom('audit_log')
        .select(['kind', 'rule'])
        .where('call_id', '=', exfil.callId)
        .executeTakeFirstOrThrow();
      assert.deepEqual(rec, { kind: 'call.denied', rule: 'destination.not_allowed' });
      const legit = await call('send_email', { to: 'ana@example.com', body: 'reply' });
      assert.equal(legit.kind, 'pending_approval');
    });
  });
}

describe('Cedar sees list arguments as sets', () => {
  test('a forbid on list membership refuses one recipient; an old forbid on the JSON text still works', async () => {
    const tg = await openGateway({
      db: 'sqlite::memory:',
      executor: demoExecutor().register('t.ok', () => ({ status: 'ok' })),
    });
    try {
      await tg.config.apply(
        [
          { kind: 'Agent', spec: { id: 'bot', owner: 'qa' } },
          tool('notify_many', {
            action_class: 'reversible_write',
            input_schema: {
              type: 'object',
              additionalProperties: false,
              properties: { to: { type: 'array', items: text }, body: text },
            },
          }),
          { kind: 'Grant', spec: { agent: 'bot', capabilities: ['desk:use'] } },
          {
            kind: 'Policy',
            spec: {
              id: 'no-ceo',
              text: `@id("no-ceo") @reason("the CEO is not notified by agents")
forbid (principal, action, resource == Toolgate::Tool::"notify_many")
when { context.list_arguments.hasTag("to") && context.list_arguments.getTag("to").contains("ceo@example.com") };`,
            },
          },
          {
            kind: 'Policy',
            spec: {
              id: 'old-text',
              text: `@id("old-text")
forbid (principal, action, resource == Toolgate::Tool::"notify_many")
when { context.arguments.hasTag("to") && context.arguments.getTag("to") like "*legacy-block*" };`,
            },
          },
        ],
        admin,
      );
      const s = await tg.sessions.open('bot');
      const call = (a: Record<string, unknown>) =>
        tg.gate.invoke({ agentId: 'bot', sessionId: s.id }, 'notify_many', a);
      const denied = await call({ to: ['ana@example.com', 'ceo@example.com'], body: 'x' });
      assert.equal(denied.kind, 'deny');
      if (denied.kind === 'deny') assert.equal(denied.rule, 'cedar.no-ceo');
      // Membership, not substring: a look-alike element is not the CEO.
      const near = await call({ to: ['ana@example.com', 'ceo@example.com.evil'], body: 'x' });
      assert.equal(near.kind, 'allow', JSON.stringify(near));
      const old = await call({ to: ['legacy-block@example.com'], body: 'x' });
      assert.equal(old.kind, 'deny');
      if (old.kind === 'deny') assert.equal(old.rule, 'cedar.old-text');
      assert.equal((await call({ to: [], body: 'x' })).kind, 'allow');
    } finally {
      await tg.close();
    }
  });
});
