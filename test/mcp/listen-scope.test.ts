/**
 * A 2026-07-28 `subscriptions/listen` stream hears of its own principal's permitted set only
 * (attack round 8, F11): a grant change of one agent notifies that agent's stream, and not another
 * agent's, whose set never moved, as a 2025 session is notified only when its own set changes.
 * The benign neighbour: the changed agent hears exactly one notification per change.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { approvePendingReviews } from '../support/reviews.js';
import { inlineTool } from '../support/tools.js';
import { openWorld, postListen, type World } from '../support/world.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const CHANGED = /notifications\/tools\/list_changed/g;

let world: World;
let supportKey: string;
let opsKey: string;

/** An open listen stream, its text read as it comes. */
async function listen(token: string) {
  const res = await postListen(world.base, token);
  assert.equal(res.status, 200);
  assert.ok(res.body);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  const stream = { text: '', done: false };
  void (async () => {
    for (;;) {
      const chunk = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (chunk.done) break;
      stream.text += decoder.decode(chunk.value);
    }
    stream.done = true;
  })();
  const deadline = Date.now() + 10_000;
  while (!/acknowledged/.test(stream.text) && Date.now() < deadline) await pause(20);
  assert.match(stream.text, /acknowledged/);
  return {
    heard: () => (stream.text.match(CHANGED) ?? []).length,
    close: () => reader.cancel().catch(() => undefined),
  };
}

function pause(ms: number) {
  return new Promise((r) => setTimeout(r, ms));
}

async function until(check: () => boolean, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await pause(25);
  return check();
}

before(async () => {
  world = await openWorld({ demo: true, actor: admin, rest: { adminToken: null } });
  await world.tg.config.apply(
    [
      {
        kind: 'Tool',
        spec: inlineTool('listen_probe', { required_capabilities: ['listen:probe'] }),
      },
    ],
    admin,
  );
  // Restricted tools are drafts until a security review: these suites start from live ones.
  await approvePendingReviews(world.tg.admin);
  supportKey = (await world.tg.keys.issue('support-bot', admin)).apiKey;
  opsKey = (await world.tg.keys.issue('ops-bot', admin)).apiKey;
});

after(async () => {
  await world?.close();
});

test('a grant change of one agent notifies that agent’s listen stream only, once per change', async () => {
  const support = await listen(supportKey);
  const ops = await listen(opsKey);
  try {
    await world.tg.config.apply(
      [{ kind: 'Grant', spec: { agent: 'support-bot', capabilities: ['listen:probe'] } }],
      admin,
    );
    assert.ok(await until(() => support.heard() >= 1), 'support-bot hears its set moved');
    // Several revision checks later: nothing more for support-bot, nothing at all for ops-bot.
    await pause(1_500);
    assert.equal(support.heard(), 1, 'exactly one notification for one change');
    assert.equal(ops.heard(), 0, 'ops-bot’s set did not move');

    await world.tg.admin.agents.revoke('support-bot', ['listen:probe'], admin);
    assert.ok(await until(() => support.heard() >= 2), 'support-bot hears the grant removed');
    await pause(1_500);
    assert.equal(support.heard(), 2);
    assert.equal(ops.heard(), 0);
  } finally {
    await support.close();
    await ops.close();
  }
});

test('a grant no tool needs moves no set: no stream hears anything', async () => {
  const support = await listen(supportKey);
  const ops = await listen(opsKey);
  try {
    await world.tg.config.apply(
      [{ kind: 'Grant', spec: { agent: 'ops-bot', capabilities: ['nothing:needs-this'] } }],
      admin,
    );
    await pause(1_500);
    assert.equal(support.heard(), 0);
    assert.equal(ops.heard(), 0);
    // The benign neighbour: a tool registered for what ops-bot holds reaches ops-bot alone.
    await world.tg.config.apply(
      [
        {
          kind: 'Tool',
          spec: inlineTool('ops_listen_fresh', { required_capabilities: ['nothing:needs-this'] }),
        },
      ],
      admin,
    );
    await approvePendingReviews(world.tg.admin);
    assert.ok(await until(() => ops.heard() >= 1), 'ops-bot hears its set moved');
    await pause(1_000);
    assert.equal(ops.heard(), 1);
    assert.equal(support.heard(), 0);
  } finally {
    await support.close();
    await ops.close();
  }
});
