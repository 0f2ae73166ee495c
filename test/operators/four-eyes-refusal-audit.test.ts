/**
 * Every four-eyes refusal is in the audit log, whichever edge made it (INVARIANTS 14; attack round
 * 9, F5): once the first admin is set up, the bootstrap token creating, promoting, arming,
 * disabling or re-passwording a second pair of eyes, or stripping the first admin's factor, is
 * refused and recorded as one `operator.four_eyes_refused` (actor the token, subject the account,
 * the edge, the act, the reason), and so is an operator changing their own roles. A refused
 * attempt writes that one record and nothing else, and never a secret. The benign neighbours: what
 * the token may still do (an auditor's account, its teams, its password) and an admin changing
 * another admin's roles record what they did and no refusal. The change desk's four eyes likewise:
 * the requester approving their own change, or an approver approving twice, is one
 * `change.approval_refused`, beside an approval that counts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { totpAt } from '../../src/domain/decisions/index.js';
import { ensureBuilt, runCli } from '../support/cli.js';
import { eventsSince, lastSeq, type Recorded } from '../support/events.js';
import { approvePendingReviews } from '../support/reviews.js';
import { wipeDiskTool } from '../support/tools.js';
import { openWorld, type World } from '../support/world.js';

const PASSWORD = 'correct-horse-battery-staple-9137';

describe('four-eyes refusals are audited: the bootstrap token after the genesis, one’s own roles, one’s own change', () => {
  let w: World;
  let dir = '';
  let alice = '';
  let aliceTokenId = '';
  let aliceSecret = '';
  // Now, so that the CLI (on the system clock) accepts the tokens the gateway issued.
  let now = new Date();
  /** A fresh code of a second factor: each call moves the clock one TOTP step on. */
  const code = (secret: string) => {
    now = new Date(now.getTime() + 30_000);
    return totpAt(secret, now);
  };

  const mark = () => lastSeq(w.tg.admin);
  const since = (seq: number) => eventsSince(w.tg.admin, seq);

  /**
   * Runs a refused attempt and returns its one record: a 403, and exactly one new event, the
   * refusal (`action`), so nothing else was written.
   */
  async function refusedOnce(
    attempt: () => Promise<{ status: number; body: Record<string, unknown> }>,
    action = 'operator.four_eyes_refused',
  ): Promise<Recorded> {
    const seq = await mark();
    const r = await attempt();
    assert.equal(r.status, 403, JSON.stringify(r.body));
    assert.equal(r.body.code, 'FORBIDDEN');
    const written = await since(seq);
    assert.deepEqual(
      written.map((e) => e.action),
      [action],
      JSON.stringify(written),
    );
    const [record] = written;
    assert.ok(record);
    // The authority's own record names the roles, not the words (operator-authority.ts).
    if (action !== 'operator.forbidden') assert.equal(record.details.message, r.body.message);
    assert.doesNotMatch(record.raw, new RegExp(PASSWORD));
    return record;
  }

  /** Runs an allowed attempt: its status, the actions it wrote, and no four-eyes refusal. */
  async function allowed(
    attempt: () => Promise<{ status: number; body: Record<string, unknown> }>,
    status: number,
  ): Promise<string[]> {
    const seq = await mark();
    const r = await attempt();
    assert.equal(r.status, status, JSON.stringify(r.body));
    const actions = (await since(seq)).map((e) => e.action);
    assert.ok(!actions.some((a) => a.endsWith('_refused')), actions.join());
    return actions;
  }

  /** Asserts `record` is alice's REST update of her own account refused for `reason` (`words`). */
  function assertOwnUpdate(record: Recorded, reason: string, words: RegExp): void {
    assert.equal(record.actor, 'operator:alice');
    assert.equal(record.subject, 'operator:alice');
    assert.equal(record.details.edge, 'rest');
    assert.equal(record.details.act, 'update');
    assert.equal(record.details.reason, reason);
    assert.match(String(record.details.message), words);
  }

  before(async () => {
    ensureBuilt();
    // The CLI's folder holds the world's database (test/support/cli.ts: tg.db).
    dir = mkdtempSync(join(tmpdir(), 'toolgate-four-eyes-audit-'));
    w = await openWorld({
      rest: true,
      options: {
        db: `sqlite:${join(dir, 'tg.db')}`,
        masterKey: MasterKey.generate(),
        clock: () => now,
      },
    });
    // The fresh install's path: the bootstrap token creates the first admin, her token, her factor.
    assert.equal(
      (await w.send('POST', '/v1/operators', { id: 'alice', roles: ['admin'] })).status,
      201,
    );
    const issued = await w.send('POST', '/v1/operators/alice/tokens', {
      name: 'laptop',
      expires_in_days: 5,
    });
    assert.equal(issued.status, 201, JSON.stringify(issued.body));
    alice = String(issued.body.token);
    aliceTokenId = String(issued.body.id);
    const enrolled = await w.send('POST', '/v1/operators/alice/second-factor');
    assert.equal(enrolled.status, 201, JSON.stringify(enrolled.body));
    aliceSecret = String(enrolled.body.secret);
    // Alice, as her own account, sets up an approver and a second admin.
    for (const [id, roles] of [
      ['appr', ['approver']],
      ['bob', ['admin']],
    ] as const) {
      const created = await w.send('POST', '/v1/operators', { id, roles }, alice);
      assert.equal(created.status, 201, JSON.stringify(created.body));
    }
  });
  after(async () => {
    await w?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('creating: an auditor is the bootstrap token’s to create and audited as the creation; an approver is refused and audited as a refusal', async () => {
    const created = await allowed(
      () => w.send('POST', '/v1/operators', { id: 'audrey', roles: ['auditor'] }),
      201,
    );
    assert.ok(created.includes('operator.created'));
    const refusal = await refusedOnce(() =>
      w.send('POST', '/v1/operators', { id: 'bt-appr', roles: ['approver'], password: PASSWORD }),
    );
    assert.equal(refusal.actor, 'admin-token');
    assert.equal(refusal.via, 'rest');
    assert.equal(refusal.subject, 'operator:bt-appr');
    assert.equal(refusal.details.edge, 'rest');
    assert.equal(refusal.details.act, 'create');
    assert.equal(refusal.details.reason, 'bootstrap_after_setup');
    assert.match(String(refusal.details.message), /cannot create an approver or an admin/);
    assert.equal((await w.send('GET', '/v1/operators/bt-appr')).status, 404);
  });

  test('changing: the token changes an auditor’s teams; promoting it, or disabling or re-passwording an approver, is refused and audited', async () => {
    await allowed(() => w.send('PATCH', '/v1/operators/audrey', { teams: ['payments'] }), 200);
    const promote = await refusedOnce(() =>
      w.send('PATCH', '/v1/operators/audrey', { roles: ['admin'] }),
    );
    assert.equal(promote.subject, 'operator:audrey');
    assert.equal(promote.details.act, 'update');
    assert.equal(promote.details.reason, 'bootstrap_after_setup');
    assert.deepEqual((await w.tg.admin.operators.get('audrey')).roles, ['auditor']);
    const disable = await refusedOnce(() => w.send('POST', '/v1/operators/appr/disable'));
    assert.equal(disable.subject, 'operator:appr');
    assert.equal(disable.details.act, 'update');
    assert.equal((await w.tg.admin.operators.get('appr')).disabled, false);
    // The benign neighbour of a password: an auditor's is still the token's to set.
    await allowed(
      () => w.send('PUT', '/v1/operators/audrey/password', { password: PASSWORD }),
      204,
    );
    const password = await refusedOnce(() =>
      w.send('PUT', '/v1/operators/appr/password', { password: PASSWORD }),
    );
    assert.equal(password.subject, 'operator:appr');
    assert.equal(password.details.act, 'set_password');
    assert.equal((await w.tg.admin.operators.get('appr')).has_password, false);
  });

  test('arming: the token cannot enrol or remove a second factor, issue or revoke an admin’s token; an admin can', async () => {
    const enrol = await refusedOnce(() => w.send('POST', '/v1/operators/appr/second-factor'));
    assert.equal(enrol.subject, 'operator:appr');
    assert.equal(enrol.details.act, 'enrol_second_factor');
    assert.equal(enrol.actor, 'admin-token');
    const strip = await refusedOnce(() => w.send('DELETE', '/v1/operators/alice/second-factor'));
    assert.equal(strip.subject, 'operator:alice');
    assert.equal(strip.details.act, 'remove_second_factor');
    assert.equal(await w.tg.admin.secondFactor.enrolled('alice'), true);
    const token = await refusedOnce(() =>
      w.send('POST', '/v1/operators/appr/tokens', { name: 'x', expires_in_days: 1 }),
    );
    assert.equal(token.subject, 'operator:appr');
    assert.equal(token.details.act, 'issue_token');
    assert.deepEqual(await w.tg.admin.operators.tokens('appr'), []);
    const revoke = await refusedOnce(() =>
      w.send('DELETE', `/v1/operators/alice/tokens/${aliceTokenId}`),
    );
    assert.equal(revoke.subject, 'operator:alice');
    assert.equal(revoke.details.act, 'revoke_token');
    // The benign neighbours, as an admin's own account: enrol and issue are allowed and recorded.
    const armed = await allowed(
      () => w.send('POST', '/v1/operators/appr/second-factor', undefined, alice),
      201,
    );
    assert.ok(armed.includes('second_factor.enrolled'), armed.join());
    const issued = await allowed(
      () => w.send('POST', '/v1/operators/appr/tokens', { name: 'x', expires_in_days: 1 }, alice),
      201,
    );
    assert.ok(issued.includes('operator.token_issued'), issued.join());
  });

  test('one’s own roles: an admin changes another admin’s roles; changing her own is refused and audited', async () => {
    const granted = await allowed(
      () => w.send('PATCH', '/v1/operators/bob', { roles: ['admin', 'auditor'] }, alice),
      200,
    );
    assert.ok(granted.includes('operator.updated'));
    const self = await refusedOnce(() =>
      w.send('PATCH', '/v1/operators/alice', { roles: ['admin', 'approver'] }, alice),
    );
    assertOwnUpdate(self, 'own_roles', /cannot change their own roles/);
    // The CLI goes to the same service: the same refusal, the same record, naming its edge.
    const seq = await mark();
    const cli = await runCli(dir, ['operators', 'update', 'alice', '--roles', 'admin,approver'], {
      TOOLGATE_TOKEN: alice,
    });
    assert.notEqual(cli.code, 0);
    assert.match(cli.stderr, /cannot change their own roles/);
    const viaCli = await since(seq);
    assert.deepEqual(
      viaCli.map((e) => [e.action, e.actor, e.subject, e.details.edge, e.details.reason]),
      [['operator.four_eyes_refused', 'operator:alice', 'operator:alice', 'cli', 'own_roles']],
    );
    assert.deepEqual((await w.tg.admin.operators.get('alice')).roles, ['admin']);
    // Her own name is hers to change: no refusal.
    await allowed(() => w.send('PATCH', '/v1/operators/alice', { name: 'Alice' }, alice), 200);
  });

  test('an admin disabling their own account is refused and audited; disabling another is recorded', async () => {
    const self = await refusedOnce(() =>
      w.send('PATCH', '/v1/operators/alice', { disabled: true }, alice),
    );
    assertOwnUpdate(self, 'own_account_disabled', /cannot disable their own account/);
    assert.equal((await w.tg.admin.operators.get('alice')).disabled, false);
    // The benign neighbour: an auditor's account is hers to disable, recorded as the change.
    await w.send('POST', '/v1/operators', { id: 'gone', roles: ['auditor'] }, alice);
    const disabled = await allowed(
      () => w.send('PATCH', '/v1/operators/gone', { disabled: true }, alice),
      200,
    );
    assert.ok(disabled.includes('operator.disabled'), disabled.join());
  });

  test('a change: its requester approving it, or an approver approving twice, is refused and audited; an approval that counts is recorded', async () => {
    // Bob, an admin alice makes an approver too, requests a change that needs two people.
    await allowed(
      () => w.send('PATCH', '/v1/operators/bob', { roles: ['admin', 'approver'] }, alice),
      200,
    );
    /** Alice issues `id` a personal token named `name`. */
    const issueToken = async (id: string, name: string) => {
      const issued = await w.send(
        'POST',
        `/v1/operators/${id}/tokens`,
        { name, expires_in_days: 1 },
        alice,
      );
      assert.equal(issued.status, 201, JSON.stringify(issued.body));
      return String(issued.body.token);
    };
    const bob = await issueToken('bob', 'x');
    const tool = wipeDiskTool();
    const applied = await w.send('POST', '/v1/apply', [{ kind: 'Tool', spec: tool }], bob);
    assert.equal(applied.status, 200, JSON.stringify(applied.body));
    await approvePendingReviews(w.tg);
    const change = (await w.tg.changes.list('pending')).find((c) =>
      c.subject.includes('wipe_disk'),
    );
    assert.ok(change);
    assert.equal(change.required, 2);
    const approve = (token: string, totp: string) =>
      w.send('POST', `/v1/changes/${change.id}/approve`, { totp }, token);
    const own = await refusedOnce(() => approve(bob, '000000'), 'change.approval_refused');
    assert.equal(own.actor, 'operator:bob');
    assert.equal(own.subject, `change:${change.id}`);
    assert.equal(own.details.reason, 'own_request');
    assert.match(String(own.details.message), /requested change .* cannot approve it/);
    // The bootstrap token decides nothing: the operator authority refuses it on every front.
    const token = await refusedOnce(
      () => approve(String(w.adminToken), '000000'),
      'operator.forbidden',
    );
    assert.equal(token.subject, 'operator:admin-token');
    // The approver, armed by alice and confirmed by her (the genesis), approves once: it counts.
    const armed = await w.send('POST', '/v1/operators/appr/second-factor', undefined, alice);
    assert.equal(armed.status, 201, JSON.stringify(armed.body));
    const apprSecret = String(armed.body.secret);
    const appr = await issueToken('appr', 'y');
    const confirmed = await w.send(
      'POST',
      '/v1/operators/appr/confirm',
      { totp: code(aliceSecret) },
      alice,
    );
    assert.equal(confirmed.status, 200, JSON.stringify(confirmed.body));
    const first = await allowed(() => approve(appr, code(apprSecret)), 200);
    assert.ok(first.includes('change.approved'), first.join());
    const twice = await refusedOnce(
      () => approve(appr, code(apprSecret)),
      'change.approval_refused',
    );
    assert.equal(twice.actor, 'operator:appr');
    assert.equal(twice.details.reason, 'already_approved');
    assert.deepEqual((await w.tg.changes.get(change.id)).approvers, ['operator:appr']);
    assert.equal((await w.tg.changes.get(change.id)).status, 'pending');
  });
});
