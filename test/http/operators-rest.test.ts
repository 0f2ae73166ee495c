/**
 * Operators over REST, as a client sees it: the bootstrap token creates the first admin; personal
 * tokens (tgo_…) authenticate admin routes as their operator; every admin route names the roles
 * that may call it and refuses the rest with FORBIDDEN (the auditor is walked over every mutating
 * route the server registered); owners act only on their teams' tools; events record the token's
 * operator whatever the body says; a disabled account and a disabled bootstrap token are refused;
 * unknown `/.well-known/*` documents are a plain 404. A real server on loopback, real fetch.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { ToolgateError } from '../../src/core/index.js';
import { generateTotpSecret, totpAt, verifyTotp } from '../../src/domain/decisions/index.js';
import type { SecondFactorCheck } from '../../src/domain/operators/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { validTool } from '../support/tools.js';
import { openWorld, type World } from '../support/world.js';

const ADMIN_TOKEN = 'operators-rest-admin-token-0123456789abcdef';
const PASSWORD = 'a long enough passphrase';
const FAST_ARGON2 = { memoryKiB: 64, passes: 1, parallelism: 1 };

/** A real TOTP second factor over secrets this test holds. */
class TestSecondFactor implements SecondFactorCheck {
  readonly secrets = new Map<string, string>();
  readonly #last = new Map<string, number>();
  async enrolled(id: string): Promise<boolean> {
    return this.secrets.has(id);
  }
  async verify(id: string, code: string): Promise<void> {
    const secret = this.secrets.get(id);
    const check = secret ? verifyTotp(secret, code, new Date(), this.#last.get(id)) : null;
    if (!check?.ok) throw new ToolgateError('UNAUTHENTICATED', 'wrong code', {});
    this.#last.set(id, check.step);
  }
}

interface Reply {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field
  body: any;
}

async function call(
  base: string,
  method: string,
  path: string,
  token: string | null,
  body?: unknown,
): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base + path, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text.startsWith('{') ? JSON.parse(text) : text };
}

for (const backend of backends()) {
  describe(`operators over REST (${backend.name})`, () => {
    const secondFactor = new TestSecondFactor();
    let tg: Gateway;
    let app: FastifyInstance;
    let base: string;
    let world: World;
    const tokens: Record<string, string> = {};
    const req = (method: string, path: string, who: string | null, body?: unknown) =>
      call(
        base,
        method,
        path,
        who === null ? null : who === 'bootstrap' ? ADMIN_TOKEN : (tokens[who] ?? who),
        body,
      );

    before(async () => {
      world = await openWorld({
        backend,
        options: { operators: { secondFactor, passwordHash: FAST_ARGON2 } },
        rest: { adminToken: ADMIN_TOKEN },
      });
      ({ tg, base } = world);
      app = world.app as FastifyInstance;
      // The first admin, created with the bootstrap token; the others by that admin.
      const root = await req('POST', '/v1/operators', 'bootstrap', {
        id: 'root',
        roles: ['admin'],
        password: PASSWORD,
      });
      assert.equal(root.status, 201, JSON.stringify(root.body));
      assert.equal(root.body.created_by, 'admin-token');
      const issued = await req('POST', '/v1/operators/root/tokens', 'bootstrap', {
        name: 'setup',
        expires_in_days: 1,
      });
      assert.equal(issued.status, 201);
      tokens.root = issued.body.token;
      const accounts = [
        { id: 'appr', roles: ['approver'] },
        { id: 'aud', roles: ['auditor'] },
        { id: 'own-a', roles: ['owner'], teams: ['team-a'] },
        { id: 'gone', roles: ['admin'] },
      ];
      for (const a of accounts) {
        const made = await req('POST', '/v1/operators', 'root', { ...a, password: PASSWORD });
        assert.equal(made.status, 201, JSON.stringify(made.body));
        assert.equal(made.body.created_by, 'operator:root');
        const t = await req('POST', `/v1/operators/${a.id}/tokens`, 'root', {
          name: 'test',
          expires_in_days: 7,
        });
        assert.equal(t.status, 201, JSON.stringify(t.body));
        tokens[a.id] = t.body.token;
      }
      for (const owner of ['team-a', 'team-b']) {
        const r = await req(
          'POST',
          '/v1/tools',
          'bootstrap',
          validTool({ id: `tool_${owner.replace('-', '_')}`, owner }),
        );
        assert.equal(r.status, 201, JSON.stringify(r.body));
      }
    });
    after(async () => {
      await world.close();
    });

    test('a personal token authenticates as its operator; /v1/operators/me says who', async () => {
      const me = await req('GET', '/v1/operators/me', 'aud');
      assert.equal(me.status, 200);
      assert.deepEqual(me.body, {
        id: 'aud',
        name: 'aud',
        roles: ['auditor'],
        teams: [],
        authenticated_by: 'personal-token',
      });
      const boot = await req('GET', '/v1/operators/me', 'bootstrap');
      assert.equal(boot.body.id, 'admin-token');
      assert.equal(boot.body.authenticated_by, 'bootstrap');
      const none = await req('GET', '/v1/operators/me', `tgo_${'x'.repeat(43)}`);
      assert.equal(none.status, 401);
      assert.equal(none.body.code, 'UNAUTHENTICATED');
    });

    test('the role matrix: readers read, approvers decide, admins administer, each refusal names the roles', async () => {
      const cases: [string, string, string, number][] = [
        ['aud', 'GET', '/v1/tools', 200],
        ['aud', 'GET', '/v1/events', 200],
        ['aud', 'GET', '/v1/approvals', 200],
        ['aud', 'GET', '/v1/operators', 200],
        ['appr', 'GET', '/v1/approvals', 200],
        ['appr', 'GET', '/v1/changes', 200],
        ['appr', 'GET', '/v1/tools', 403],
        ['appr', 'GET', '/v1/events', 403],
        ['own-a', 'GET', '/v1/approvals', 403],
        ['own-a', 'GET', '/v1/operators', 403],
        ['root', 'GET', '/v1/reports', 200],
        ['bootstrap', 'GET', '/v1/events', 200],
      ];
      for (const [who, method, path, status] of cases) {
        const r = await req(method, path, who);
        assert.equal(r.status, status, `${who} ${method} ${path}: ${JSON.stringify(r.body)}`);
      }
      const refused = await req('GET', '/v1/events', 'appr');
      assert.equal(refused.body.code, 'FORBIDDEN');
      assert.deepEqual(refused.body.details, { roles: ['admin', 'auditor'] });
      assert.match(
        refused.body.message,
        /needs the role admin or auditor; operator appr holds approver/,
      );
      // Deciding is an approver's: neither an admin account nor the bootstrap token may.
      for (const who of ['root', 'bootstrap', 'aud']) {
        const r = await req('POST', '/v1/approvals/nope/approve', who, {});
        assert.equal(r.status, 403, who);
        assert.deepEqual(r.body.details, { roles: ['approver'] });
      }
      // The refusal is a security event.
      const events = await tg.events.list({ subject: 'operator:appr', limit: 20 });
      assert.ok(
        events.some(
          (e) => e.action === 'security.operator.forbidden' || e.action === 'operator.forbidden',
        ),
      );
    });

    test('every route’s request and response schemas compile (they are compiled on first use)', () => {
      // Routes this file has called are compiled already; the rest compile now, and none fails.
      const compiled = app.compileSchemas();
      assert.ok(compiled > 50, `compiled ${compiled} schemas`);
      assert.equal(app.compileSchemas(), 0, 'each schema compiles once');
    });

    test('the auditor is refused on every mutating admin route the server registered, and nothing changes', async () => {
      const READ_BY_POST = new Set(['/v1/audit/classified/search']);
      const mutating = app.toolgateRoutes.filter(
        (r) =>
          r.auth === 'admin' &&
          !['GET', 'HEAD', 'OPTIONS'].includes(r.method) &&
          !r.url.startsWith('/docs'),
      );
      assert.ok(mutating.length >= 25, `found ${mutating.length} mutating admin routes`);
      const before = await tg.events.list({ limit: 500 });
      for (const route of mutating) {
        // The auditor's own tokens are theirs to manage (and need their password): not an admin act.
        if (route.url.startsWith('/v1/operators/me')) continue;
        // A search that takes its value in the body (never the URL) is a read an auditor may make.
        if (READ_BY_POST.has(route.url)) {
          assert.ok(route.roles.includes('auditor'), route.url);
          continue;
        }
        const path = route.url.replace(/:([A-Za-z]+)/g, 'x');
        const r = await req(route.method, path, 'aud', {});
        assert.equal(r.status, 403, `${route.method} ${route.url}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.code, 'FORBIDDEN');
        assert.ok(!route.roles.includes('auditor'), route.url);
      }
      const afterwards = await tg.events.list({ limit: 500 });
      const changes = afterwards.filter(
        (e) => !before.some((b) => b.seq === e.seq) && !e.action.includes('forbidden'),
      );
      assert.deepEqual(changes, []);
    });

    test('read-only views are the same on REST as on the CLI: an auditor reads the secrets inventory and destination sets, an owner or approver is refused', async () => {
      // Attack round 8 F7: the CLI let an auditor read these while REST refused; one table now.
      for (const path of ['/v1/secrets', '/v1/destination-sets']) {
        const read = await req('GET', path, 'aud');
        assert.equal(read.status, 200, `${path}: ${JSON.stringify(read.body)}`);
        for (const who of ['appr', 'own-a']) {
          const refused = await req('GET', path, who);
          assert.equal(refused.status, 403, `${who} ${path}`);
          assert.deepEqual(refused.body.details, { roles: ['admin', 'auditor'] });
        }
      }
      const missing = await req('GET', '/v1/destination-sets/none-such', 'aud');
      assert.equal(missing.status, 404);
      assert.equal((await req('GET', '/v1/destination-sets/none-such', 'appr')).status, 403);
      // Writing stays an admin's.
      const write = await req('POST', '/v1/destination-sets', 'aud', {
        name: 'partners',
        kind: 'host',
        description: 'x',
      });
      assert.equal(write.status, 403);
    });

    test('the route registry says what the request hook does: probes, schemas and discovery documents are public', async () => {
      // Attack round 8 F9: the reference listed these as admin routes while anyone could call them.
      for (const url of [
        '/healthz',
        '/readyz',
        '/v1/schemas/tool.json',
        '/v1/schemas/config.json',
      ]) {
        const route = app.toolgateRoutes.find((r) => r.url === url && r.method === 'GET');
        assert.ok(route, url);
        assert.equal(route.auth, 'public', url);
        assert.deepEqual(route.roles, [], url);
        const r = await fetch(`${base}${url}`);
        assert.equal(r.status, 200, url);
      }
      // Its neighbour is not: an admin route still needs a credential.
      assert.equal((await fetch(`${base}/v1/secrets`)).status, 401);
    });

    test("an owner registers and manages their team's tools only, and sees only them", async () => {
      const mine = await req(
        'POST',
        '/v1/tools',
        'own-a',
        validTool({ id: 'tool_a2', owner: 'team-a' }),
      );
      assert.equal(mine.status, 201, JSON.stringify(mine.body));
      const theirs = await req(
        'POST',
        '/v1/tools',
        'own-a',
        validTool({ id: 'tool_b2', owner: 'team-b' }),
      );
      assert.equal(theirs.status, 403);
      assert.equal(theirs.body.code, 'FORBIDDEN');
      // A new version of another team's tool id, stated as team-a's, would take the id over.
      const takeover = await req(
        'POST',
        '/v1/tools',
        'own-a',
        validTool({ id: 'tool_team_b', version: '1.1.0', owner: 'team-a' }),
      );
      assert.equal(takeover.status, 403);
      assert.equal((await tg.catalog.versions('tool_team_b')).length, 1);
      const own = await req('POST', '/v1/tools/tool_team_a/versions/1.0.0/deprecate', 'own-a', {});
      assert.equal(own.status, 200, JSON.stringify(own.body));
      const other = await req(
        'POST',
        '/v1/tools/tool_team_b/versions/1.0.0/deprecate',
        'own-a',
        {},
      );
      // Another team's tool is answered as a tool that does not exist (test/owners/owner-reach.test.ts).
      assert.equal(other.status, 404);
      assert.equal(other.body.code, 'TOOL_NOT_FOUND');
      assert.equal((await tg.catalog.get('tool_team_b', '1.0.0')).lifecycle, 'active');
      assert.equal((await req('GET', '/v1/tools/tool_team_b', 'own-a')).status, 404);
      assert.equal((await req('GET', '/v1/tools/tool_team_a/versions/1.0.0', 'own-a')).status, 200);
      const listed = await req('GET', '/v1/tools', 'own-a');
      assert.deepEqual(
        [...new Set(listed.body.tools.map((t: { owner: string }) => t.owner))],
        ['team-a'],
      );
      // An admin is not limited to teams.
      assert.equal((await req('GET', '/v1/tools/tool_team_b', 'root')).status, 200);
      // Releasing a quarantine is an admin's decision, not an owner's.
      const release = await req('POST', '/v1/tools/tool_a2/versions/1.0.0/release', 'own-a', {
        reason: 'mine',
      });
      assert.equal(release.status, 403);
    });

    test("events record the token's operator, whatever the body states", async () => {
      const r = await req('POST', '/v1/tools', 'own-a', {
        ...validTool({ id: 'tool_a3', owner: 'team-a' }),
        created_by: 'root',
      });
      // A definition with a field it does not know is refused whole; the benign one is recorded as own-a.
      assert.ok(r.status === 422 || r.status === 400, JSON.stringify(r.body));
      const ok = await req(
        'POST',
        '/v1/tools',
        'own-a',
        validTool({ id: 'tool_a3', owner: 'team-a' }),
      );
      assert.equal(ok.status, 201);
      const events = await tg.events.list({ subject: 'tool:tool_a3@1.0.0', limit: 10 });
      const actors = [...new Set(events.map((e) => `${e.actor} via ${e.via}`))];
      assert.deepEqual(actors, ['operator:own-a via rest']);
      const made = await req('POST', '/v1/operators', 'root', {
        id: 'eve',
        roles: ['auditor'],
        created_by: 'bootstrap',
      });
      assert.equal(made.status, 400);
      assert.equal((await req('GET', '/v1/operators/eve', 'root')).status, 404);
    });

    test('a disabled operator is refused everywhere, at once; tokens are revoked by their owner or an admin', async () => {
      assert.equal((await req('GET', '/v1/operators/me', 'gone')).status, 200);
      const off = await req('POST', '/v1/operators/gone/disable', 'root');
      assert.equal(off.status, 200);
      assert.equal(off.body.disabled, true);
      for (const [method, path] of [
        ['GET', '/v1/operators/me'],
        ['GET', '/v1/tools'],
        ['POST', '/v1/operators'],
      ] as const) {
        const r = await req(
          method,
          path,
          'gone',
          method === 'POST' ? { id: 'x2', roles: ['admin'] } : undefined,
        );
        assert.equal(r.status, 401, `${method} ${path}`);
      }
      // An admin cannot disable themself.
      const self = await req('POST', '/v1/operators/root/disable', 'root');
      assert.equal(self.status, 403);
      // Revocation: through /me by the owner; through the admin route by an admin.
      const listed = await req('GET', '/v1/operators/me/tokens', 'aud');
      assert.equal(listed.status, 200);
      assert.equal(listed.body.tokens.length, 1);
      assert.equal(JSON.stringify(listed.body).includes(tokens.aud ?? '?'), false);
      const foreign = await req(
        'DELETE',
        `/v1/operators/me/tokens/${listed.body.tokens[0].id}`,
        'appr',
      );
      assert.equal(foreign.status, 404);
      const revoked = await req(
        'DELETE',
        `/v1/operators/me/tokens/${listed.body.tokens[0].id}`,
        'aud',
      );
      assert.equal(revoked.status, 200);
      assert.equal((await req('GET', '/v1/operators/me', 'aud')).status, 401);
      const again = await req('POST', '/v1/operators/aud/tokens', 'root', {
        name: 'again',
        expires_in_days: 1,
      });
      tokens.aud = again.body.token;
      const byAdmin = await req('DELETE', `/v1/operators/aud/tokens/${again.body.id}`, 'root');
      assert.equal(byAdmin.status, 200);
      assert.equal((await req('GET', '/v1/operators/me', 'aud')).status, 401);
      const events = await tg.events.list({ subject: 'operator:aud', limit: 500 });
      assert.deepEqual(
        events.filter((e) => e.action === 'operator.token_revoked').map((e) => e.actor),
        ['operator:aud', 'operator:root'],
      );
    });

    test('issuing my own token needs my password and second factor; a token alone cannot', async () => {
      secondFactor.secrets.set('appr', generateTotpSecret());
      const spec = { name: 'cli', expires_in_days: 30, roles: ['approver'] };
      const bare = await req('POST', '/v1/operators/me/tokens', 'appr', spec);
      assert.equal(bare.status, 400);
      const wrong = await req('POST', '/v1/operators/me/tokens', 'appr', {
        ...spec,
        password: 'not the password',
        totp: '123456',
      });
      assert.equal(wrong.status, 401);
      assert.equal(wrong.body.message, 'wrong operator, password or code');
      // Past the login backoff of that failure.
      await new Promise((r) => setTimeout(r, 1100));
      const code = totpAt(secondFactor.secrets.get('appr') ?? '', new Date());
      const ok = await req('POST', '/v1/operators/me/tokens', 'appr', {
        ...spec,
        password: PASSWORD,
        totp: code,
      });
      assert.equal(ok.status, 201, JSON.stringify(ok.body));
      assert.match(ok.body.token, /^tgo_[A-Za-z0-9_-]{43}$/);
      const me = await req('GET', '/v1/operators/me', ok.body.token);
      assert.equal(me.body.id, 'appr');
      // Only an admin issues for someone else.
      const forOther = await req('POST', '/v1/operators/root/tokens', 'appr', {
        name: 'x',
        expires_in_days: 1,
      });
      assert.equal(forOther.status, 403);
    });

    test('/.well-known/* answers a plain 404 without asking for credentials', async () => {
      for (const path of [
        '/.well-known/oauth-protected-resource',
        '/.well-known/oauth-protected-resource/mcp',
        '/.well-known/anything',
      ]) {
        const r = await req('GET', path, null);
        assert.equal(r.status, 404, path);
        assert.equal(r.body.code, 'NOT_FOUND');
        assert.doesNotMatch(JSON.stringify(r.body), /admin token|Bearer/);
      }
    });
  });

  describe(`the bootstrap admin token disabled (${backend.name})`, () => {
    let world: World;
    let tg: Gateway;
    let base: string;

    before(async () => {
      world = await openWorld({
        backend,
        options: { operators: { passwordHash: FAST_ARGON2 } },
        rest: { adminToken: null },
      });
      ({ tg, base } = world);
    });
    after(async () => {
      await world.close();
    });

    test('the admin token is refused with a message saying it is disabled; personal tokens still work', async () => {
      const r = await call(base, 'GET', '/v1/tools', ADMIN_TOKEN);
      assert.equal(r.status, 401);
      assert.equal(r.body.code, 'UNAUTHENTICATED');
      assert.match(r.body.message, /bootstrap admin token is disabled/);
      const { BOOTSTRAP_OPERATOR } = await import('../../src/domain/operators/index.js');
      await tg.operators.create(BOOTSTRAP_OPERATOR, { id: 'root', roles: ['admin'] });
      const issued = await tg.operators.issueToken(BOOTSTRAP_OPERATOR, {
        name: 't',
        expiresInDays: 1,
        operatorId: 'root',
      });
      const ok = await call(base, 'GET', '/v1/tools', issued.token);
      assert.equal(ok.status, 200);
    });
  });
}
