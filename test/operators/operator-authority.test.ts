/**
 * The one operator authority (docs/security-model.md, "One operator authority"): every front asks
 * it by action name from one table, and it decides on the account as read for this request. The
 * attack, on one real gateway: an account that loses a role, is limited to another team, or is
 * disabled is refused on its very next request over REST, the CLI and the console, while the
 * benign neighbour (the role it kept, its own team's tool) still works.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  BOOTSTRAP_OPERATOR,
  OPERATOR_ACTIONS,
  OPERATOR_ROLES,
  type Operator,
  type OperatorAction,
} from '../../src/api/index.js';
import { isToolgateError } from '../../src/core/index.js';
import { OperatorAuthority } from '../../src/domain/operators/index.js';
import {
  type ConsoleGateway,
  ensureOperator,
  operator,
  startConsoleGateway,
  TEST_PASSWORD,
} from '../support/browser.js';
import { ensureBuilt, runCli } from '../support/cli.js';

const authority = new OperatorAuthority({ authenticateToken: async () => null });
const olive = operator('olive', ['owner', 'auditor'], ['payments']);

describe('the route → role table', () => {
  test('every action names known roles, and no front holds a list of its own', () => {
    for (const [name, rule] of Object.entries(OPERATOR_ACTIONS)) {
      assert.ok(rule.roles.length > 0, name);
      for (const r of rule.roles) assert.ok(OPERATOR_ROLES.includes(r), `${name}: ${r}`);
    }
  });

  test('a refusal names the roles in each front’s words; the bootstrap token is told why', () => {
    const auditor: Operator = { ...olive, roles: ['auditor'] };
    const refusal = (
      op: Operator,
      action: OperatorAction,
      asking: Parameters<typeof authority.require>[2],
    ) => {
      try {
        authority.require(op, action, asking);
      } catch (err) {
        assert.ok(isToolgateError(err) && err.code === 'FORBIDDEN');
        return { message: err.message, details: err.details };
      }
      assert.fail('not refused');
    };
    assert.deepEqual(
      refusal(auditor, 'administer', { via: 'rest', method: 'POST', route: '/v1/agents' }),
      {
        message: 'POST /v1/agents needs the role admin; operator olive holds auditor',
        details: { roles: ['admin'] },
      },
    );
    assert.match(
      refusal(BOOTSTRAP_OPERATOR, 'approvals.decide', { via: 'cli' }).message,
      /^the bootstrap admin token cannot run this command: it needs the role approver, held only by operator accounts; set TOOLGATE_TOKEN/,
    );
    assert.deepEqual(
      refusal(auditor, 'tools.manage', { via: 'console', what: 'changing a lifecycle' }),
      {
        message: 'changing a lifecycle needs the role admin or owner',
        details: {},
      },
    );
    // The benign neighbour: the role the account holds is enough.
    authority.require(auditor, 'state.read', { via: 'rest', method: 'GET', route: '/v1/agents' });
  });

  test('an owner-only caller reaches its own teams’ tools only; a reader every team’s', () => {
    const owner: Operator = { ...olive, roles: ['owner'] };
    assert.equal(authority.reaches(owner, 'tools.manage', 'payments'), true);
    assert.equal(authority.reaches(owner, 'tools.manage', 'support'), false);
    assert.throws(() => authority.requireTeam(owner, 'tools.manage', 'support'), {
      code: 'FORBIDDEN',
    });
    assert.deepEqual(authority.teamScope(owner, 'tools.read'), ['payments']);
    assert.equal(authority.teamScope(olive, 'tools.read'), null);
    assert.equal(authority.reaches(olive, 'catalog.browse', 'support'), true);
  });

  test('the principal carries the account id and how it was proven, never roles', () => {
    assert.deepEqual(authority.principalOf(BOOTSTRAP_OPERATOR, 'cli'), {
      kind: 'operator',
      operatorId: 'admin-token',
      authenticatedBy: 'bootstrap',
      via: 'cli',
    });
    assert.deepEqual(authority.principalOf(olive, 'console'), {
      kind: 'operator',
      operatorId: 'olive',
      authenticatedBy: 'password+totp',
      via: 'console',
    });
  });
});

describe('the account as it is now, on every front', () => {
  let dir: string;
  let gw: ConsoleGateway;
  let token: string;
  /** Olive's console session as an owner (one sign-in fewer: each needs a fresh TOTP step). */
  let ownerSession = '';
  const setup = operator('test-setup', ['admin']);

  before(async () => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'toolgate-authority-'));
    gw = await startConsoleGateway({ db: `sqlite:${join(dir, 'tg.db')}` });
    await ensureOperator(gw, olive);
    token = (
      await gw.tg.admin.operators.issueToken(setup, {
        operatorId: 'olive',
        name: 'olive-cli',
        expiresInDays: 1,
      })
    ).token;
  });

  after(async () => {
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const rest = async (path: string) => {
    const res = await fetch(`${gw.base}${path}`, { headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, body: (await res.json()) as { code?: string; message?: string } };
  };
  const cli = (args: string[]) => runCli(dir, [...args, '--json'], { TOOLGATE_TOKEN: token });

  async function signIn(): Promise<string> {
    const res = await fetch(`${gw.base}/console/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { origin: gw.base, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        operator: 'olive',
        password: TEST_PASSWORD,
        totp: await gw.code('olive'),
      }),
    });
    assert.equal(res.status, 303, 'olive signs in');
    const cookie = res.headers
      .getSetCookie()
      .map((c) => c.split(';')[0] ?? '')
      .find((c) => c.startsWith('__Host-toolgate_console='));
    assert.ok(cookie);
    return cookie;
  }
  const page = (cookie: string, path: string) =>
    fetch(`${gw.base}/console${path}`, { headers: { cookie }, redirect: 'manual' });

  test('a removed role refuses its actions on the next request; the role kept still works', async () => {
    // Before: olive reads state (auditor) and her team's tools (owner) on every front.
    assert.equal((await rest('/v1/agents')).status, 200);
    assert.equal((await cli(['agents', 'list'])).code, 0);
    const cookie = await signIn();
    assert.equal((await page(cookie, '/agents')).status, 200);

    await gw.tg.admin.operators.update(setup, 'olive', { roles: ['owner'] });

    // REST: the token keeps only what the account still holds.
    const refused = await rest('/v1/agents');
    assert.equal(refused.status, 403);
    assert.equal(refused.body.code, 'FORBIDDEN');
    assert.equal(
      refused.body.message,
      'GET /v1/agents needs the role admin or auditor; operator olive holds owner',
    );
    assert.equal((await rest('/v1/tools')).status, 200);
    // The CLI: the same account, the same table.
    const run = await cli(['agents', 'list']);
    assert.equal(run.code, 3);
    assert.match(run.stdout + run.stderr, /FORBIDDEN/);
    assert.match(
      run.stdout + run.stderr,
      /this command needs the role admin or auditor; operator olive holds owner/,
    );
    assert.equal((await cli(['channels', 'list'])).code, 0);
    // The console: the open session ended with the change; a new one opens the catalog only.
    const stale = await page(cookie, '/agents');
    assert.equal(stale.status, 303);
    assert.equal(stale.headers.get('location'), '/console/login');
    const fresh = await signIn();
    assert.equal((await page(fresh, '/agents')).status, 403);
    assert.equal((await page(fresh, '/catalog')).status, 200);
  });

  test('an owner sees its own team’s tools and not another team’s, on REST and the console', async () => {
    const tools = (await (
      await fetch(`${gw.base}/v1/tools`, { headers: { authorization: `Bearer ${token}` } })
    ).json()) as { tools: { id: string; version: string; owner: string }[] };
    assert.ok(
      tools.tools.every((t) => t.owner === 'payments'),
      JSON.stringify(tools.tools),
    );
    const other = (await gw.tg.admin.catalog.list({})).find((t) => t.owner !== 'payments');
    assert.ok(other, 'the demo catalog has another team’s tool');
    const r = await rest(`/v1/tools/${other.id}/versions/${other.version}`);
    assert.equal(r.status, 404);
    assert.equal(r.body.code, 'TOOL_NOT_FOUND');
    ownerSession = await signIn();
    assert.equal(
      (await page(ownerSession, `/catalog/${encodeURIComponent(other.id)}`)).status,
      404,
    );
    assert.equal((await page(ownerSession, '/catalog')).status, 200);
  });

  test('a disabled account is refused on its next request, whatever it holds', async () => {
    const cookie = ownerSession;
    await gw.tg.admin.operators.update(setup, 'olive', { disabled: true });
    assert.equal((await rest('/v1/tools')).status, 401);
    const run = await cli(['channels', 'list']);
    assert.equal(run.code, 3);
    assert.match(run.stdout + run.stderr, /UNAUTHENTICATED/);
    assert.equal((await page(cookie, '/catalog')).status, 303);
  });
});
