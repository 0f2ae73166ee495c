/**
 * Operators end to end over REST with personal tokens, as an installation runs it: the bootstrap
 * token creates the first admin; that admin creates approvers (alice, bob), an auditor, an owner
 * and an admin who also approves (carol), enrols the approvers' second factors over REST and
 * issues each a personal token; root (the genesis admin) confirms carol, carol confirms alice and
 * bob, so they count as two people. Then, with those tokens only: four eyes on a grant that unlocks
 * an irreversible tool (alice, not alice twice, not the requester, bob → applied); an agent's
 * irreversible call waits, alice approves with her TOTP, the retry runs once; everyone else is
 * refused; a security review by alice activates a restricted tool, the registrant cannot review
 * their own, a changed definition needs a new review. Events name `operator:<id>`. Two gateways
 * on one database: a token issued on one works on the other, a revocation or a disabled account
 * is refused on both at once, a second factor enrolled on one proves its operator on the other.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { totpAt } from '../../src/domain/decisions/index.js';
import { buildServer } from '../../src/edge/rest/index.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { steppableClock, totpCodes } from '../support/operators.js';
import { validTool } from '../support/tools.js';

const ADMIN_TOKEN = 'operators-e2e-admin-token-0123456789abcdef';
const PASSWORD = 'a long enough passphrase';
const FAST_ARGON2 = { memoryKiB: 64, passes: 1, parallelism: 1 };

interface Reply {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field
  body: any;
}

for (const backend of backends()) {
  describe(`operators end to end over REST with personal tokens (${backend.name})`, () => {
    let tg: Gateway;
    let app: FastifyInstance;
    let base = '';
    let drop: () => Promise<void>;
    let agentKey = '';
    let sessionId = '';
    let wires = 0;
    const tokens: Record<string, string> = { bootstrap: ADMIN_TOKEN };
    const secrets: Record<string, string> = {};

    const req = async (
      method: string,
      path: string,
      who: string,
      body?: unknown,
    ): Promise<Reply> => {
      const res = await fetch(base + path, {
        method,
        headers: {
          authorization: `Bearer ${tokens[who] ?? who}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      return { status: res.status, body: text.startsWith('{') ? JSON.parse(text) : text };
    };

    // The gateway's clock: moved on instead of waiting when a person's codes of a window are used.
    const clock = steppableClock();
    /** A code of `who` for a step after the last one used (a step's code is single-use). */
    const code = totpCodes(secrets, clock);
    let registrationChange = '';

    const call = (args: Record<string, unknown>) =>
      req('POST', `/v1/sessions/${sessionId}/calls`, agentKey, { tool: 'wire', arguments: args });

    const eventsBy = async (actor: string): Promise<{ action: string; subject: string }[]> => {
      const r = await req('GET', '/v1/events?limit=1000', 'aud');
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return (r.body.events as { actor: string; action: string; subject: string }[]).filter(
        (e) => e.actor === actor,
      );
    };

    before(async () => {
      const fresh = await backend.fresh();
      drop = fresh.drop;
      tg = await openGateway({
        db: fresh.url,
        masterKey: MasterKey.generate(),
        clock: clock.now,
        operators: { passwordHash: FAST_ARGON2 },
        executor: demoExecutor()
          .register('test.wire', () => {
            wires++;
            return { status: 'sent' };
          })
          .register('test.lookup_invoice', () => ({ status: 'paid' })),
      });
      app = await buildServer(tg, { adminToken: ADMIN_TOKEN });
      base = await app.listen({ host: '127.0.0.1', port: 0 });

      const root = await req('POST', '/v1/operators', 'bootstrap', {
        id: 'root',
        roles: ['admin'],
        password: PASSWORD,
      });
      assert.equal(root.status, 201, JSON.stringify(root.body));
      const rootToken = await req('POST', '/v1/operators/root/tokens', 'bootstrap', {
        name: 'setup',
        expires_in_days: 1,
      });
      assert.equal(rootToken.status, 201, JSON.stringify(rootToken.body));
      tokens.root = rootToken.body.token;
      // root's second factor from the bootstrap token: root is then the first admin, set up and
      // confirmed at the genesis (the install's root of trust).
      const rootFactor = await req('POST', '/v1/operators/root/second-factor', 'bootstrap');
      assert.equal(rootFactor.status, 201, JSON.stringify(rootFactor.body));
      secrets.root = rootFactor.body.secret;

      for (const a of [
        { id: 'alice', roles: ['approver'] },
        { id: 'bob', roles: ['approver'] },
        { id: 'carol', roles: ['admin', 'approver'] },
        { id: 'aud', roles: ['auditor'] },
        { id: 'own', roles: ['owner'], teams: ['team-x'] },
      ]) {
        const made = await req('POST', '/v1/operators', 'root', { ...a, password: PASSWORD });
        assert.equal(made.status, 201, JSON.stringify(made.body));
        assert.equal(made.body.created_by, 'operator:root');
        if (a.roles.includes('approver')) {
          const enrolled = await req('POST', `/v1/operators/${a.id}/second-factor`, 'root');
          assert.equal(enrolled.status, 201, JSON.stringify(enrolled.body));
          secrets[a.id] = enrolled.body.secret;
        }
        const t = await req('POST', `/v1/operators/${a.id}/tokens`, 'root', {
          name: 'e2e',
          expires_in_days: 7,
        });
        assert.equal(t.status, 201, JSON.stringify(t.body));
        assert.match(t.body.token, /^tgo_/);
        tokens[a.id] = t.body.token;
      }

      // Four eyes are two people: root, the only confirmed decider, brings in carol as the second
      // person; carol confirms the approvers root set up, so they count in two-approver changes.
      const carol = await req('POST', '/v1/operators/carol/confirm', 'root', {
        totp: code('root'),
      });
      assert.equal(carol.status, 200, JSON.stringify(carol.body));
      for (const id of ['alice', 'bob']) {
        const byRoot = await req('POST', `/v1/operators/${id}/confirm`, 'root', {
          totp: code('root', false),
        });
        assert.equal(byRoot.status, 403, JSON.stringify(byRoot.body));
        const confirmed = await req('POST', `/v1/operators/${id}/confirm`, 'carol', {
          totp: code('carol'),
        });
        assert.equal(confirmed.status, 200, JSON.stringify(confirmed.body));
        assert.equal(confirmed.body.confirmed_by, 'operator:carol');
      }

      const applied = await req('POST', '/v1/apply', 'carol', [
        { kind: 'Agent', spec: { id: 'payer', owner: 'team-x', tier: 'privileged' } },
        {
          kind: 'Tool',
          spec: validTool({
            id: 'wire',
            name: 'wire',
            description: 'Send a wire transfer of an amount to an account.',
            owner: 'team-x',
            action_class: 'irreversible',
            access_tier: 'restricted',
            input_schema: {
              type: 'object',
              additionalProperties: false,
              required: ['to', 'cents'],
              properties: {
                to: { type: 'string', maxLength: 40 },
                cents: { type: 'integer', minimum: 1, maximum: 100_000 },
              },
            },
            output_schema: { type: 'object', properties: { status: { type: 'string' } } },
            required_capabilities: ['payments:wire'],
            runtime: { kind: 'inline', handler: 'test.wire' },
          }),
        },
      ]);
      assert.equal(applied.status, 200, JSON.stringify(applied.body));
      const { definition_hash } = await tg.catalog.get('wire', '1.0.0');
      const reviewed = await req('POST', '/v1/tools/wire/versions/1.0.0/review', 'bob', {
        definition_hash,
        decision: 'approved',
        notes: 'irreversible: amount bounded, one account',
        totp: code('bob'),
      });
      assert.equal(reviewed.status, 200, JSON.stringify(reviewed.body));
      assert.equal(reviewed.body.review.reviewer, 'operator:bob');
      assert.match(reviewed.body.changeId, /^chg_/, 'an irreversible tool goes live by four eyes');
      registrationChange = reviewed.body.changeId;
      const key = await req('POST', '/v1/agents/payer/keys', 'root');
      assert.equal(key.status, 201, JSON.stringify(key.body));
      agentKey = key.body.api_key;
    });
    after(async () => {
      await app.close();
      await tg.close();
      await drop();
    });

    /** Four eyes on one change: alice; not alice again, nor the requester, nor a non-approver; bob. */
    const fourEyes = async (changeId: string) => {
      const view = await tg.changes.get(changeId);
      assert.equal(view.requested_by, 'operator:carol');
      assert.equal(view.status, 'pending');
      const path = `/v1/changes/${changeId}/approve`;

      const first = await req('POST', path, 'alice', { totp: code('alice') });
      assert.equal(first.status, 200, JSON.stringify(first.body));
      const again = await req('POST', path, 'alice', { totp: code('alice', false) });
      assert.equal(again.status, 403, JSON.stringify(again.body));
      assert.equal(again.body.code, 'FORBIDDEN');
      const requester = await req('POST', path, 'carol', { totp: code('carol', false) });
      assert.equal(requester.status, 403, JSON.stringify(requester.body));
      assert.equal(requester.body.code, 'FORBIDDEN');
      assert.match(requester.body.message, /request/);
      for (const who of ['aud', 'own', 'root', 'bootstrap']) {
        const r = await req('POST', path, who, { totp: '123456' });
        assert.equal(r.status, 403, `${who}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.code, 'FORBIDDEN');
      }
      const stated = await req('POST', path, 'bob', {
        approver: 'alice',
        totp: code('bob', false),
      });
      assert.equal(stated.status, 400, JSON.stringify(stated.body));
      assert.equal(stated.body.code, 'INPUT_INVALID');
      assert.equal((await tg.changes.get(changeId)).status, 'pending');
      assert.deepEqual((await tg.changes.get(changeId)).approvers, ['operator:alice']);

      const second = await req('POST', path, 'bob', { totp: code('bob') });
      assert.equal(second.status, 200, JSON.stringify(second.body));
      const decided = await tg.changes.get(changeId);
      assert.equal(decided.status, 'applied');
      assert.deepEqual([...decided.approvers].sort(), ['operator:alice', 'operator:bob']);
    };

    test('four eyes on an irreversible registration and on the grant that unlocks it', async () => {
      assert.notEqual((await tg.catalog.get('wire', '1.0.0')).lifecycle, 'active');
      await fourEyes(registrationChange);
      assert.equal((await tg.catalog.get('wire', '1.0.0')).lifecycle, 'active');

      const requested = await req('POST', '/v1/grants', 'carol', {
        agent: 'payer',
        capabilities: ['payments:wire'],
      });
      assert.equal(requested.status, 200, JSON.stringify(requested.body));
      const pending = await req('GET', '/v1/changes?status=pending', 'alice');
      assert.equal(pending.status, 200, JSON.stringify(pending.body));
      const change = (pending.body.changes as { id: string; kind: string }[]).find(
        (c) => c.kind === 'grant',
      );
      assert.ok(change, JSON.stringify(pending.body));
      await fourEyes(change.id);

      const alice = await eventsBy('operator:alice');
      const bob = await eventsBy('operator:bob');
      for (const id of [registrationChange, change.id]) {
        assert.ok(
          alice.some((e) => e.subject.includes(id)),
          `alice's approval of ${id} is on the record`,
        );
        assert.ok(
          bob.some((e) => e.subject.includes(id)),
          `bob's approval of ${id} is on the record`,
        );
      }
      assert.ok((await eventsBy('operator:carol')).length > 0, 'the requester is on the record');
    });

    test("an irreversible call waits; only alice's token with her TOTP approves; the retry runs once", async () => {
      // A session opened now, with the grant the changes above applied.
      const session = await req('POST', '/v1/sessions', agentKey, {});
      assert.equal(session.status, 201, JSON.stringify(session.body));
      sessionId = session.body.id;
      const args = { to: 'ACC-1', cents: 500 };
      const waiting = await call(args);
      assert.equal(waiting.status, 202, JSON.stringify(waiting.body));
      const approvalId = String(waiting.body.approval_id ?? waiting.body.approvalId);
      assert.match(approvalId, /^apr_/, JSON.stringify(waiting.body));
      const path = `/v1/approvals/${approvalId}/approve`;

      for (const who of ['aud', 'own', 'root', 'bootstrap']) {
        const r = await req('POST', path, who, {});
        assert.equal(r.status, 403, `${who}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.code, 'FORBIDDEN');
        assert.deepEqual(Object.keys(r.body).sort(), ['code', 'details', 'message']);
      }
      const agent = await req('POST', path, agentKey, {});
      assert.equal(agent.status, 401, 'an agent key is no operator');
      const stated = await req('POST', path, 'alice', {
        approver: 'bob',
        totp: code('alice', false),
      });
      assert.equal(stated.status, 400, JSON.stringify(stated.body));
      assert.equal(stated.body.code, 'INPUT_INVALID');
      const noCode = await req('POST', path, 'alice', {});
      assert.notEqual(noCode.status, 200, 'an irreversible call needs the step-up');
      assert.equal((await tg.approvals.get(approvalId)).status, 'pending');
      assert.equal(wires, 0);

      const ok = await req('POST', path, 'alice', { totp: code('alice') });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      const view = await tg.approvals.get(approvalId);
      assert.equal(view.status, 'approved');
      assert.equal(view.decided_by, 'operator:alice');

      const ran = await call(args);
      assert.equal(ran.status, 200, JSON.stringify(ran.body));
      assert.equal(wires, 1);
      const again = await call(args);
      assert.notEqual(again.status, 200, 'an approval runs its call once');
      assert.equal(wires, 1);
      const decided = await eventsBy('operator:alice');
      assert.ok(
        decided.some((e) => e.subject.includes(approvalId)),
        `the approval is recorded as alice: ${JSON.stringify(decided)}`,
      );
    });

    test('a security review with an approver’s token and code activates a restricted tool; the registrant cannot review their own; a changed definition needs a new review', async () => {
      const restricted = (description: string) =>
        validTool({
          id: 'ledger',
          name: 'ledger',
          description,
          owner: 'team-y',
          access_tier: 'restricted',
          required_capabilities: ['ledger:read'],
        });
      const registered = await req(
        'POST',
        '/v1/tools',
        'carol',
        restricted('Return the ledger entries of one invoice by its number.'),
      );
      assert.equal(registered.status, 201, JSON.stringify(registered.body));
      assert.equal(registered.body.tool.lifecycle, 'draft');
      const hash = registered.body.tool.definition_hash as string;
      const reviewPath = '/v1/tools/ledger/versions/1.0.0/review';
      const review = { definition_hash: hash, decision: 'approved', notes: 'checked the schema' };

      const queue = await req('GET', '/v1/reviews?status=pending', 'alice');
      assert.equal(queue.status, 200, JSON.stringify(queue.body));
      assert.ok(
        (queue.body.reviews as { tool_id: string }[]).some((r) => r.tool_id === 'ledger'),
        'the approver sees the queue',
      );

      const own = await req('POST', reviewPath, 'carol', review);
      assert.equal(own.status, 403, JSON.stringify(own.body));
      assert.equal(own.body.code, 'FORBIDDEN');
      assert.match(own.body.message, /registered this definition/);
      for (const who of ['aud', 'root', 'bootstrap']) {
        const r = await req('POST', reviewPath, who, review);
        assert.equal(r.status, 403, `${who}: ${JSON.stringify(r.body)}`);
      }
      assert.equal((await tg.catalog.get('ledger', '1.0.0')).lifecycle, 'draft');

      // The review needs the reviewer's own code; alice spent this window's codes above, so a
      // fresh approver, dana, reviews (the verifier takes three steps, each once).
      const dana = await req('POST', '/v1/operators', 'root', { id: 'dana', roles: ['approver'] });
      assert.equal(dana.status, 201, JSON.stringify(dana.body));
      secrets.dana = (await req('POST', '/v1/operators/dana/second-factor', 'root')).body.secret;
      tokens.dana = (
        await req('POST', '/v1/operators/dana/tokens', 'root', { name: 'e2e', expires_in_days: 1 })
      ).body.token;
      const bare = await req('POST', reviewPath, 'dana', review);
      assert.equal(bare.status, 400, `no code: ${JSON.stringify(bare.body)}`);
      assert.equal((await tg.catalog.get('ledger', '1.0.0')).lifecycle, 'draft');
      const reviewed = await req('POST', reviewPath, 'dana', { ...review, totp: code('dana') });
      assert.equal(reviewed.status, 200, JSON.stringify(reviewed.body));
      assert.equal(reviewed.body.review.reviewer, 'operator:dana');
      assert.equal(reviewed.body.tool.lifecycle, 'active');

      const changed = await req(
        'POST',
        '/v1/tools',
        'carol',
        restricted('Return the ledger entries and the payer of one invoice by its number.'),
      );
      assert.notEqual(changed.status, 201, 'a version cannot change under its review');
      const next = await req('POST', '/v1/tools', 'carol', {
        ...restricted('Return the ledger entries and the payer of one invoice by its number.'),
        version: '1.1.0',
      });
      assert.equal(next.status, 201, JSON.stringify(next.body));
      assert.equal(next.body.tool.lifecycle, 'draft', 'a changed definition waits for a review');
      const stale = await req('POST', '/v1/tools/ledger/versions/1.1.0/review', 'dana', review);
      assert.equal(
        stale.status,
        409,
        `the old hash reviews nothing: ${JSON.stringify(stale.body)}`,
      );
      assert.equal((await tg.catalog.get('ledger', '1.1.0')).lifecycle, 'draft');
    });
  });
}

/**
 * Two gateways on one database (replicas behind a load balancer): what one does about operators
 * holds on the other from the next request, with no cache in between.
 */
for (const backend of backends()) {
  describe(`operators across two replicas on one database (${backend.name})`, () => {
    const gateways: Gateway[] = [];
    const apps: FastifyInstance[] = [];
    const bases: string[] = [];
    let drop: () => Promise<void>;
    let rootToken = '';

    const on = async (
      replica: 0 | 1,
      method: string,
      path: string,
      token: string,
      body?: unknown,
    ): Promise<Reply> => {
      const res = await fetch(bases[replica] + path, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      return { status: res.status, body: text.startsWith('{') ? JSON.parse(text) : text };
    };

    before(async () => {
      const fresh = await backend.fresh();
      drop = fresh.drop;
      const options = {
        db: fresh.url,
        masterKey: MasterKey.generate(),
        operators: { passwordHash: FAST_ARGON2 },
      };
      for (let i = 0; i < 2; i++) {
        const tg = await openGateway(options);
        gateways.push(tg);
        const app = await buildServer(tg, { adminToken: ADMIN_TOKEN });
        apps.push(app);
        bases.push(await app.listen({ host: '127.0.0.1', port: 0 }));
      }
      const root = await on(0, 'POST', '/v1/operators', ADMIN_TOKEN, {
        id: 'root',
        roles: ['admin'],
      });
      assert.equal(root.status, 201, JSON.stringify(root.body));
      const t = await on(0, 'POST', '/v1/operators/root/tokens', ADMIN_TOKEN, {
        name: 'setup',
        expires_in_days: 1,
      });
      rootToken = t.body.token;
      const alice = await on(0, 'POST', '/v1/operators', rootToken, {
        id: 'alice',
        roles: ['approver'],
        password: PASSWORD,
      });
      assert.equal(alice.status, 201, JSON.stringify(alice.body));
    });
    after(async () => {
      for (const app of apps) await app.close();
      for (const tg of gateways) await tg.close();
      await drop();
    });

    test('a token issued on one replica works on the other; revoked on one, refused on the other at once', async () => {
      const issued = await on(0, 'POST', '/v1/operators/alice/tokens', rootToken, {
        name: 'laptop',
        expires_in_days: 7,
      });
      assert.equal(issued.status, 201, JSON.stringify(issued.body));
      const me = await on(1, 'GET', '/v1/operators/me', issued.body.token);
      assert.equal(me.status, 200, JSON.stringify(me.body));
      assert.equal(me.body.id, 'alice');

      const revoked = await on(
        1,
        'DELETE',
        `/v1/operators/alice/tokens/${issued.body.id}`,
        rootToken,
      );
      assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
      for (const replica of [0, 1] as const) {
        const gone = await on(replica, 'GET', '/v1/operators/me', issued.body.token);
        assert.equal(gone.status, 401, `replica ${replica}: ${JSON.stringify(gone.body)}`);
        assert.equal(gone.body.code, 'UNAUTHENTICATED');
      }
    });

    test('a second factor enrolled on one replica proves its operator on the other; a disabled account is refused on both', async () => {
      const enrolled = await on(0, 'POST', '/v1/operators/alice/second-factor', rootToken);
      assert.equal(enrolled.status, 201, JSON.stringify(enrolled.body));
      const first = await on(0, 'POST', '/v1/operators/alice/tokens', rootToken, {
        name: 'first',
        expires_in_days: 1,
      });
      // Issuing one's own token is a login (password and code): here on the other replica.
      const own = await on(1, 'POST', '/v1/operators/me/tokens', first.body.token, {
        name: 'own',
        expires_in_days: 1,
        password: PASSWORD,
        totp: totpAt(enrolled.body.secret, new Date()),
      });
      assert.equal(own.status, 201, JSON.stringify(own.body));

      const disabled = await on(1, 'POST', '/v1/operators/alice/disable', rootToken);
      assert.equal(disabled.status, 200, JSON.stringify(disabled.body));
      for (const replica of [0, 1] as const) {
        for (const token of [first.body.token, own.body.token]) {
          const refused = await on(replica, 'GET', '/v1/operators/me', token);
          assert.equal(refused.status, 401, `replica ${replica}: ${JSON.stringify(refused.body)}`);
        }
      }
    });
  });
}
