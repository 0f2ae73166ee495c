/**
 * A reviewer and the registrant count as two people by the rule of a four-eyes change (attack
 * round 12, N1): an approver the registrant set up (directly or through accounts she set up), or,
 * for what the bootstrap token registered, one the genesis admin or the token set up, does not
 * review the definition unless another confirmed decider, who is not the registrant (nor, for the
 * token, the genesis admin), has since confirmed it. The attack: gen, the genesis admin, creates
 * carol, enrols her factor and issues her token (gen holds both), and carol reviews gen's own
 * registration and the token's. Each refusal is 403 and one `tool.review_refused`, and the review
 * stays pending. Benign neighbours: an approver set up by someone else reviews, and carol reviews
 * once dan, a confirmed admin who is not gen, confirms her.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { totpAt } from '../../src/domain/decisions/index.js';
import { BOOTSTRAP_OPERATOR } from '../../src/domain/operators/index.js';
import { eventsSince, lastSeq } from '../support/events.js';
import { registerRestricted } from '../support/reviews.js';
import { openWorld, personalToken, type World } from '../support/world.js';

describe('a reviewer the registrant set up is not a second person until someone else confirms it', () => {
  let w: World;
  let now = new Date('2026-03-01T12:00:00Z');
  const tokens: Record<string, string> = {};
  const secrets: Record<string, string> = {};
  const hashes: Record<string, string> = {};
  const code = (id: string) => {
    now = new Date(now.getTime() + 30_000);
    return totpAt(secrets[id] ?? '', now);
  };
  const mark = () => lastSeq(w.tg.admin);
  const since = (seq: number) => eventsSince(w.tg.admin, seq);
  const status = async (tool: string) => (await w.tg.admin.reviews.of(tool, '1.0.0'))[0]?.status;
  const review = (tool: string, account: string, decision = 'approved') =>
    w.send(
      'POST',
      `/v1/tools/${tool}/versions/1.0.0/review`,
      { definition_hash: hashes[tool], decision, notes: 'checked', totp: code(account) },
      tokens[account],
    );
  /** `as` (an admin's token) sets up approver `id`: creates it, enrols its factor, issues its token. */
  const setUp = async (as: string, id: string, roles: string[]) => {
    const auth = tokens[as];
    const created = await w.send('POST', '/v1/operators', { id, roles }, auth);
    assert.equal(created.status, 201, JSON.stringify(created.body));
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
  const confirm = async (by: string, id: string) => {
    const r = await w.send('POST', `/v1/operators/${id}/confirm`, { totp: code(by) }, tokens[by]);
    assert.equal(r.status, 200, JSON.stringify(r.body));
  };
  const register = async (tool: string, auth?: string) => {
    hashes[tool] = await registerRestricted(w.send, tool, auth);
    assert.equal(await status(tool), 'pending');
  };

  before(async () => {
    w = await openWorld({
      rest: true,
      options: { masterKey: MasterKey.generate(), clock: () => now },
    });
    // The fresh install: the token creates gen, the genesis admin, and arms her.
    await w.tg.admin.operators.create(BOOTSTRAP_OPERATOR, {
      id: 'gen',
      roles: ['admin', 'approver'],
    });
    tokens.gen = await personalToken(w.tg.admin, 'gen');
    secrets.gen = (await w.tg.admin.secondFactor.enroll(BOOTSTRAP_OPERATOR, 'gen')).secret;
    // The token registers one tool before the set-up ends; gen registers another as herself.
    await register('tokens-tool');
    await register('gens-tool', tokens.gen);
    // gen sets up carol (gen holds carol's secret and token; carol is unconfirmed) and bea, whom
    // she confirms at the genesis (the only confirmed decider), and dan, whom bea confirms.
    await setUp('gen', 'carol', ['approver']);
    await setUp('gen', 'bea', ['approver']);
    await confirm('gen', 'bea');
    await setUp('gen', 'dan', ['admin', 'approver']);
    await confirm('bea', 'dan');
    // dan registers a tool of his own.
    await register('dans-tool', tokens.dan);
  });
  after(async () => {
    await w?.close();
  });

  for (const [who, account, tool, reason] of [
    [
      'carol (gen set her up, unconfirmed) approving gen’s',
      'carol',
      'gens-tool',
      'set_up_by_registrant',
    ],
    [
      'carol (gen set her up, unconfirmed) rejecting gen’s',
      'carol',
      'gens-tool',
      'set_up_by_registrant',
    ],
    [
      'carol approving the token’s (gen is its holder)',
      'carol',
      'tokens-tool',
      'token_registration',
    ],
    ['bea (confirmed by gen herself) approving gen’s', 'bea', 'gens-tool', 'set_up_by_registrant'],
    [
      'bea (confirmed by the genesis admin) approving the token’s',
      'bea',
      'tokens-tool',
      'token_registration',
    ],
  ] as const) {
    test(`the attack: ${who} registration: 403, one tool.review_refused, still pending`, async () => {
      const seq = await mark();
      const decision = who.includes('rejecting') ? 'rejected' : 'approved';
      const r = await review(tool, account, decision);
      assert.equal(r.status, 403, JSON.stringify(r.body));
      assert.equal(r.body.code, 'FORBIDDEN');
      assert.match(String(r.body.message), /set up|confirm/);
      assert.match(String(r.body.message), new RegExp(`confirm ${account}`));
      assert.deepEqual(
        (await since(seq)).map((e) => [e.action, e.actor, e.subject, e.details.reason]),
        [['tool.review_refused', `operator:${account}`, `tool:${tool}@1.0.0`, reason]],
      );
      assert.equal(await status(tool), 'pending');
    });
  }

  test('benign: carol, set up by gen, approves dan’s registration (dan did not set her up)', async () => {
    const r = await review('dans-tool', 'carol');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(await status('dans-tool'), 'approved');
  });

  test('benign: dan, set up by gen but confirmed by bea, approves gen’s registration', async () => {
    const r = await review('gens-tool', 'dan');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(await status('gens-tool'), 'approved');
  });

  test('benign: once dan (not gen, not the genesis admin) confirms carol, she approves the token’s', async () => {
    await confirm('dan', 'carol');
    const r = await review('tokens-tool', 'carol');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(await status('tokens-tool'), 'approved');
  });
});
