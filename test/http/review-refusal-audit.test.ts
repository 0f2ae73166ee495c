/**
 * Every security-review refusal is in the audit log, whichever edge made it (INVARIANTS 14;
 * follow-up of attack round 9, F5): the bootstrap token, an admin without `approver`, the
 * registrant of the definition and an approver of the owning team are each refused with 403 and
 * one `tool.review_refused` (actor who tried, subject the tool version, the edge, the reason, the
 * message), written outside the refused transaction, so the review stays pending and nothing else
 * is written. Both places the reviewer rules are checked are covered: an approval (checked before
 * the reviewer's second factor is asked for) and a rejection (checked in the review's
 * transaction). The benign neighbour: an approver outside the owning team approves with her code,
 * recorded as `tool.reviewed` and no refusal.
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

describe('security-review refusals are audited: the bootstrap token, a non-approver, the registrant, the owning team', () => {
  let w: World;
  let now = new Date('2026-03-01T12:00:00Z');
  const tokens: Record<string, string> = {};
  let aliceSecret = '';
  let hash = '';

  const mark = () => lastSeq(w.tg.admin);
  const since = (seq: number) => eventsSince(w.tg.admin, seq);
  const pending = async () => {
    assert.equal((await w.tg.admin.reviews.of('ledger', '1.0.0'))[0]?.status, 'pending');
    assert.equal((await w.tg.catalog.get('ledger', '1.0.0')).lifecycle, 'draft');
  };

  before(async () => {
    w = await openWorld({
      rest: true,
      options: { masterKey: MasterKey.generate(), clock: () => now },
    });
    for (const [id, roles, teams] of [
      ['alice', ['approver'], []],
      ['adm', ['admin'], []],
      ['reg', ['admin', 'approver'], []],
      ['yan', ['approver'], ['team-y']],
    ] as const) {
      await w.tg.admin.operators.create(BOOTSTRAP_OPERATOR, {
        id,
        roles: [...roles],
        teams: [...teams],
      });
      tokens[id] = await personalToken(w.tg.admin, id);
    }
    aliceSecret = (await w.tg.admin.secondFactor.enroll(BOOTSTRAP_OPERATOR, 'alice')).secret;
    // reg, an admin and approver in no team, registers team-y's restricted tool: a draft.
    hash = await registerRestricted(w.send, 'ledger', tokens.reg);
    await pending();
  });
  after(async () => {
    await w?.close();
  });

  const refused = [
    ['the bootstrap token', null, 'admin-token', 'bootstrap', /bootstrap admin token/],
    ['an admin without approver', 'adm', 'operator:adm', 'not_approver', /approver role/],
    ['the registrant', 'reg', 'operator:reg', 'own_registration', /registered this definition/],
    ['an approver of the owning team', 'yan', 'operator:yan', 'owning_team', /team-y/],
  ] as const;

  for (const decision of ['approved', 'rejected'] as const) {
    for (const [who, account, actor, reason, words] of refused) {
      test(`${who} ${decision === 'approved' ? 'approving' : 'rejecting'}: 403, one tool.review_refused, the review still pending`, async () => {
        const seq = await mark();
        const token = account === null ? w.adminToken : tokens[account];
        const r = await w.send(
          'POST',
          PATH,
          { definition_hash: hash, decision, notes: 'looks fine' },
          token,
        );
        assert.equal(r.status, 403, JSON.stringify(r.body));
        assert.equal(r.body.code, 'FORBIDDEN');
        assert.match(String(r.body.message), words);
        const written = await since(seq);
        assert.deepEqual(
          written.map((e) => [e.action, e.actor, e.via, e.subject]),
          [['tool.review_refused', actor, 'rest', SUBJECT]],
          JSON.stringify(written),
        );
        const [record] = written;
        assert.ok(record);
        assert.equal(record.details.edge, 'rest');
        assert.equal(record.details.reason, reason);
        assert.equal(record.details.decision, decision);
        assert.equal(record.details.message, r.body.message);
        await pending();
      });
    }
  }

  test('a review naming another definition hash: 409, one tool.review_refused, the review still pending', async () => {
    const seq = await mark();
    const stated = `sha256:${'0'.repeat(64)}`;
    const r = await w.send(
      'POST',
      PATH,
      { definition_hash: stated, decision: 'rejected', notes: 'not this one' },
      tokens.alice,
    );
    assert.equal(r.status, 409, JSON.stringify(r.body));
    assert.equal(r.body.code, 'REVIEW_HASH_MISMATCH');
    const written = await since(seq);
    assert.deepEqual(
      written.map((e) => [e.action, e.actor, e.via, e.subject]),
      [['tool.review_refused', 'operator:alice', 'rest', SUBJECT]],
      JSON.stringify(written),
    );
    const details = written[0]?.details ?? {};
    assert.equal(details.reason, 'hash_mismatch');
    assert.equal(details.decision, 'rejected');
    assert.equal(details.stated_hash, stated);
    assert.equal(details.definition_hash, hash);
    await pending();
  });

  test('the benign neighbour: an approver outside the owning team approves with her code; recorded as the review, no refusal', async () => {
    const seq = await mark();
    now = new Date(now.getTime() + 90_000);
    const r = await w.send(
      'POST',
      PATH,
      {
        definition_hash: hash,
        decision: 'approved',
        notes: 'checked',
        totp: totpAt(aliceSecret, now),
      },
      tokens.alice,
    );
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const written = await since(seq);
    const actions = written.map((e) => e.action);
    assert.ok(actions.includes('tool.reviewed'), actions.join());
    assert.ok(!actions.some((a) => a.endsWith('_refused')), actions.join());
    const reviewed = written.find((e) => e.action === 'tool.reviewed');
    assert.equal(reviewed?.actor, 'operator:alice');
    assert.equal(reviewed?.subject, SUBJECT);
    const [review] = await w.tg.admin.reviews.of('ledger', '1.0.0');
    assert.equal(review?.status, 'approved');
    assert.equal(review?.reviewer, 'operator:alice');
  });
});
