/**
 * Four eyes means two people, over REST: once the first admin is set up (an admin account with a
 * second factor), the bootstrap admin token can no longer create or promote an approver or an
 * admin, enrol or replace a second factor, or issue a personal token, while it still may before
 * (the fresh install's path) and may still create an auditor; and no operator changes their own
 * roles (an admin cannot make themself an approver), while an admin may grant another account a role.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MasterKey } from '../../src/domain/credentials/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { openWorld, restClient, type World } from '../support/world.js';

const ADMIN_TOKEN = 'admin-token-for-four-eyes-people-0123456789abcdef';
const sqlite = backends().find((b) => b.name === 'sqlite');

describe('four eyes are two people: the bootstrap token and self-promotion', () => {
  let w: World | undefined;
  let tg: Gateway;
  let base = '';
  let aliceToken = '';

  const rest = restClient(() => base);
  const call = (method: string, path: string, bearer: string, body?: unknown) =>
    rest(method, path, body, bearer);

  before(async () => {
    assert.ok(sqlite);
    w = await openWorld({
      backend: sqlite,
      rest: { adminToken: ADMIN_TOKEN },
      options: { masterKey: MasterKey.generate() },
    });
    ({ tg, base } = w);
  });
  after(async () => {
    await w?.close();
  });

  test('a fresh install: the bootstrap token creates the first admin, a token for them and their second factor', async () => {
    const created = await call('POST', '/v1/operators', ADMIN_TOKEN, {
      id: 'alice',
      roles: ['admin'],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const issued = await call('POST', '/v1/operators/alice/tokens', ADMIN_TOKEN, {
      name: 'laptop',
      expires_in_days: 1,
    });
    assert.equal(issued.status, 201, JSON.stringify(issued.body));
    aliceToken = String(issued.body.token);
    const enrolled = await call('POST', '/v1/operators/alice/second-factor', ADMIN_TOKEN);
    assert.equal(enrolled.status, 201, JSON.stringify(enrolled.body));
  });

  test('once the first admin is set up, the bootstrap token cannot create, promote or arm the second pair of eyes', async () => {
    const approver = await call('POST', '/v1/operators', ADMIN_TOKEN, {
      id: 'mallory',
      roles: ['approver'],
    });
    assert.equal(approver.status, 403, JSON.stringify(approver.body));
    const admin = await call('POST', '/v1/operators', ADMIN_TOKEN, { id: 'mal', roles: ['admin'] });
    assert.equal(admin.status, 403);
    // An auditor decides nothing: the bootstrap token may still create one.
    const auditor = await call('POST', '/v1/operators', ADMIN_TOKEN, {
      id: 'audrey',
      roles: ['auditor'],
    });
    assert.equal(auditor.status, 201, JSON.stringify(auditor.body));
    const promote = await call('PATCH', '/v1/operators/audrey', ADMIN_TOKEN, {
      roles: ['approver'],
    });
    assert.equal(promote.status, 403);
    const arm = await call('POST', '/v1/operators/audrey/second-factor', ADMIN_TOKEN);
    assert.equal(arm.status, 403);
    const rearm = await call('POST', '/v1/operators/alice/second-factor', ADMIN_TOKEN);
    assert.equal(rearm.status, 403, 'nor take over the admin by replacing her second factor');
    const token = await call('POST', '/v1/operators/audrey/tokens', ADMIN_TOKEN, {
      name: 'x',
      expires_in_days: 1,
    });
    assert.equal(token.status, 403);
    assert.equal((await tg.admin.operators.get('audrey')).roles.join(), 'auditor');
    await assert.rejects(tg.admin.operators.get('mallory'), { code: 'OPERATOR_NOT_FOUND' });
  });

  test('an admin cannot change their own roles; another account’s roles they can', async () => {
    const self = await call('PATCH', '/v1/operators/alice', aliceToken, {
      roles: ['admin', 'approver'],
    });
    assert.equal(self.status, 403, JSON.stringify(self.body));
    assert.deepEqual((await tg.admin.operators.get('alice')).roles, ['admin']);
    const bob = await call('POST', '/v1/operators', aliceToken, { id: 'bob', roles: ['auditor'] });
    assert.equal(bob.status, 201, JSON.stringify(bob.body));
    const grant = await call('PATCH', '/v1/operators/bob', aliceToken, { roles: ['approver'] });
    assert.equal(grant.status, 200, JSON.stringify(grant.body));
    const armed = await call('POST', '/v1/operators/bob/second-factor', aliceToken);
    assert.equal(armed.status, 201, JSON.stringify(armed.body));
  });
  test('once the first admin is set up, the bootstrap token changes nothing about an approver; an admin does, and it still manages an auditor', async () => {
    const disabled = await call('PATCH', '/v1/operators/bob', aliceToken, { disabled: true });
    assert.equal(disabled.status, 200, JSON.stringify(disabled.body));
    const password = 'a-long-passphrase-for-four-eyes-7391';
    const refused = [
      await call('PATCH', '/v1/operators/bob', ADMIN_TOKEN, { disabled: false }),
      await call('PUT', '/v1/operators/bob/password', ADMIN_TOKEN, { password }),
      await call('PATCH', '/v1/operators/bob', ADMIN_TOKEN, { teams: ['payments'] }),
      await call('PATCH', '/v1/operators/bob', ADMIN_TOKEN, { name: 'Bob' }),
      await call('PATCH', '/v1/operators/bob', ADMIN_TOKEN, { roles: ['auditor'] }),
      await call('PATCH', '/v1/operators/alice', ADMIN_TOKEN, { disabled: true }),
    ];
    for (const r of refused) assert.equal(r.status, 403, JSON.stringify(r.body));
    const bob = await tg.admin.operators.get('bob');
    assert.equal(bob.disabled, true);
    assert.deepEqual(bob.teams, []);
    assert.deepEqual(bob.roles, ['approver']);
    assert.equal((await tg.admin.operators.get('alice')).disabled, false);
    // The benign neighbours: an admin's own account re-enables bob; the bootstrap token still
    // manages an account that decides nothing.
    const enabled = await call('PATCH', '/v1/operators/bob', aliceToken, { disabled: false });
    assert.equal(enabled.status, 200, JSON.stringify(enabled.body));
    const teams = await call('PATCH', '/v1/operators/audrey', ADMIN_TOKEN, { teams: ['payments'] });
    assert.equal(teams.status, 200, JSON.stringify(teams.body));
    const reset = await fetch(`${base}/v1/operators/audrey/password`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ password }),
    });
    assert.equal(reset.status, 204, await reset.text());
  });
});
