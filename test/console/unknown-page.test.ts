/**
 * A console page that does not exist is the console's own 404, never the REST front's bearer
 * challenge (attack round 10, F8): `/console/changes` answers 404 whoever asks, beside the benign
 * neighbours — a known page without a session goes to the login, an unknown REST path still asks
 * for a bearer token.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openWorld, type World } from '../support/world.js';

let world: World;

before(async () => {
  world = await openWorld({ rest: true });
});
after(() => world.close());

test('an unknown console page is a console 404, not a bearer challenge', async () => {
  for (const path of ['/console/changes', '/console/approvals', '/console/reviews']) {
    const res = await fetch(`${world.base}${path}`, { redirect: 'manual' });
    assert.equal(res.status, 404, path);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    assert.doesNotMatch(await res.text(), /Authorization|UNAUTHENTICATED/);
  }
  const inbox = await fetch(`${world.base}/console/inbox`, { redirect: 'manual' });
  assert.equal(inbox.status, 303);
  assert.equal(inbox.headers.get('location'), '/console/login');
  const rest = await fetch(`${world.base}/v1/no-such-route`);
  assert.equal(rest.status, 401);
});
