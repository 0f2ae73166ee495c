/**
 * Reviewers hear of every decision that waits for them, as they hear of pending approvals: a
 * pending security review, a four-eyes change of a gated tool and a grant request reach the same
 * webhook (a real HTTP receiver on 127.0.0.1) once each, with the console link and ids only — no
 * definition text, no operator's free text. A tool that needs neither a review nor approvers
 * notifies nobody (the benign neighbour).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import type { NotificationPayload } from '../../src/operations/notify/index.js';
import { approvePendingReviews } from '../support/reviews.js';
import { validTool, wipeDiskTool } from '../support/tools.js';
import { LOOPBACK_OUTBOUND, type Receiver, webhookReceiver } from '../support/webhook-receiver.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const PUBLIC = 'https://toolgate.example.com';
const SECRET_DESCRIPTION = 'Erase one disk completely; zz-unique-description-marker.';
let tg: Gateway;
let hook: Receiver;
let dir: string;

before(async () => {
  hook = await webhookReceiver();
  dir = mkdtempSync(join(tmpdir(), 'tg-decision-notices-'));
  tg = await openGateway({
    outbound: LOOPBACK_OUTBOUND,
    db: `sqlite:${join(dir, 'toolgate.db')}`,
    notify: { webhookUrls: [hook.url], publicUrl: PUBLIC, backoffMs: 10 },
    detectors: false,
  });
});
after(async () => {
  await tg.close();
  await hook.close();
  rmSync(dir, { recursive: true, force: true });
});

async function delivered(): Promise<NotificationPayload[]> {
  await tg.decisionNotices.check();
  await tg.notifier.settled();
  return hook.bodies.map((b) => JSON.parse(b) as NotificationPayload);
}

test('a plain public read notifies nobody', async () => {
  await tg.config.apply([{ kind: 'Tool', spec: validTool() }], admin);
  assert.deepEqual(await delivered(), []);
});

test('a pending security review, the four-eyes change after it and a grant request each notify once', async () => {
  await tg.config.apply(
    [
      { kind: 'Tool', spec: { ...wipeDiskTool(), description: SECRET_DESCRIPTION } },
      { kind: 'Agent', spec: { id: 'ops-bot', owner: 'qa' } },
    ],
    admin,
  );
  const review = (await delivered()).filter((m) => m.toolgate.type === 'review.pending');
  assert.equal(review.length, 1, JSON.stringify(hook.bodies));
  assert.equal(review[0]?.toolgate.tool_id, 'wipe_disk');
  assert.match(
    String(review[0]?.toolgate.link),
    /^https:\/\/toolgate\.example\.com\/console\/reviews\/rev_/,
  );

  // Reviewed, the irreversible privileged tool waits for two approvers: a change.
  await approvePendingReviews(tg.admin);
  const change = (await delivered()).filter((m) => m.toolgate.type === 'change.pending');
  assert.equal(change.length, 1, JSON.stringify(hook.bodies));
  assert.equal(change[0]?.toolgate.tool_id, 'wipe_disk');
  assert.equal(change[0]?.toolgate.required, 2);
  assert.match(String(change[0]?.toolgate.link), /\/console\/changes\/chg_/);

  await tg.config.apply(
    [{ kind: 'Grant', spec: { agent: 'ops-bot', capabilities: ['disk:wipe'] } }],
    admin,
  );
  const grant = (await delivered()).filter((m) => m.toolgate.type === 'grant.pending');
  assert.equal(grant.length, 1, JSON.stringify(hook.bodies));
  assert.equal(grant[0]?.toolgate.capability, 'disk:wipe');
  assert.equal(grant[0]?.toolgate.agent_id, 'ops-bot');

  // Once each, and ids only: the definition's own text never reaches the channel.
  const all = await delivered();
  assert.equal(all.length, 3);
  assert.ok(!hook.bodies.join('\n').includes('zz-unique-description-marker'));
  const metrics = (await tg.metrics.render()).body;
  assert.match(
    metrics,
    /toolgate_notifications_total\{kind="grant.pending",outcome="delivered"\} 1/,
  );
});
