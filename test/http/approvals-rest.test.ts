/**
 * The REST decision routes take the approver from the request's authentication, never its body.
 * With the shared admin token (the bootstrap operator) a request may enrol second factors but
 * never approve or reject; a body that still names an approver is refused with a message that
 * says why; an agent key reaches none of it. An enrolment over REST is checked by a second
 * gateway on the same database at once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { totpAt } from '../../src/domain/decisions/index.js';
import { BOOTSTRAP_OPERATOR } from '../../src/domain/operators/index.js';
import { buildServer } from '../../src/edge/rest/index.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { approveReview } from '../support/reviews.js';
import { approvedNoteTool, validTool } from '../support/tools.js';
import { personalToken, restClient } from '../support/world.js';

const ADMIN_TOKEN = 'approvals-rest-admin-token-0123456789abcdef';
const setup = { id: 'setup', via: 'library' } as const;

for (const backend of backends()) {
  describe(`REST decisions act as the authenticated operator (${backend.name})`, () => {
    let tg: Gateway;
    let replica: Gateway;
    let app: FastifyInstance;
    let base = '';
    let agentKey = '';
    let drop: () => Promise<void>;
    let approvalId = '';
    let changeId = '';
    let approverToken = '';

    before(async () => {
      const fresh = await backend.fresh();
      drop = fresh.drop;
      const options = {
        db: fresh.url,
        masterKey: MasterKey.generate(),
        executor: demoExecutor().register('test.echo', () => ({ status: 'ok' })),
      };
      tg = await openGateway(options);
      replica = await openGateway(options);
      await tg.config.apply(
        [
          { kind: 'Agent', spec: { id: 'bot', owner: 'qa', tier: 'privileged' } },
          { kind: 'Tool', spec: approvedNoteTool() },
          {
            kind: 'Tool',
            spec: validTool({
              id: 'audit_read',
              name: 'audit_read',
              access_tier: 'privileged',
              required_capabilities: ['audit:read'],
            }),
          },
          { kind: 'Grant', spec: { agent: 'bot', capabilities: ['notes:write'] } },
        ],
        setup,
      );
      const s = await tg.sessions.open('bot');
      const r = await tg.gate.invoke({ agentId: 'bot', sessionId: s.id }, 'note', {
        invoice: 'R-1',
      });
      assert.equal(r.kind, 'pending_approval');
      if (r.kind === 'pending_approval') approvalId = r.approvalId;
      // A privileged tool is a draft until an approver's security review, which opens its change.
      await approveReview(tg, 'audit_read', '1.0.0');
      const change = (await tg.changes.list('pending'))[0];
      assert.ok(change);
      changeId = change.id;
      agentKey = (await tg.keys.issue('bot', setup)).apiKey;
      // An approver account with a personal token: a stated approver is refused even from one.
      await tg.admin.operators.create(BOOTSTRAP_OPERATOR, { id: 'alice', roles: ['approver'] });
      approverToken = await personalToken(tg.admin, 'alice');
      app = await buildServer(tg, { adminToken: ADMIN_TOKEN });
      base = await app.listen({ host: '127.0.0.1', port: 0 });
    });
    after(async () => {
      await app.close();
      await replica.close();
      await tg.close();
      await drop();
    });

    const send = restClient(() => base, ADMIN_TOKEN);

    test('the bootstrap admin token cannot approve or reject a call, or a change', async () => {
      for (const [path, body] of [
        [`/v1/approvals/${approvalId}/approve`, {}],
        [`/v1/approvals/${approvalId}/reject`, { reason: 'no' }],
        [`/v1/changes/${changeId}/approve`, { totp: '123456' }],
        [`/v1/changes/${changeId}/reject`, { reason: 'no' }],
      ] as const) {
        const r = await send('POST', path, body);
        assert.equal(r.status, 403, `${path}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.code, 'FORBIDDEN');
        assert.match(String(r.body.message), /bootstrap admin token cannot/);
        assert.deepEqual(r.body.details, { roles: ['approver'] });
      }
      assert.equal((await tg.approvals.get(approvalId)).status, 'pending');
      assert.equal((await tg.changes.get(changeId)).status, 'pending');
    });

    // The bootstrap token enrols before alice's token is first used (which ends its set-up).
    test('an admin enrols a second factor over REST; another gateway checks it at once', async () => {
      const r = await send('POST', '/v1/operators/alice/second-factor');
      assert.equal(r.status, 201, JSON.stringify(r.body));
      assert.equal(r.headers.get('cache-control'), 'no-store');
      assert.equal(r.body.operator_id, 'alice');
      const secret = String(r.body.secret);
      assert.match(String(r.body.otpauth_uri), /^otpauth:\/\/totp\/toolgate:alice\?/);
      await replica.secondFactor.verify('alice', totpAt(secret, new Date()));
      const state = await send('GET', '/v1/operators/alice/second-factor');
      assert.equal(state.body.enrolled, true);
      assert.ok(!JSON.stringify(state.body).includes(secret), 'the secret is never shown again');
      const removed = await send('DELETE', '/v1/operators/alice/second-factor');
      assert.deepEqual(removed.body, { operator_id: 'alice', removed: true });
      assert.equal(await replica.secondFactor.enrolled('alice'), false);
    });

    test('a body that names the approver is refused, saying the approver is the authenticated operator', async () => {
      for (const [path, body] of [
        [`/v1/approvals/${approvalId}/approve`, { approver: 'alice' }],
        [`/v1/approvals/${approvalId}/reject`, { approver: 'alice', reason: 'no' }],
        [`/v1/changes/${changeId}/approve`, { approver: 'alice', totp: '123456' }],
        [`/v1/changes/${changeId}/reject`, { approver: 'alice', reason: 'no' }],
      ] as const) {
        const r = await send('POST', path, body, approverToken);
        assert.equal(r.status, 400, `${path}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.code, 'INPUT_INVALID');
        assert.match(String(r.body.message), /approver is the authenticated operator/);
      }
      assert.equal((await tg.approvals.get(approvalId)).status, 'pending');
      assert.deepEqual((await tg.changes.get(changeId)).approvers, []);
    });

    test('an agent key reaches no decision or enrolment route', async () => {
      for (const [method, path, body] of [
        ['POST', `/v1/approvals/${approvalId}/approve`, {}],
        ['POST', `/v1/approvals/${approvalId}/reject`, { reason: 'x' }],
        ['POST', `/v1/changes/${changeId}/approve`, { totp: '123456' }],
        ['POST', '/v1/operators/bot/second-factor', undefined],
        ['DELETE', '/v1/operators/bot/second-factor', undefined],
      ] as const) {
        const r = await send(method, path, body, agentKey);
        assert.equal(r.status, 401, `${method} ${path}`);
        assert.equal(r.body.code, 'UNAUTHENTICATED');
      }
      assert.equal(await tg.secondFactor.enrolled('bot'), false);
      assert.equal((await tg.approvals.get(approvalId)).status, 'pending');
    });
  });
}
