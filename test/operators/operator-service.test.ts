/**
 * Operator accounts on every backend: Argon2id hashes and their format (an earlier scrypt hash
 * re-hashed at the next sign-in), weak passwords and reserved
 * ids refused, one indistinguishable error for every failed local login and a bounded attempt
 * rate, single sign-on upserts, personal tokens (issue, check, expiry, revocation, scope ∩ current
 * roles), disabled accounts refused everywhere, and each change audited as the operator who made
 * it. The second factor is a real TOTP check over secrets this file holds (the production one
 * lives with the approvals desk).
 */
import assert from 'node:assert/strict';
import { randomBytes, scryptSync } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { ToolgateError } from '../../src/core/index.js';
import { generateTotpSecret, totpAt, verifyTotp } from '../../src/domain/decisions/index.js';
import {
  BOOTSTRAP_OPERATOR,
  hashPassword,
  needsRehash,
  type Operator,
  oidcOperatorId,
  type SecondFactorCheck,
  verifyPassword,
} from '../../src/domain/operators/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';

const START = Math.floor(Date.now() / 30_000) * 30_000;
const FAST_ARGON2 = { memoryKiB: 64, passes: 1, parallelism: 1 };
const PASSWORD = 'correct horse battery staple';
/** Bob, an approver, as one of his personal tokens shows him. */
const BOB_BY_TOKEN: Operator = {
  id: 'bob',
  name: 'bob',
  roles: ['approver'],
  teams: [],
  authenticatedBy: 'personal-token',
};

/** A real TOTP second factor over in-memory secrets; each step is accepted once. */
class TestSecondFactor implements SecondFactorCheck {
  readonly secrets = new Map<string, string>();
  readonly #last = new Map<string, number>();
  constructor(private readonly clock: () => Date) {}
  async enrolled(id: string): Promise<boolean> {
    return this.secrets.has(id);
  }
  async verify(id: string, code: string): Promise<void> {
    const secret = this.secrets.get(id);
    if (!secret) throw new ToolgateError('UNAUTHENTICATED', 'none enrolled', {});
    const check = verifyTotp(secret, code, this.clock(), this.#last.get(id));
    if (!check.ok) throw new ToolgateError('UNAUTHENTICATED', check.reason, {});
    this.#last.set(id, check.step);
  }
}

function refusedLogin(err: unknown): boolean {
  assert.ok(err instanceof ToolgateError);
  assert.equal(err.code, 'UNAUTHENTICATED');
  assert.equal(err.message, 'wrong operator, password or code');
  assert.deepEqual(err.details, {});
  return true;
}

/** A hash as versions before Argon2id stored it (scrypt, its parameters beside it). */
function scryptHash(password: string, N = 2 ** 10): string {
  const salt = randomBytes(16);
  const key = scryptSync(password.normalize('NFC'), salt, 32, { N, r: 8, p: 1 });
  return `scrypt$N=${N},r=8,p=1$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

test("Argon2id hashes at OWASP's cost carry their parameters and a per-hash salt, and verify only the password", async () => {
  const a = await hashPassword(PASSWORD);
  const b = await hashPassword(PASSWORD);
  assert.match(a, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
  assert.notEqual(a, b, 'a fresh salt each time');
  assert.equal(await verifyPassword(PASSWORD, a), true);
  assert.equal(await verifyPassword(`${PASSWORD}!`, a), false);
  assert.equal(needsRehash(a), false);
  // A hash made with other parameters verifies with its own, and wants a new one at the default.
  const cheap = await hashPassword(PASSWORD, FAST_ARGON2);
  assert.match(cheap, /^\$argon2id\$v=19\$m=64,t=1,p=1\$/);
  assert.equal(await verifyPassword(PASSWORD, cheap), true);
  assert.equal(needsRehash(cheap), true);
  assert.equal(needsRehash(cheap, FAST_ARGON2), false);
  // An earlier version's scrypt hash still verifies, and wants an Argon2id one.
  const legacy = scryptHash(PASSWORD);
  assert.equal(await verifyPassword(PASSWORD, legacy), true);
  assert.equal(await verifyPassword(`${PASSWORD}!`, legacy), false);
  assert.equal(needsRehash(legacy, FAST_ARGON2), true);
  // Malformed or absent hashes never verify (nor want a new one); absurd parameters are not run.
  assert.equal(await verifyPassword(PASSWORD, null), false);
  assert.equal(await verifyPassword(PASSWORD, 'plain'), false);
  assert.equal(needsRehash('plain'), false);
  assert.equal(await verifyPassword(PASSWORD, a.replace('m=19456', 'm=4194304')), false);
  assert.equal(await verifyPassword(PASSWORD, a.replace('t=2', 't=99')), false);
  assert.equal(await verifyPassword(PASSWORD, a.replace('v=19', 'v=16')), false);
  assert.equal(await verifyPassword(PASSWORD, legacy.replace('N=1024', 'N=1073741824')), false);
});

for (const backend of backends()) {
  describe(`operator accounts (${backend.name})`, () => {
    let nowMs = START;
    const clock = () => new Date(nowMs);
    const secondFactor = new TestSecondFactor(clock);
    let tg: Gateway;
    let drop: () => Promise<void>;
    let admin: Operator;
    /** The same database, for reading and planting the rows the service keeps. */
    let raw: Store;

    const code = (id: string) => {
      // Each login uses the next step: a code is accepted once.
      nowMs += 30_000;
      return totpAt(secondFactor.secrets.get(id) ?? generateTotpSecret(), clock());
    };
    /** Past any login backoff: the tests of other refusals must not hit the rate limit. */
    const later = () => {
      nowMs += 10 * 60_000;
    };

    before(async () => {
      const fresh = await backend.fresh();
      drop = fresh.drop;
      raw = await openStore(fresh.url);
      tg = await openGateway({
        db: fresh.url,
        clock,
        operators: { secondFactor, passwordHash: FAST_ARGON2 },
      });
      await tg.operators.create(BOOTSTRAP_OPERATOR, {
        id: 'root',
        name: 'Root Admin',
        roles: ['admin'],
        password: PASSWORD,
      });
      secondFactor.secrets.set('root', generateTotpSecret());
      admin = await tg.operators.loginLocal('root', PASSWORD, code('root'));
    });
    after(async () => {
      await tg.close();
      await raw.close();
      await drop();
    });

    test('a scrypt hash of an earlier version signs in and is then stored as Argon2id; a wrong password or code re-hashes nothing', async () => {
      await tg.operators.create(admin, { id: 'olde', roles: ['auditor'], password: PASSWORD });
      secondFactor.secrets.set('olde', generateTotpSecret());
      const legacy = scryptHash(PASSWORD);
      const hashOf = async () =>
        (
          await raw.db
            .selectFrom('operators')
            .select('password_hash')
            .where('id', '=', 'olde')
            .executeTakeFirstOrThrow()
        ).password_hash;
      await raw.db
        .updateTable('operators')
        .set({ password_hash: legacy })
        .where('id', '=', 'olde')
        .execute();
      later();
      await assert.rejects(
        tg.operators.loginLocal('olde', `${PASSWORD}x`, code('olde')),
        refusedLogin,
      );
      assert.equal(await hashOf(), legacy, 'a wrong password re-hashes nothing');
      later();
      await assert.rejects(tg.operators.loginLocal('olde', PASSWORD, '000000'), refusedLogin);
      assert.equal(await hashOf(), legacy, 'nor does a wrong second factor');
      later();
      const signedIn = await tg.operators.loginLocal('olde', PASSWORD, code('olde'));
      assert.equal(signedIn.id, 'olde');
      const now = await hashOf();
      assert.match(now ?? '', /^\$argon2id\$v=19\$m=64,t=1,p=1\$/);
      // The new hash signs in, and stays as it is.
      later();
      await tg.operators.loginLocal('olde', PASSWORD, code('olde'));
      assert.equal(await hashOf(), now);
    });

    test('the bootstrap token creates the first admin, recorded as admin-token', async () => {
      const view = await tg.operators.get('root');
      assert.equal(view.kind, 'local');
      assert.deepEqual(view.roles, ['admin']);
      assert.equal(view.created_by, 'admin-token');
      assert.equal(view.has_password, true);
      assert.equal(JSON.stringify(view).includes('scrypt'), false, 'never the hash');
      const events = await tg.events.list({ subject: 'operator:root', limit: 10 });
      const created = events.find((e) => e.action === 'operator.created');
      assert.equal(created?.actor, 'admin-token');
      assert.deepEqual(admin.roles, ['admin']);
      assert.equal(admin.authenticatedBy, 'password+totp');
    });

    test('only an admin creates operators; reserved ids, unknown roles and short passwords are refused', async () => {
      const auditor: Operator = { ...admin, id: 'aud', roles: ['auditor'] };
      await assert.rejects(
        tg.operators.create(auditor, { id: 'mallory', roles: ['admin'] }),
        (e: ToolgateError) => e.code === 'FORBIDDEN' && /not an admin/.test(e.message),
      );
      for (const id of [
        'admin-token',
        'bootstrap',
        'system',
        'oidc.abcdefghijklmnop',
        'a:b',
        'A',
        'x',
        '9lives',
      ]) {
        await assert.rejects(
          tg.operators.create(admin, { id, roles: ['auditor'] }),
          (e: ToolgateError) => e.code === 'INPUT_INVALID',
          id,
        );
      }
      await assert.rejects(
        tg.operators.create(admin, { id: 'bob', roles: [] }),
        (e: ToolgateError) => e.code === 'INPUT_INVALID',
      );
      await assert.rejects(
        tg.operators.create(admin, { id: 'bob', roles: ['superuser' as 'admin'] }),
        (e: ToolgateError) => e.code === 'INPUT_INVALID',
      );
      await assert.rejects(
        tg.operators.create(admin, { id: 'bob', roles: ['auditor'], password: 'short pw 1' }),
        (e: ToolgateError) => e.code === 'INPUT_INVALID' && /at least 12/.test(e.message),
      );
      await assert.rejects(
        tg.operators.get('mallory'),
        (e: ToolgateError) => e.code === 'OPERATOR_NOT_FOUND',
      );
      await assert.rejects(
        tg.operators.get('bob'),
        (e: ToolgateError) => e.code === 'OPERATOR_NOT_FOUND',
      );
      // The benign neighbour, recorded as the admin who did it.
      const bob = await tg.operators.create(admin, {
        id: 'bob',
        roles: ['approver', 'auditor'],
        teams: ['payments', 'payments'],
        password: PASSWORD,
      });
      assert.deepEqual(bob.teams, ['payments']);
      assert.equal(bob.created_by, 'operator:root');
      await assert.rejects(
        tg.operators.create(admin, { id: 'bob', roles: ['auditor'] }),
        (e: ToolgateError) => e.code === 'OPERATOR_EXISTS',
      );
    });

    test('every failed local login gets the same error, and the reason is audited', async () => {
      await tg.operators.create(admin, { id: 'carol', roles: ['approver'], password: PASSWORD });
      await tg.operators.create(admin, { id: 'dora', roles: ['approver'], password: PASSWORD });
      await tg.operators.create(admin, { id: 'nopass', roles: ['approver'] });
      secondFactor.secrets.set('carol', generateTotpSecret());
      secondFactor.secrets.set('nopass', generateTotpSecret());
      // dora has no second factor enrolled.
      later();
      await assert.rejects(tg.operators.loginLocal('nobody', PASSWORD, '123456'), refusedLogin);
      await assert.rejects(
        tg.operators.loginLocal('carol', `${PASSWORD}x`, code('carol')),
        refusedLogin,
      );
      later();
      await assert.rejects(tg.operators.loginLocal('carol', PASSWORD, '000000'), refusedLogin);
      later();
      await assert.rejects(tg.operators.loginLocal('dora', PASSWORD, '123456'), refusedLogin);
      await assert.rejects(tg.operators.loginLocal('nopass', '', code('nopass')), refusedLogin);
      later();
      await tg.operators.update(admin, 'carol', { disabled: true });
      await assert.rejects(tg.operators.loginLocal('carol', PASSWORD, code('carol')), refusedLogin);
      const reasons = async (id: string) =>
        (await tg.events.list({ subject: `operator:${id}`, limit: 50 }))
          .filter((e) => e.action === 'operator.login_failed')
          .map((e) => (JSON.parse(String(e.details)) as { reason: string }).reason);
      assert.deepEqual(await reasons('carol'), ['password', 'second_factor', 'disabled']);
      assert.deepEqual(await reasons('dora'), ['no_second_factor']);
      // Enabled again, the right password and code let carol in.
      await tg.operators.update(admin, 'carol', { disabled: false });
      later();
      const carol = await tg.operators.loginLocal('carol', PASSWORD, code('carol'));
      assert.deepEqual(carol.roles, ['approver']);
    });

    test('local logins are rate-limited per account: an attempt inside the backoff is refused even with the right password', async () => {
      await tg.operators.create(admin, { id: 'erin', roles: ['auditor'], password: PASSWORD });
      secondFactor.secrets.set('erin', generateTotpSecret());
      later();
      await assert.rejects(
        tg.operators.loginLocal('erin', 'wrong password!!', '123456'),
        refusedLogin,
      );
      // 1 s backoff after one failure: the right credentials now are refused the same way.
      nowMs += 500;
      const right = totpAt(secondFactor.secrets.get('erin') ?? '', clock());
      await assert.rejects(tg.operators.loginLocal('erin', PASSWORD, right), refusedLogin);
      const events = await tg.events.list({ subject: 'operator:erin', limit: 20 });
      assert.ok(events.some((e) => e.action === 'operator.login_refused'));
      // Ten failures in a row lock the account for 15 minutes.
      for (let i = 0; i < 10; i++) {
        nowMs += 6 * 60_000;
        await assert.rejects(
          tg.operators.loginLocal('erin', 'wrong password!!', '123456'),
          refusedLogin,
        );
      }
      nowMs += 6 * 60_000;
      await assert.rejects(tg.operators.loginLocal('erin', PASSWORD, code('erin')), refusedLogin);
      nowMs += 16 * 60_000;
      const erin = await tg.operators.loginLocal('erin', PASSWORD, code('erin'));
      assert.equal(erin.id, 'erin');
    });

    test('an admin cannot disable or demote their own account; setPassword needs an admin or a fresh login', async () => {
      await assert.rejects(
        tg.operators.update(admin, 'root', { disabled: true }),
        (e: ToolgateError) => e.code === 'FORBIDDEN',
      );
      await assert.rejects(
        tg.operators.update(admin, 'root', { roles: ['auditor'] }),
        (e: ToolgateError) => e.code === 'FORBIDDEN',
      );
      const viaToken = BOB_BY_TOKEN;
      await assert.rejects(
        tg.operators.setPassword(viaToken, 'bob', 'a new long password'),
        (e: ToolgateError) => e.code === 'FORBIDDEN',
      );
      await tg.operators.setPassword(admin, 'bob', 'a new long password');
      const events = await tg.events.list({ subject: 'operator:bob', limit: 20 });
      assert.equal(
        events.find((e) => e.action === 'operator.password_set')?.actor,
        'operator:root',
      );
    });

    test('personal tokens: shown once, hashed, scope ∩ current roles, expiry, revocation, disabled account', async () => {
      await tg.operators.create(admin, {
        id: 'frank',
        roles: ['approver', 'auditor'],
        password: PASSWORD,
      });
      secondFactor.secrets.set('frank', generateTotpSecret());
      later();
      const frank = await tg.operators.loginLocal('frank', PASSWORD, code('frank'));
      const issued = await tg.operators.issueToken(frank, { name: 'laptop', expiresInDays: 30 });
      assert.match(issued.token, /^tgo_[A-Za-z0-9_-]{43}$/);
      assert.deepEqual(issued.roles, ['approver', 'auditor']);
      const listed = await tg.operators.tokens('frank');
      assert.equal(listed.length, 1);
      assert.equal(JSON.stringify(listed).includes(issued.token), false);
      assert.equal(JSON.stringify(listed).includes(issued.token.slice(4)), false);

      const viaToken = await tg.operators.authenticateToken(issued.token);
      assert.deepEqual(viaToken, {
        id: 'frank',
        name: 'frank',
        roles: ['approver', 'auditor'],
        teams: [],
        authenticatedBy: 'personal-token',
      });
      // A token cannot mint tokens; a role beyond the account's is refused.
      assert.ok(viaToken);
      await assert.rejects(
        tg.operators.issueToken(viaToken, { name: 'more', expiresInDays: 1 }),
        (e: ToolgateError) => e.code === 'FORBIDDEN',
      );
      await assert.rejects(
        tg.operators.issueToken(frank, { name: 'x', roles: ['admin'], expiresInDays: 1 }),
        (e: ToolgateError) => e.code === 'FORBIDDEN',
      );
      for (const days of [0, 367, 1.5]) {
        await assert.rejects(
          tg.operators.issueToken(frank, { name: 'x', expiresInDays: days }),
          (e: ToolgateError) => e.code === 'INPUT_INVALID',
        );
      }
      // Scope ∩ current roles: an auditor-only token, then the account loses auditor.
      const narrow = await tg.operators.issueToken(frank, {
        name: 'ro',
        roles: ['auditor'],
        expiresInDays: 1,
      });
      assert.deepEqual((await tg.operators.authenticateToken(narrow.token))?.roles, ['auditor']);
      await tg.operators.update(admin, 'frank', { roles: ['approver'] });
      assert.equal(await tg.operators.authenticateToken(narrow.token), null);
      assert.deepEqual((await tg.operators.authenticateToken(issued.token))?.roles, ['approver']);
      // Disabled account: every token refused; enabled again: accepted again.
      await tg.operators.update(admin, 'frank', { disabled: true });
      assert.equal(await tg.operators.authenticateToken(issued.token), null);
      await assert.rejects(
        tg.operators.issueToken(admin, { name: 'x', expiresInDays: 1, operatorId: 'frank' }),
        (e: ToolgateError) => e.code === 'FORBIDDEN',
      );
      await tg.operators.update(admin, 'frank', {
        disabled: false,
        roles: ['approver', 'auditor'],
      });
      assert.ok(await tg.operators.authenticateToken(issued.token));
      // Revocation by someone else: as unknown as a made-up id; by the owner: immediate.
      const bob = BOB_BY_TOKEN;
      await assert.rejects(
        tg.operators.revokeToken(bob, issued.id),
        (e: ToolgateError) => e.code === 'NOT_FOUND',
      );
      const revoked = await tg.operators.revokeToken(viaToken, issued.id);
      assert.ok(revoked.revoked_at);
      assert.equal(await tg.operators.authenticateToken(issued.token), null);
      // Expiry.
      const short = await tg.operators.issueToken(admin, {
        name: 'short',
        expiresInDays: 1,
        operatorId: 'frank',
      });
      assert.ok(await tg.operators.authenticateToken(short.token));
      nowMs += 24 * 60 * 60_000;
      assert.equal(await tg.operators.authenticateToken(short.token), null);
      // Malformed and unknown tokens.
      assert.equal(await tg.operators.authenticateToken('tgo_short'), null);
      assert.equal(await tg.operators.authenticateToken(`tgo_${'A'.repeat(43)}`), null);
      const events = await tg.events.list({ subject: 'operator:frank', limit: 50 });
      const issuedBy = events
        .filter((e) => e.action === 'operator.token_issued')
        .map((e) => e.actor);
      assert.deepEqual(issuedBy, ['operator:frank', 'operator:frank', 'operator:root']);
      // The bootstrap token has no account to hold a token.
      await assert.rejects(
        tg.operators.issueToken(BOOTSTRAP_OPERATOR, { name: 'x', expiresInDays: 1 }),
        (e: ToolgateError) => e.code === 'FORBIDDEN',
      );
    });

    test('single sign-on: the account is upserted under a hash id, roles follow the provider, disabled stays disabled', async () => {
      const identity = {
        issuer: 'https://idp.example.test',
        subject: 'user-42',
        name: 'Grace',
        email: 'grace@example.test',
        roles: ['approver' as const],
        teams: ['payments'],
      };
      const id = oidcOperatorId(identity.issuer, identity.subject);
      assert.match(id, /^oidc\.[a-z2-7]{16}$/);
      assert.notEqual(id, oidcOperatorId(identity.issuer, 'user-43'));
      const first = await tg.operators.fromOidc(identity);
      assert.equal(first.id, id);
      assert.equal(first.authenticatedBy, 'oidc');
      const again = await tg.operators.fromOidc({ ...identity, roles: ['auditor'], teams: [] });
      assert.deepEqual(again.roles, ['auditor']);
      assert.deepEqual((await tg.operators.get(id)).roles, ['auditor']);
      assert.equal((await tg.operators.get(id)).kind, 'oidc');
      // A single sign-on account has no password to log in with locally.
      await assert.rejects(tg.operators.loginLocal(id, PASSWORD, '123456'), refusedLogin);
      await tg.operators.update(admin, id, { disabled: true });
      await assert.rejects(tg.operators.fromOidc(identity), refusedLogin);
      assert.equal((await tg.operators.get(id)).disabled, true);
      await assert.rejects(
        tg.operators.fromOidc({ ...identity, subject: 'nobody', roles: [] }),
        (e: ToolgateError) => e.code === 'FORBIDDEN',
      );
    });

    test('accounts are listed a page at a time', async () => {
      const first = await tg.operators.page({ limit: 2 });
      assert.equal(first.items.length, 2);
      assert.ok(first.next_cursor);
      const rest = await tg.operators.page({ cursor: first.next_cursor, limit: 500 });
      const ids = [...first.items, ...rest.items].map((o) => o.id);
      assert.deepEqual(ids, [...ids].sort());
      assert.ok(ids.includes('root') && ids.includes('bob'));
    });
  });
}
