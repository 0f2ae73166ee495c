/**
 * Every refusal of the operator authority is in the audit log, whichever front asked (INVARIANTS
 * 14; attack round 8, F8): a console form or page and a CLI command refused for an auditor, an
 * owner or an approver record `operator.forbidden` naming the front, the action, the route or
 * command and the operator, as REST does. The benign neighbours: what the role allows, and a page
 * that merely hides a form, record no refusal. And (F12) an owner posting another team's tool's
 * lifecycle form gets the 404 page a missing tool gets, and nothing changes.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  type ConsoleGateway,
  ensureOperator,
  httpSignIn,
  operator,
  startConsoleGateway,
} from '../support/browser.js';
import { ensureBuilt, runCli } from '../support/cli.js';

const aud = operator('aud', ['auditor']);
const own = operator('own', ['owner'], ['support-team']);
const appr = operator('appr', ['approver']);

interface Refusal {
  readonly action: string;
  /** `actor via front`. */
  readonly actor: string;
  readonly details: Record<string, unknown>;
}

describe('refusals of the operator authority are audited on every front', () => {
  let dir: string;
  let gw: ConsoleGateway;
  const cookies = new Map<string, string>();
  const csrf = new Map<string, string>();
  const tokens = new Map<string, string>();
  const setup = operator('test-setup', ['admin']);

  async function signIn(id: string): Promise<void> {
    cookies.set(id, await httpSignIn(gw, id));
    // Every page's logout form carries the session's CSRF token.
    const page = await (await get(id, '/catalog')).text();
    const token = /name="_csrf" value="([^"]+)"/.exec(page)?.[1];
    assert.ok(token, `${id} has a CSRF token`);
    csrf.set(id, token);
  }

  const get = (id: string, path: string) =>
    fetch(`${gw.base}/console${path}`, {
      headers: { cookie: cookies.get(id) ?? '' },
      redirect: 'manual',
    });

  const post = (id: string, path: string, fields: Record<string, string>) =>
    fetch(`${gw.base}/console${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        cookie: cookies.get(id) ?? '',
        origin: gw.base,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ _csrf: csrf.get(id) ?? '', ...fields }),
    });

  async function refusals(id: string): Promise<Refusal[]> {
    const events = await gw.tg.admin.events.list({ subject: `operator:${id}`, limit: 500 });
    return events
      .filter((e) => e.action === 'operator.forbidden')
      .map((e) => ({
        action: e.action,
        actor: `${e.actor} via ${e.via}`,
        details: (typeof e.details === 'string' ? JSON.parse(e.details) : e.details) as Record<
          string,
          unknown
        >,
      }));
  }

  before(async () => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'toolgate-refusal-audit-'));
    gw = await startConsoleGateway({ db: `sqlite:${join(dir, 'tg.db')}` });
    for (const op of [aud, own, appr]) {
      await ensureOperator(gw, op);
      await signIn(op.id);
      const issued = await gw.tg.admin.operators.issueToken(setup, {
        operatorId: op.id,
        name: `${op.id}-cli`,
        expiresInDays: 1,
      });
      tokens.set(op.id, issued.token);
    }
  });

  after(async () => {
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a console form refused for an auditor, an owner or an approver is audited with its route and action', async () => {
    const tool = (await gw.tg.admin.catalog.list({})).find((t) => t.owner === 'support-team');
    assert.ok(tool);
    const forms: [string, string, string, Record<string, string>][] = [
      ['aud', '/sessions/ses_x/close', 'administer', { reason: 'x' }],
      ['own', '/sessions/ses_x/suspend', 'administer', { reason: 'x' }],
      ['appr', '/sessions/ses_x/close', 'administer', { reason: 'x' }],
      ['aud', '/approvals/apr_x/approve', 'approvals.decide', { totp: '000000' }],
      ['own', '/quarantine/q/1.0.0/release', 'quarantine.release', { reason: 'x' }],
      [
        'appr',
        `/catalog/${tool.id}/${tool.version}/lifecycle`,
        'tools.manage',
        { to: 'deprecated', reason: 'x' },
      ],
    ];
    for (const [id, path, action, fields] of forms) {
      const before = (await refusals(id)).length;
      const res = await post(id, path, fields);
      assert.equal(res.status, 403, `${id} ${path}`);
      const after = await refusals(id);
      assert.equal(after.length, before + 1, `${id} ${path}: one refusal recorded`);
      // Recorded as the operator who was refused, through the front they asked by.
      assert.equal(after.at(-1)?.actor, `operator:${id} via console`);
      const route = `/console${path.replace(/^\/(sessions|approvals)\/[^/]+/, '/$1/:id').replace(/^\/(quarantine|catalog)\/[^/]+\/[^/]+/, '/$1/:id/:version')}`;
      const held = id === 'aud' ? ['auditor'] : id === 'own' ? ['owner'] : ['approver'];
      assert.deepEqual(after.at(-1)?.details, {
        edge: 'console',
        operator: id,
        action,
        method: 'POST',
        route,
        roles: (
          {
            administer: ['admin'],
            'approvals.decide': ['approver'],
            'quarantine.release': ['admin', 'approver'],
            'tools.manage': ['admin', 'owner'],
          } as Record<string, string[]>
        )[action],
        held,
      });
    }
    assert.equal((await gw.tg.admin.catalog.get(tool.id, tool.version)).lifecycle, 'active');
  });

  test('a console page refused is audited; a page the role opens, even one that hides a form, is not', async () => {
    for (const id of ['own', 'appr']) {
      const before = (await refusals(id)).length;
      const res = await get(id, '/audit');
      assert.equal(res.status, 403, id);
      const after = await refusals(id);
      assert.equal(after.length, before + 1, id);
      assert.deepEqual(after.at(-1)?.details, {
        edge: 'console',
        operator: id,
        action: 'state.read',
        method: 'GET',
        route: '/console/audit',
        roles: ['admin', 'auditor'],
        held: id === 'own' ? ['owner'] : ['approver'],
      });
    }
    // The benign neighbours: the auditor reads the audit, the catalog and a tool's page (which
    // shows them no lifecycle form); the owner is sent from the inbox to their first page.
    const before = (await refusals('aud')).length;
    const tool = (await gw.tg.admin.catalog.list({}))[0];
    assert.ok(tool);
    assert.equal((await get('aud', '/audit')).status, 200);
    assert.equal((await get('aud', '/catalog')).status, 200);
    const detail = await get('aud', `/catalog/${encodeURIComponent(tool.id)}`);
    assert.equal(detail.status, 200);
    assert.ok(!(await detail.text()).includes('/lifecycle"'), 'no lifecycle form for an auditor');
    assert.equal((await refusals('aud')).length, before);
    const ownBefore = (await refusals('own')).length;
    assert.equal((await get('own', '/inbox')).status, 303);
    assert.equal((await refusals('own')).length, ownBefore);
  });

  test('a CLI command refused is audited with the command; a command the role allows is not', async () => {
    const cli = (id: string, args: string[]) =>
      runCli(dir, [...args, '--json'], { TOOLGATE_TOKEN: tokens.get(id) ?? '' });
    const refused: [string, string[], string, string][] = [
      ['aud', ['agents', 'create', 'zz-agent'], 'agents create', 'administer'],
      ['own', ['agents', 'list'], 'agents list', 'state.read'],
      ['appr', ['tools', 'retire', 'x@1.0.0'], 'tools retire', 'administer'],
      [
        'aud',
        ['operators', 'token', 'list', '--for', 'appr'],
        'operators token list',
        'administer',
      ],
    ];
    for (const [id, args, command, action] of refused) {
      const before = (await refusals(id)).length;
      const run = await cli(id, args);
      assert.equal(run.code, 3, `${id} ${command}`);
      assert.match(run.stdout + run.stderr, /FORBIDDEN/);
      const after = await refusals(id);
      assert.equal(after.length, before + 1, `${id} ${command}: one refusal recorded`);
      const last = after.at(-1)?.details;
      assert.equal(last?.edge, 'cli');
      assert.equal(after.at(-1)?.actor, `operator:${id} via cli`);
      assert.equal(last?.operator, id);
      assert.equal(last?.command, command);
      assert.equal(last?.action, action);
    }
    // The benign neighbours: what each role allows runs and records no refusal.
    for (const [id, args] of [
      ['aud', ['agents', 'list']],
      ['own', ['channels', 'list']],
      ['aud', ['operators', 'token', 'list']],
    ] as const) {
      const before = (await refusals(id)).length;
      const run = await cli(id, [...args]);
      assert.equal(run.code, 0, `${id} ${args.join(' ')}: ${run.stdout}${run.stderr}`);
      assert.equal((await refusals(id)).length, before);
    }
  });

  test('a REST refusal records the same event, naming its front', async () => {
    const res = await fetch(`${gw.base}/v1/agents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.get('aud')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'zz' }),
    });
    assert.equal(res.status, 403);
    const last = (await refusals('aud')).at(-1)?.details;
    assert.equal(last?.edge, 'rest');
    assert.equal(last?.action, 'administer');
    assert.equal(last?.route, '/v1/agents');
    assert.equal(last?.method, 'POST');
  });

  test('an owner posting another team’s lifecycle form gets the 404 page a missing tool gets, and nothing changes', async () => {
    const tools = await gw.tg.admin.catalog.list({});
    const other = tools.find((t) => t.owner !== 'support-team' && t.lifecycle === 'active');
    const mine = tools.find((t) => t.owner === 'support-team' && t.lifecycle === 'active');
    assert.ok(other && mine);
    const theirs = await post('own', `/catalog/${other.id}/${other.version}/lifecycle`, {
      to: 'deprecated',
      reason: 'x',
    });
    const missing = await post('own', `/catalog/no_such_tool/${other.version}/lifecycle`, {
      to: 'deprecated',
      reason: 'x',
    });
    for (const [res, id] of [
      [theirs, other.id],
      [missing, 'no_such_tool'],
    ] as const) {
      assert.equal(res.status, 404, id);
      assert.match(res.headers.get('content-type') ?? '', /text\/html/);
      assert.ok((await res.text()).includes(`no tool ${id}@${other.version}`), id);
    }
    assert.equal((await gw.tg.admin.catalog.get(other.id, other.version)).lifecycle, 'active');
    // The benign neighbour: the owner's own tool changes, and the browser goes back to its page.
    const ok = await post('own', `/catalog/${mine.id}/${mine.version}/lifecycle`, {
      to: 'deprecated',
      reason: 'replaced',
    });
    assert.equal(ok.status, 303);
    assert.equal(ok.headers.get('location'), `/console/catalog/${mine.id}`);
    assert.equal((await gw.tg.admin.catalog.get(mine.id, mine.version)).lifecycle, 'deprecated');
  });
});
