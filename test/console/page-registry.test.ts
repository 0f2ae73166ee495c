/**
 * The shell serves whatever pages and actions the registry lists, guarded the same way as its
 * own: a live session, one of the page's roles, and for an action also the same origin and the
 * session's CSRF token, all before the action runs; the navigation shows what the roles allow.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { isToolgateError } from '../../src/core/index.js';
import { BOOTSTRAP_OPERATOR, type Operator } from '../../src/domain/operators/index.js';
import {
  type ConsoleAction,
  type ConsolePage,
  html,
  SESSION_COOKIE,
} from '../../src/edge/console/index.js';
import { type ConsoleGateway, operator, startConsoleGateway } from '../support/browser.js';

let gw: ConsoleGateway;
const pokes: { operator: string; id: string | undefined; note: string | undefined }[] = [];

const auditPage: ConsolePage = {
  path: '/audit-probe',
  title: 'Audit probe',
  roles: ['auditor'],
  nav: 'Audit',
  async render(ctx, _params, query) {
    return html`<p id="probe">for ${ctx.operator.id}: ${query.q ?? ''}</p>`;
  },
};
const ownerPage: ConsolePage = {
  path: '/my-tools',
  title: 'My tools',
  roles: ['owner'],
  nav: 'My tools',
  async render(ctx) {
    return html`<p id="teams">${ctx.operator.teams.join(',')}</p>`;
  },
};
const poke: ConsoleAction = {
  path: '/things/:id/poke',
  roles: ['admin'],
  async handle(ctx, params, form) {
    pokes.push({ operator: ctx.operator.id, id: params.id, note: form.note });
    return { redirect: '/audit-probe', flash: 'poked' };
  },
};

before(async () => {
  gw = await startConsoleGateway({ console: { pages: [auditPage, ownerPage], actions: [poke] } });
});
after(async () => {
  await gw?.close();
});

/** A session of `op`'s account (created first: a session acts on the account as it is stored). */
async function cookieFor(op: Operator): Promise<string> {
  try {
    await gw.tg.admin.operators.create(BOOTSTRAP_OPERATOR, {
      id: op.id,
      name: op.name,
      roles: op.roles,
      teams: op.teams,
    });
  } catch (err) {
    if (!isToolgateError(err) || err.code !== 'OPERATOR_EXISTS') throw err;
  }
  return `${SESSION_COOKIE}=${(await gw.tg.admin.consoleSessions.create(op)).secret}`;
}

async function get(path: string, cookie: string): Promise<Response> {
  return fetch(`${gw.base}/console${path}`, { headers: { cookie }, redirect: 'manual' });
}

function csrfOf(body: string): string {
  return /name="_csrf" value="([^"]+)"/.exec(body)?.[1] ?? '';
}

test('a registered page opens for its roles only, its values escaped, in the nav of those who may', async () => {
  const carol = await cookieFor(operator('carol', ['auditor']));
  const res = await get('/audit-probe?q=%3Cb%3Ex', carol);
  assert.equal(res.status, 200);
  const body = await res.text();
  assert.match(body, /<p id="probe">for carol: &lt;b&gt;x<\/p>/);
  assert.match(body, /href="\/console\/audit-probe"/);
  assert.doesNotMatch(body, /href="\/console\/my-tools"/);
  const alice = await cookieFor(operator('alice', ['approver']));
  const refused = await get('/audit-probe', alice);
  assert.equal(refused.status, 403);
  assert.doesNotMatch(await refused.text(), /id="probe"/);
  assert.equal((await get('/audit-probe', '')).status, 303, 'no session: to the login');
});

test('an owner starts at their first page instead of the inbox', async () => {
  const olga = await cookieFor(operator('olga', ['owner'], ['support-team']));
  const res = await get('/inbox', olga);
  assert.equal(res.status, 303);
  assert.equal(res.headers.get('location'), '/console/my-tools');
  assert.match(await (await get('/my-tools', olga)).text(), /<p id="teams">support-team<\/p>/);
});

test('a registered action runs only with session, origin, token and role; then as that operator', async () => {
  const admin = await cookieFor(operator('adam', ['admin', 'auditor']));
  const token = csrfOf(await (await get('/audit-probe', admin)).text());
  assert.ok(token);
  const post = (cookie: string, form: Record<string, string>, origin = gw.base) =>
    fetch(`${gw.base}/console/things/t1/poke`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form),
    });
  assert.equal((await post('', { _csrf: token, note: 'x' })).status, 401);
  assert.equal((await post(admin, { note: 'x' })).status, 403);
  assert.equal((await post(admin, { _csrf: token, note: 'x' }, 'http://127.0.0.1:9')).status, 403);
  const alice = await cookieFor(operator('alice', ['approver']));
  const aliceToken = csrfOf(await (await get('/inbox', alice)).text());
  assert.equal((await post(alice, { _csrf: aliceToken, note: 'x' })).status, 403, 'wrong role');
  assert.deepEqual(pokes, [], 'nothing ran');

  const ok = await post(admin, { _csrf: token, note: 'hello', operator: 'someone-else' });
  assert.equal(ok.status, 303);
  assert.equal(ok.headers.get('location'), '/console/audit-probe');
  assert.deepEqual(pokes, [{ operator: 'adam', id: 't1', note: 'hello' }]);
});
