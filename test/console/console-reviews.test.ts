/**
 * The security-review queue in a real browser, on real operator accounts: a restricted tool
 * registered over REST (with an operator's personal token) is a draft waiting in the inbox; its
 * registrant opening the review in the console is refused and nothing changes; another approver
 * reads the stored definition and its hash, approves with a note, and the tool goes live, the
 * review recorded as that operator.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import {
  type ConsoleGateway,
  ensureOperator,
  launchChromium,
  operator,
  signedInContext,
  startConsoleGateway,
  watchForScript,
} from '../support/browser.js';

let browser: Browser;
let gw: ConsoleGateway;
const rita = operator('rita', ['admin', 'approver']);
const alice = operator('alice', ['approver']);

before(async () => {
  [browser, gw] = await Promise.all([launchChromium(), startConsoleGateway()]);
});

after(async () => {
  await browser?.close();
  await gw?.close();
});

/** Registers a restricted copy of send_email over REST as Rita (a personal token); its review. */
async function registerAsRita(id: string): Promise<{ reviewId: string; hash: string }> {
  const base = (await gw.tg.catalog.get('send_email', '1.0.0')).definition as unknown as Record<
    string,
    unknown
  >;
  const token = (
    await gw.tg.admin.operators.issueToken(operator('root', ['admin']), {
      name: `registration of ${id}`,
      expiresInDays: 1,
      operatorId: 'rita',
    })
  ).token;
  const res = await fetch(`${gw.base}/v1/tools`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...base, id, name: id, description: 'Sends one e-mail to a partner.' }),
  });
  const body = (await res.json()) as {
    tool: { lifecycle: string; definition_hash: string };
    review?: { id: string };
  };
  assert.equal(res.status, 201, JSON.stringify(body));
  assert.equal(body.tool.lifecycle, 'draft');
  return { reviewId: body.review?.id ?? '', hash: body.tool.definition_hash };
}

test('a restricted tool registered over REST waits in the inbox; its registrant may not review it; another approver approves it and it goes live', async () => {
  const { context: ritaContext, page: ritaPage } = await signedInContext(browser, gw, rita);
  const { reviewId, hash } = await registerAsRita('notify_partner');
  assert.match(reviewId, /^rev_/);

  try {
    // The registrant is an approver too, and still may not review their own registration.
    await ritaPage.goto(`${gw.base}/console/reviews/${reviewId}`);
    await ritaPage.locator('#review-notes').fill('Looks fine to me.');
    await ritaPage.locator('#review-totp').fill(await gw.code(rita.id));
    await ritaPage.locator('#review-approve').click();
    await ritaPage.waitForURL(`**/console/reviews/${reviewId}`);
    assert.match(
      (await ritaPage.locator('.flash').textContent()) ?? '',
      /Refused: .*registered this definition/,
    );
    assert.equal((await gw.tg.admin.reviews.get(reviewId)).status, 'pending', 'nothing changed');
    assert.equal((await gw.tg.catalog.get('notify_partner', '1.0.0')).lifecycle, 'draft');
  } finally {
    await ritaContext.close();
  }

  const { context, page } = await signedInContext(browser, gw, alice);
  const script = watchForScript(page);
  try {
    await page.goto(`${gw.base}/console/inbox`);
    const row = page.locator(`#inbox tr[data-id="${reviewId}"]`);
    assert.equal(await row.count(), 1, 'the pending review is in the inbox');
    const text = (await row.textContent()) ?? '';
    assert.match(text, /review/);
    assert.match(text, /notify_partner@1\.0\.0/);
    assert.match(text, /operator:rita/);

    await row.locator('a').click();
    await page.waitForURL(`**/console/reviews/${reviewId}`);
    assert.equal(await page.locator('#review-hash').textContent(), hash);
    assert.equal(await page.locator('#review-registrant').textContent(), 'operator:rita');
    assert.equal(await page.locator('#review-tier').textContent(), 'restricted');
    assert.ok(((await page.locator('#review-reasons').textContent()) ?? '').length > 0);
    const shown = JSON.parse((await page.locator('#review-definition').textContent()) ?? '');
    assert.equal(shown.id, 'notify_partner', 'the stored definition, as text');
    assert.equal(shown.description, 'Sends one e-mail to a partner.');

    await page.locator('#review-notes').fill('Recipient and egress checked.');
    // Approving makes a restricted tool callable: the form asks for the reviewer's own code, and
    // a forged approval without one (the browser would not send it) changes nothing.
    assert.equal(await page.locator('#review-totp').getAttribute('required'), '');
    const csrf = await page.locator('#review-approve-form input[name=_csrf]').inputValue();
    const bare = await page.request.post(`${gw.base}/console/reviews/${reviewId}/approve`, {
      form: { _csrf: csrf, definition_hash: hash, notes: 'no code' },
      headers: { origin: gw.base },
      maxRedirects: 0,
    });
    assert.equal(bare.status(), 303);
    assert.equal((await gw.tg.admin.reviews.get(reviewId)).status, 'pending', 'nothing changed');
    await page.locator('#review-totp').fill(await gw.code(alice.id));
    await page.locator('#review-approve').click();
    await page.waitForURL(`**/console/reviews/${reviewId}`);
    assert.match((await page.locator('.flash').textContent()) ?? '', /Review approved/);
    const review = await gw.tg.admin.reviews.get(reviewId);
    assert.equal(review.status, 'approved');
    assert.equal(review.reviewer, 'operator:alice', 'recorded as the session’s operator');
    assert.equal(review.notes, 'Recipient and egress checked.');
    assert.equal((await gw.tg.catalog.get('notify_partner', '1.0.0')).lifecycle, 'active');

    await page.goto(`${gw.base}/console/inbox`);
    assert.equal(await page.locator(`#inbox tr[data-id="${reviewId}"]`).count(), 0);
    assert.deepEqual(script.events, []);
  } finally {
    await context.close();
  }
});

test('a reject needs a note and keeps the draft; a decision naming another hash is refused', async () => {
  await ensureOperator(gw, rita);
  const { reviewId } = await registerAsRita('notify_vendor');
  const { context, page } = await signedInContext(browser, gw, operator('bert', ['approver']));
  try {
    await page.goto(`${gw.base}/console/reviews/${reviewId}`);
    assert.equal(await page.locator('#review-reason').getAttribute('required'), '');
    // A forged approval naming a definition the reviewer was not shown changes nothing.
    const csrf = await page.locator('#review-approve-form input[name=_csrf]').inputValue();
    const forged = await page.request.post(`${gw.base}/console/reviews/${reviewId}/approve`, {
      form: { _csrf: csrf, definition_hash: `sha256:${'0'.repeat(64)}`, notes: 'fine' },
      headers: { origin: gw.base },
      maxRedirects: 0,
    });
    assert.equal(forged.status(), 303);
    assert.equal((await gw.tg.admin.reviews.get(reviewId)).status, 'pending', 'nothing changed');

    await page.goto(`${gw.base}/console/reviews/${reviewId}`);
    await page
      .locator('#review-reason')
      .fill('Sends to any address; needs a recipient allow-list.');
    await page.locator('#review-reject').click();
    await page.waitForURL(`**/console/reviews/${reviewId}`);
    assert.match((await page.locator('.flash').textContent()) ?? '', /Review rejected/);
    const review = await gw.tg.admin.reviews.get(reviewId);
    assert.equal(review.status, 'rejected');
    assert.equal(review.reviewer, 'operator:bert');
    assert.notEqual((await gw.tg.catalog.get('notify_vendor', '1.0.0')).lifecycle, 'active');
    await page.goto(`${gw.base}/console/inbox`);
    assert.equal(await page.locator(`#inbox tr[data-id="${reviewId}"]`).count(), 0);
  } finally {
    await context.close();
  }
});
