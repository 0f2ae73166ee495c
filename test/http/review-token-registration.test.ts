/**
 * What the bootstrap token registered is the genesis admin's own registration (attack round 11,
 * F3): the token and the genesis admin are one secret, one person, so she does not review it, nor
 * does an account the token set up (it counts as hers, as in a confirmation). Each refusal is 403
 * and one `tool.review_refused` with reason `token_registration`, through both places the
 * reviewer rules are checked (an approval, before the second factor; a rejection, in the review's
 * transaction), and the review stays pending. The benign neighbour: another approver, confirmed
 * by a confirmed approver who is not the genesis admin, approves it with her code.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { totpAt } from '../../src/domain/decisions/index.js';
import { BOOTSTRAP_OPERATOR } from '../../src/domain/operators/index.js';
import { eventsSince, lastSeq } from '../support/events.js';
import { registerRestricted } from '../support/reviews.js';
import { openWorld, personalToken, type World } from '../support/world.js';

const PATH = '/v1/tools/ledger/versions/1.0.0/review';
const SUBJECT = 'tool:ledger@1.0.0';

describe('the genesis admin and the accounts the token set up do not review what the bootstrap token registered', () => {
  let w: World;
  let now = new Date('2026-03-01T12:00:00Z');
  const tokens: Record<string, string> = {};
  const secrets: Record<string, string> = {};
  let hash = '';
  const code = (id: string) => {
    now = new Date(now.getTime() + 30_000);
    return totpAt(secrets[id] ?? '', now);
  };
  const mark = () => lastSeq(w.tg.admin);
  const since = (seq: number) => eventsSince(w.tg.admin, seq);
  const pending = async () =>
    assert.equal((await w.tg.admin.reviews.of('ledger', '1.0.0'))[0]?.status, 'pending');

  before(async () => {
    w = await openWorld({
      rest: true,
      options: { masterKey: MasterKey.generate(), clock: () => now },
    });
    // The fresh install, by the token: tok (an approver) and gen, the genesis admin.
    for (const [id, roles] of [
      ['tok', ['approver']],
      ['gen', ['admin', 'approver']],
    ] as const) {
      await w.tg.admin.operators.create(BOOTSTRAP_OPERATOR, { id, roles: [...roles] });
      tokens[id] = await personalToken(w.tg.admin, id);
      secrets[id] = (await w.tg.admin.secondFactor.enroll(BOOTSTRAP_OPERATOR, id)).secret;
    }
    // ann: an approver gen set up, confirmed by cid, a confirmed approver who is not gen (gen
    // confirmed cid at the genesis): a person apart from the token's holder (attack round 12, N1).
    const gen = { authorization: tokens.gen };
    const setUp = async (id: string, auth: string) => {
      const created = await w.send('POST', '/v1/operators', { id, roles: ['approver'] }, auth);
      assert.equal(created.status, 201);
      const enrolled = await w.send('POST', `/v1/operators/${id}/second-factor`, {}, auth);
      secrets[id] = String(enrolled.body.secret);
      const issued = await w.send(
        'POST',
        `/v1/operators/${id}/tokens`,
        { name: 'l', expires_in_days: 9 },
        auth,
      );
      tokens[id] = String(issued.body.token);
    };
    for (const [id, by] of [
      ['cid', 'gen'],
      ['ann', 'cid'],
    ] as const) {
      await setUp(id, gen.authorization ?? '');
      const confirmed = await w.send(
        'POST',
        `/v1/operators/${id}/confirm`,
        { totp: code(by) },
        tokens[by],
      );
      assert.equal(confirmed.status, 200, JSON.stringify(confirmed.body));
    }
    // The bootstrap token registers team-y's restricted tool: a draft, registrant admin-token.
    hash = await registerRestricted(w.send, 'ledger');
    await pending();
  });
  after(async () => {
    await w?.close();
  });

  for (const [who, account, decision, words] of [
    ['the genesis admin approving', 'gen', 'approved', /genesis admin/],
    ['the genesis admin rejecting', 'gen', 'rejected', /genesis admin/],
    [
      'an approver the token set up approving',
      'tok',
      'approved',
      /set up by the bootstrap admin token/,
    ],
    [
      'an approver the token set up rejecting',
      'tok',
      'rejected',
      /set up by the bootstrap admin token/,
    ],
  ] as const) {
    test(`the attack: ${who} what the token registered: 403, one tool.review_refused, still pending`, async () => {
      const seq = await mark();
      const r = await w.send(
        'POST',
        PATH,
        { definition_hash: hash, decision, notes: 'mine', totp: code(account) },
        tokens[account],
      );
      assert.equal(r.status, 403, JSON.stringify(r.body));
      assert.match(String(r.body.message), words);
      assert.deepEqual(
        (await since(seq)).map((e) => [e.action, e.actor, e.subject, e.details.reason]),
        [['tool.review_refused', `operator:${account}`, SUBJECT, 'token_registration']],
      );
      await pending();
    });
  }

  test('benign: another confirmed approver, not the token’s, approves it with her code', async () => {
    const r = await w.send(
      'POST',
      PATH,
      { definition_hash: hash, decision: 'approved', notes: 'checked', totp: code('ann') },
      tokens.ann,
    );
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const [review] = await w.tg.admin.reviews.of('ledger', '1.0.0');
    assert.equal(review?.status, 'approved');
    assert.equal(review?.reviewer, 'operator:ann');
  });
});
