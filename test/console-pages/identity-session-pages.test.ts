/**
 * The console's agents, users and live-session pages on a real gateway (SQLite): what they show,
 * attacker text as text, and an admin's suspend and close taking effect at the gate, recorded as
 * that operator — refused for every other role, with nothing changed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { validTool } from '../support/tools.js';
import { actionAt, CSRF, contextOf, operator, postTargets, render } from './console-harness.js';

const system: Actor = { id: 'test-setup', via: 'library' };
const XSS = 'Helps out. <script>alert(1)</script> <img src=x onerror="alert(2)">';

const admin = operator('root', ['admin']);
const audrey = operator('audrey', ['auditor']);
const carol = operator('carol', ['approver']);
const alice = operator('alice', ['owner'], ['team-a']);

const [backend] = backends();

describe('console agents, users and session pages', () => {
  let tg: Gateway;
  let drop: () => Promise<void>;

  before(async () => {
    if (!backend) throw new Error('no backend');
    const fresh = await backend.fresh();
    drop = fresh.drop;
    tg = await openGateway({
      db: fresh.url,
      detectors: false,
      executor: demoExecutor().register('test.echo', () => ({ status: 'ok' })),
    });
    await tg.config.apply(
      [
        { kind: 'Agent', spec: { id: 'bot', owner: 'qa', description: XSS } },
        { kind: 'User', spec: { id: 'ursula@example.com', permissions: ['billing:read'] } },
        {
          kind: 'Tool',
          spec: validTool({ runtime: { kind: 'inline', handler: 'test.echo' } }),
        },
        { kind: 'Grant', spec: { agent: 'bot', capabilities: ['billing:read'] } },
      ],
      system,
    );
  });
  after(async () => {
    await tg.close();
    await drop();
  });

  test('agents with their grants, users with their permissions, attacker text escaped', async () => {
    const page = await render(tg.admin, audrey, '/agents');
    assert.match(
      page,
      /<td>bot<\/td><td>bot<\/td><td>qa<\/td><td>restricted<\/td><td>yes<\/td><td>billing:read<\/td>/,
    );
    assert.match(page, /<td>bot<\/td><td>billing:read<\/td><td>[^<]+<\/td><td>test-setup<\/td>/);
    assert.ok(
      page.includes(
        'Helps out. &lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=&quot;alert(2)&quot;&gt;',
      ),
    );
    assert.ok(!page.includes('<script') && !page.includes('<img'));
    const users = await render(tg.admin, admin, '/users');
    assert.match(
      users,
      /<td>ursula@example.com<\/td><td>[^<]*<\/td><td>yes<\/td><td>billing:read<\/td>/,
    );
    for (const op of [carol, alice]) {
      await assert.rejects(render(tg.admin, op, '/agents'), /403/);
      await assert.rejects(render(tg.admin, op, '/sessions'), /403/);
    }
  });

  test('live sessions are listed; only an admin gets the suspend and close forms', async () => {
    const s = await tg.sessions.open('bot');
    const asAdmin = await render(tg.admin, admin, '/sessions');
    assert.ok(asAdmin.includes(`<code>${s.id}</code>`));
    assert.ok(postTargets(asAdmin).includes(`/console/sessions/${s.id}/suspend`));
    assert.ok(postTargets(asAdmin).includes(`/console/sessions/${s.id}/close`));
    const asAuditor = await render(tg.admin, audrey, '/sessions');
    assert.ok(asAuditor.includes(`<code>${s.id}</code>`));
    assert.deepEqual(postTargets(asAuditor), []);
    const detail = await render(tg.admin, audrey, '/sessions/:id', { id: s.id });
    assert.match(
      detail,
      /<td>lookup_invoice<\/td><td><a href="\/console\/catalog\/lookup_invoice">lookup_invoice<\/a><\/td><td>1\.0\.0<\/td>/,
    );
  });

  test('suspend: refused for other roles with nothing changed; an admin’s stops the next call and is recorded', async () => {
    const s = await tg.sessions.open('bot');
    const ctx = { agentId: 'bot', sessionId: s.id };
    const suspend = actionAt('/sessions/:id/suspend');
    for (const op of [audrey, carol, alice]) {
      await assert.rejects(
        suspend.handle(contextOf(tg.admin, op), { id: s.id }, { csrf: CSRF }),
        { code: 'FORBIDDEN' },
        op.id,
      );
    }
    assert.equal((await tg.admin.sessions.inspect(s.id)).suspended, false);
    assert.equal((await tg.gate.invoke(ctx, 'lookup_invoice', { invoice: 'A-1' })).kind, 'allow');
    const out = await suspend.handle(
      contextOf(tg.admin, admin),
      { id: s.id },
      { csrf: CSRF, reason: 'odd behaviour' },
    );
    assert.equal(out.redirect, '/sessions');
    assert.equal((await tg.admin.sessions.inspect(s.id)).suspended, true);
    const refused = await tg.gate.invoke(ctx, 'lookup_invoice', { invoice: 'A-1' });
    assert.equal(refused.kind === 'deny' ? refused.code : refused.kind, 'SESSION_SUSPENDED');
    const [event] = await tg.admin.events.list({ subject: `session:${s.id}`, limit: 10 });
    assert.equal(event?.action, 'session.suspended');
    assert.equal(event?.actor, 'operator:root');
    assert.equal(event?.via, 'console');
    assert.equal(
      (JSON.parse(event?.details ?? '{}') as { reason?: string }).reason,
      'odd behaviour',
    );
  });

  test('close: refused for other roles; an admin’s ends the session and it leaves the list', async () => {
    const s = await tg.sessions.open('bot');
    const close = actionAt('/sessions/:id/close');
    await assert.rejects(close.handle(contextOf(tg.admin, audrey), { id: s.id }, { csrf: CSRF }), {
      code: 'FORBIDDEN',
    });
    assert.equal((await tg.admin.sessions.inspect(s.id)).status, 'open');
    await close.handle(contextOf(tg.admin, admin), { id: s.id }, { csrf: CSRF });
    assert.equal((await tg.admin.sessions.inspect(s.id)).status, 'closed');
    assert.ok(!(await render(tg.admin, admin, '/sessions')).includes(s.id));
    await assert.rejects(
      tg.gate.invoke({ agentId: 'bot', sessionId: s.id }, 'lookup_invoice', { invoice: 'A-1' }),
      { code: 'SESSION_NOT_FOUND' },
    );
    const [event] = await tg.admin.events.list({ subject: `session:${s.id}`, limit: 10 });
    assert.equal(event?.action, 'session.closed');
    assert.equal(event?.actor, 'operator:root');
    // Closing it again is "not found": there is no open session to close.
    await assert.rejects(close.handle(contextOf(tg.admin, admin), { id: s.id }, { csrf: CSRF }), {
      code: 'SESSION_NOT_FOUND',
    });
  });

  test('the live list pages by cursor', async () => {
    const page = await tg.admin.sessions.live({ limit: 1 });
    assert.equal(page.items.length, 1);
    assert.ok(page.next_cursor);
    const next = await tg.admin.sessions.live({ cursor: page.next_cursor, limit: 1 });
    assert.notEqual(next.items[0]?.id, page.items[0]?.id);
  });
});
