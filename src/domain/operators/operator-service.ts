/**
 * @module Operator accounts (local and single sign-on), local login (password, then the second
 * factor), personal tokens and their per-request check. Every change is recorded as the operator
 * who made it; nothing here takes a name a caller states (docs/architecture.md §6).
 */
import type { Kysely, Transaction } from 'kysely';
import {
  type Actor,
  type Clock,
  DAY_MS,
  decodeCursor,
  isPrintableName,
  type Page,
  type PageRequest,
  pageFromRows,
  pageLimit,
  problem,
  systemClock,
  ToolgateError,
} from '../../core/index.js';
import { appendEvent, type Database, isUniqueViolation } from '../../records/store/index.js';
import { checkConfirmation, confirmIn, recordHandOver } from './confirmation.js';
import { endSessionsOf } from './console-sessions.js';
import { LoginGuard, type LoginLimits } from './login-guard.js';
import {
  BOOTSTRAP_ACTOR_ID,
  hasRole,
  isBootstrap,
  type Operator,
  type OperatorRole,
  operatorActor,
  signedInWithPassword,
} from './operator.js';
import {
  applyOperatorIn,
  disableOperatorIn,
  type OperatorApplied,
  type OperatorDocument,
} from './operator-apply.js';
import { OperatorAuthority } from './operator-authority.js';
import { writeAccounts } from './operator-lock.js';
import {
  auditedRefusals,
  forbidden,
  type IssuedToken,
  jsonList,
  loggedIn,
  loginRefused,
  notFound,
  type OidcIdentity,
  type OperatorSpec,
  type OperatorUpdate,
  type OperatorView,
  PersonActedLatch,
  parseDays,
  parseTokenName,
  refuseBootstrapAfterSetup,
  refuseBootstrapOnDecider,
  refuseBootstrapOnSso,
  rehashAfterSignIn,
  requireAdmin,
  rolesOf,
  selectOperator,
  selectTokenAccount,
  TOKEN_VIEW_COLUMNS,
  type TokenSpec,
  type TokenView,
  tokenView,
  toView,
} from './operator-records.js';
import {
  checkLocalId,
  MAX_NAME_LENGTH,
  OPERATOR_ID_PATTERN,
  oidcOperatorId,
  parseName,
  parseRoles,
  parseTeams,
} from './operator-spec.js';
import { changeOperatorIn, checkUpdate, insertOperatorIn } from './operator-writes.js';
import {
  type Argon2Params,
  checkPasswordStrength,
  DEFAULT_ARGON2,
  hashPassword,
  verifyPassword,
} from './password-hash.js';
import { generatePersonalToken, hashToken, isPersonalToken } from './personal-token.js';
import { auditRefusal } from './refusal-audit.js';
import {
  checkSignInFactor,
  type SecondFactorCheck,
  type SignInFactor,
} from './second-factor-port.js';

export interface OperatorServiceOptions {
  readonly clock?: Clock;
  /** The second factor of local logins; without one no local login succeeds. */
  readonly secondFactor?: SecondFactorCheck;
  readonly loginLimits?: Partial<LoginLimits>;
  /** Argon2id cost of new hashes (tests lower it; stored hashes carry their own). */
  readonly passwordHash?: Argon2Params;
}

export class OperatorService {
  readonly #db: Kysely<Database>;
  readonly #clock: Clock;
  readonly #secondFactor: SecondFactorCheck | null;
  readonly #guard: LoginGuard;
  readonly #passwordHash: Argon2Params;
  /** The set-up latch a person's first sign-in or personal-token request closes. */
  readonly #latch = new PersonActedLatch();
  /** The one operator authority (docs/security-model.md); its refusals: `operator.forbidden`. */
  readonly authority: OperatorAuthority;

  constructor(db: Kysely<Database>, options: OperatorServiceOptions = {}) {
    this.#db = db;
    this.#clock = options.clock ?? systemClock;
    this.#secondFactor = options.secondFactor ?? null;
    this.#guard = new LoginGuard(db, this.#clock, options.loginLimits);
    this.#passwordHash = options.passwordHash ?? DEFAULT_ARGON2;
    this.authority = new OperatorAuthority(this, auditedRefusals(db, this.#clock));
  }

  /** Creates a local account; admins only (the bootstrap token is one: the first admin). */
  async create(
    by: Operator,
    spec: OperatorSpec,
    via: Actor['via'] = 'library',
  ): Promise<OperatorView> {
    requireAdmin(by);
    checkLocalId(spec.id);
    const roles = parseRoles(spec.roles);
    const teams = parseTeams(spec.teams ?? []);
    const name = parseName(spec.name, spec.id);
    let passwordHash: string | null = null;
    if (spec.password !== undefined) {
      checkPasswordStrength(spec.password);
      passwordHash = await hashPassword(spec.password, this.#passwordHash);
    }
    const account = { id: spec.id, name, roles, teams, passwordHash };
    try {
      await auditRefusal(this.#db, by, via, this.#clock, 'create', () =>
        writeAccounts(this.#db, by, via, (trx) =>
          insertOperatorIn(trx, by, account, via, this.#clock()),
        ),
      );
    } catch (err) {
      if (isUniqueViolation(err)) {
        throw new ToolgateError('OPERATOR_EXISTS', `operator ${spec.id} already exists`, {
          operatorId: spec.id,
        });
      }
      throw err;
    }
    return this.get(spec.id);
  }

  /**
   * Changes roles, teams, name or the disabled flag; admins only. An admin cannot disable or
   * demote their own account (a lock-out by mistake); another admin or the bootstrap token can.
   */
  async update(
    by: Operator,
    id: string,
    change: OperatorUpdate,
    via: Actor['via'] = 'library',
  ): Promise<OperatorView> {
    requireAdmin(by);
    const checked = checkUpdate(id, change);
    await auditRefusal(this.#db, by, via, this.#clock, 'update', () =>
      writeAccounts(this.#db, by, via, (trx) =>
        changeOperatorIn(trx, by, id, checked, via, this.#clock()),
      ),
    );
    return this.get(id);
  }

  /**
   * Runs `work` (an apply of configuration: its whole transaction) as `by`: a four-eyes refusal
   * in it is audited after the transaction rolled back (`operator.four_eyes_refused`, act
   * `apply`), as for every other operator act.
   */
  auditedApply<T>(by: Operator, via: Actor['via'], work: () => Promise<T>): Promise<T> {
    return auditRefusal(this.#db, by, via, this.#clock, 'apply', work);
  }

  /** An applied `kind: Operator` document, in the apply's transaction (operator-apply.ts). */
  applyIn(
    trx: Transaction<Database>,
    by: Operator,
    doc: OperatorDocument,
    via: Actor['via'],
  ): Promise<OperatorApplied> {
    return applyOperatorIn(trx, by, doc, via, this.#clock());
  }

  /** `apply --prune` of an account no longer declared: disabled, never deleted. */
  disableIn(
    trx: Transaction<Database>,
    by: Operator,
    id: string,
    via: Actor['via'],
    reason: string,
  ): Promise<boolean> {
    return disableOperatorIn(trx, by, id, via, this.#clock(), reason);
  }

  async get(id: string): Promise<OperatorView> {
    const row = typeof id === 'string' ? await selectOperator(this.#db, id) : undefined;
    if (!row) throw notFound(String(id));
    return toView(row);
  }

  /** Accounts by id, a page at a time. */
  async page(request: PageRequest = {}): Promise<Page<OperatorView>> {
    const limit = pageLimit(request.limit);
    let q = this.#db
      .selectFrom('operators')
      .selectAll()
      .orderBy('id')
      .limit(limit + 1);
    if (request.cursor !== undefined) {
      const [after] = decodeCursor('operators', request.cursor);
      q = q.where('id', '>', String(after));
    }
    const rows = (await q.execute()).map(toView);
    return pageFromRows('operators', rows, (o) => [o.id], limit);
  }

  /** A local password: an admin's for anyone, or one's own just after a password sign-in. */
  async setPassword(
    by: Operator,
    id: string,
    password: string,
    via: Actor['via'] = 'library',
  ): Promise<void> {
    const self = by.id === id && signedInWithPassword(by);
    if (!self) requireAdmin(by);
    checkPasswordStrength(password);
    const hash = await hashPassword(password, this.#passwordHash);
    const now = this.#clock();
    await auditRefusal(this.#db, by, via, this.#clock, 'set_password', () =>
      writeAccounts(this.#db, by, via, async (trx) => {
        const row = await selectOperator(trx, id);
        if (!row) throw notFound(id);
        await refuseBootstrapOnDecider(trx, by, row, undefined, 'set the password');
        if (row.kind !== 'local') {
          throw forbidden(`operator ${id} signs in with single sign-on and has no password`);
        }
        await trx
          .updateTable('operators')
          .set({ password_hash: hash, updated_at: now.toISOString() })
          .where('id', '=', id)
          .execute();
        // A password set by someone else is a credential they know.
        await recordHandOver(trx, by, id, via, now, 'set the password of');
        // A reset password ends every console session the old one opened.
        await endSessionsOf(trx, id);
        await appendEvent(trx, operatorActor(by, via), now, {
          action: 'operator.password_set',
          subject: `operator:${id}`,
          details: {},
        });
      }),
    );
  }

  /**
   * Confirms that account `id` is a person of its own, so that it counts in a decision that needs
   * two people (docs/security-model.md, "Four eyes: two people, not two accounts"). `by` proves
   * themself with a fresh code of their own second factor; they must be an enabled, confirmed
   * approver or admin, neither the account nor who set it up (but at the genesis, see
   * `confirmIn`). The bootstrap token confirms nobody. A refusal is FORBIDDEN naming why, and is
   * audited (`operator.confirm_refused`); a confirmation is `operator.confirmed`.
   */
  async confirm(
    by: Operator,
    id: string,
    totp: unknown,
    via: Actor['via'] = 'library',
  ): Promise<OperatorView> {
    const actor = operatorActor(by, via);
    const refusedHere = async (err: unknown): Promise<never> => {
      if (err instanceof ToolgateError && err.code === 'FORBIDDEN') {
        await appendEvent(this.#db, actor, this.#clock(), {
          action: 'operator.confirm_refused',
          subject: `operator:${String(id)}`,
          details: { message: err.message },
        });
      }
      throw err;
    };
    const target = typeof id === 'string' ? await selectOperator(this.#db, id) : undefined;
    if (!target) throw notFound(String(id));
    // Who may confirm is settled before a code is spent on it, and again in the transaction.
    try {
      await checkConfirmation(this.#db, by, id, via);
    } catch (err) {
      await refusedHere(err);
    }
    if (typeof totp !== 'string' || totp === '') {
      throw new ToolgateError('INPUT_INVALID', 'confirming an account needs your second factor', {
        problems: [problem('/totp', 'second factor required', 'confirm.totp')],
      });
    }
    if (!this.#secondFactor) {
      await refusedHere(
        forbidden(`confirming ${id} needs your second factor and this gateway checks none`),
      );
    }
    await this.#secondFactor?.verify(by.id, totp);
    try {
      await writeAccounts(this.#db, by, via, (trx) => confirmIn(trx, by, id, via, this.#clock()));
    } catch (err) {
      await refusedHere(err);
    }
    return this.get(id);
  }

  /**
   * A local login: the password, then the second factor (a TOTP code or a passkey). Every refusal
   * (unknown id, disabled, wrong password, code or passkey, none enrolled, the rate limit of this
   * account and `peer`, LoginGuard) is one UNAUTHENTICATED error, its reason audited, the
   * password hashed in every case alike.
   */
  async loginLocal(
    id: string,
    password: string,
    secondFactor: SignInFactor,
    via: Actor['via'] = 'console',
    peer?: string,
  ): Promise<Operator> {
    const known = typeof id === 'string' && OPERATOR_ID_PATTERN.test(id);
    const row = known ? await selectOperator(this.#db, id) : undefined;
    const taken = row ? await this.#guard.take(row.id, peer) : false;
    const given = typeof password === 'string' ? password : '';
    const passwordOk = await verifyPassword(given, row?.password_hash ?? null, this.#passwordHash);
    if (!row || !taken) throw loginRefused();
    const fail = async (reason: string): Promise<never> => {
      await this.#guard.failed(row.id, reason, peer);
      throw loginRefused();
    };
    if (row.kind !== 'local') return fail('not_local');
    if (row.disabled === 1) return fail('disabled');
    if (!passwordOk) return fail('password');
    if (!this.#secondFactor || !(await this.#secondFactor.enrolled(row.id))) {
      return fail('no_second_factor');
    }
    const method = await checkSignInFactor(this.#secondFactor, row.id, secondFactor).catch(() =>
      fail(typeof secondFactor === 'string' ? 'second_factor' : 'passkey'),
    );
    await this.#guard.succeeded(row.id, peer);
    await rehashAfterSignIn(this.#db, row, given, this.#passwordHash);
    await this.#latch.close(this.#db, 'sign_in');
    const op: Operator = {
      id: row.id,
      name: row.name,
      roles: rolesOf(row.roles),
      teams: jsonList(row.teams),
      authenticatedBy: method,
    };
    await appendEvent(this.#db, operatorActor(op, via), this.#clock(), loggedIn(op));
    return op;
  }

  /**
   * The account of a single sign-on identity, created on first login. Roles, teams, name and
   * email are taken from the identity at each login (the provider is the source of truth); a
   * disabled account stays disabled and is refused.
   */
  async fromOidc(identity: OidcIdentity, via: Actor['via'] = 'console'): Promise<Operator> {
    if (
      typeof identity.issuer !== 'string' ||
      identity.issuer === '' ||
      typeof identity.subject !== 'string' ||
      identity.subject === ''
    ) {
      throw loginRefused();
    }
    const id = oidcOperatorId(identity.issuer, identity.subject);
    if (!Array.isArray(identity.roles) || identity.roles.length === 0) {
      throw forbidden('the identity provider grants this account no toolgate role');
    }
    const roles = parseRoles(identity.roles);
    const teams = parseTeams(identity.teams ?? []);
    // A provider's name that would not read as what it is names nobody: the account's id does.
    const given = typeof identity.name === 'string' ? identity.name.trim() : '';
    const name = parseName(
      given !== '' && given.length <= MAX_NAME_LENGTH && isPrintableName(given) ? given : id,
      id,
    );
    const email = typeof identity.email === 'string' ? identity.email.slice(0, 320) : null;
    const op: Operator = { id, name, roles, teams, authenticatedBy: 'oidc' };
    const actor = operatorActor(op, via);
    const attempt = () =>
      this.#db.transaction().execute(async (trx) => {
        const now = this.#clock();
        const row = await selectOperator(trx, id);
        if (!row) {
          await trx
            .insertInto('operators')
            .values({
              id,
              name,
              roles: JSON.stringify(roles),
              teams: JSON.stringify(teams),
              kind: 'oidc',
              disabled: 0,
              password_hash: null,
              oidc_issuer: identity.issuer,
              oidc_subject: identity.subject,
              email,
              created_at: now.toISOString(),
              created_by: actor.id,
              updated_at: now.toISOString(),
            })
            .execute();
          await appendEvent(trx, actor, now, {
            action: 'operator.created',
            subject: `operator:${id}`,
            details: { kind: 'oidc', issuer: identity.issuer, roles, teams },
          });
          return;
        }
        // The id is a hash prefix: a different identity under it is refused, never merged.
        if (
          row.kind !== 'oidc' ||
          row.oidc_issuer !== identity.issuer ||
          row.oidc_subject !== identity.subject
        ) {
          throw loginRefused();
        }
        if (row.disabled === 1) throw loginRefused();
        const changed = row.roles !== JSON.stringify(roles) || row.teams !== JSON.stringify(teams);
        // A deciding role the provider newly grants is unconfirmed, as one an admin grants.
        const held = rolesOf(row.roles);
        const granted = roles.some((r) => (r === 'approver' || r === 'admin') && !held.includes(r));
        await trx
          .updateTable('operators')
          .set({
            name,
            email,
            roles: JSON.stringify(roles),
            teams: JSON.stringify(teams),
            updated_at: now.toISOString(),
            ...(granted ? { confirmed_by: null, confirmed_at: null } : {}),
          })
          .where('id', '=', id)
          .execute();
        if (changed) {
          await appendEvent(trx, actor, now, {
            action: 'operator.updated',
            subject: `operator:${id}`,
            details: { roles, teams, source: 'oidc' },
          });
        }
      });
    try {
      await attempt();
    } catch (err) {
      // Two replicas creating the same account at once: the second one updates instead.
      if (!isUniqueViolation(err)) throw err;
      await attempt();
    }
    await this.#latch.close(this.#db, 'sign_in');
    await appendEvent(this.#db, actor, this.#clock(), loggedIn(op));
    return op;
  }

  /**
   * Issues a personal token, shown once. For one's own account the caller must have proved
   * themself interactively (password and second factor, or single sign-on): a token cannot
   * mint tokens, so a stolen one cannot outlive its expiry. An admin may issue one for another
   * operator. The token's roles are a subset of the account's.
   */
  async issueToken(
    by: Operator,
    spec: TokenSpec,
    via: Actor['via'] = 'library',
  ): Promise<IssuedToken> {
    const operatorId = spec.operatorId ?? by.id;
    if (operatorId === by.id) {
      if (isBootstrap(by)) {
        throw forbidden('the bootstrap admin token has no account; issue tokens for an operator');
      }
      if (!signedInWithPassword(by) && by.authenticatedBy !== 'oidc') {
        throw forbidden(
          'issuing a token for yourself needs your password and second factor (or single sign-on)',
        );
      }
    } else requireAdmin(by);
    const name = parseTokenName(spec.name);
    const days = parseDays(spec.expiresInDays);
    const { id, token, hash } = generatePersonalToken();
    const now = this.#clock();
    const expiresAt = new Date(now.getTime() + days * DAY_MS).toISOString();
    let roles: OperatorRole[] = [];
    await auditRefusal(this.#db, by, via, this.#clock, 'issue_token', () =>
      writeAccounts(this.#db, by, via, async (trx) => {
        await refuseBootstrapOnSso(trx, by, operatorId, 'issue a personal token for');
        await refuseBootstrapAfterSetup(trx, by, operatorId, 'issue personal tokens');
        const row = await selectOperator(trx, operatorId);
        if (!row) throw notFound(operatorId);
        if (row.disabled === 1) throw forbidden(`operator ${operatorId} is disabled`);
        const current = rolesOf(row.roles);
        roles = spec.roles === undefined ? current : parseRoles(spec.roles);
        const beyond = roles.filter((r) => !current.includes(r));
        if (beyond.length > 0) {
          throw forbidden(
            `operator ${operatorId} does not hold ${beyond.join(', ')}; a token has a subset of the account's roles`,
            current,
          );
        }
        await trx
          .insertInto('operator_tokens')
          .values({
            id,
            operator_id: operatorId,
            name,
            token_hash: hash,
            roles: JSON.stringify(roles),
            created_at: now.toISOString(),
            created_by: operatorActor(by, via).id,
            expires_at: expiresAt,
            revoked_at: null,
          })
          .execute();
        await appendEvent(trx, operatorActor(by, via), now, {
          action: 'operator.token_issued',
          subject: `operator:${operatorId}`,
          details: { token_id: id, name, roles, expires_at: expiresAt },
        });
        // A token issued by someone else is a credential they held: confirmation starts over.
        await recordHandOver(trx, by, operatorId, via, now, 'issue a personal token to');
      }),
    );
    return { id, token, operator_id: operatorId, roles, expires_at: expiresAt };
  }

  /** Revokes a token: one's own, or anyone's for an admin. Revoking twice is a no-op. */
  async revokeToken(
    by: Operator,
    tokenId: string,
    via: Actor['via'] = 'library',
  ): Promise<TokenView> {
    const now = this.#clock();
    return auditRefusal(this.#db, by, via, this.#clock, 'revoke_token', () =>
      writeAccounts(this.#db, by, via, async (trx) => {
        const row = await trx
          .selectFrom('operator_tokens')
          .selectAll()
          .where('id', '=', String(tokenId))
          .executeTakeFirst();
        // Someone else's token id is as unknown to a non-admin as a made-up one.
        if (!row || (row.operator_id !== by.id && !hasRole(by, 'admin'))) {
          throw new ToolgateError('NOT_FOUND', `no token ${tokenId}`, {});
        }
        if (row.revoked_at !== null) return tokenView(row);
        const owner = await selectOperator(trx, row.operator_id);
        if (owner) await refuseBootstrapOnDecider(trx, by, owner, undefined, 'revoke a token');
        const revokedAt = now.toISOString();
        await trx
          .updateTable('operator_tokens')
          .set({ revoked_at: revokedAt })
          .where('id', '=', row.id)
          .execute();
        await appendEvent(trx, operatorActor(by, via), now, {
          action: 'operator.token_revoked',
          subject: `operator:${row.operator_id}`,
          details: { token_id: row.id },
        });
        return tokenView({ ...row, revoked_at: revokedAt });
      }),
    );
  }

  /** An operator's tokens, newest first; never the token itself. */
  async tokens(operatorId: string): Promise<TokenView[]> {
    const rows = await this.#db
      .selectFrom('operator_tokens')
      .select(TOKEN_VIEW_COLUMNS)
      .where('operator_id', '=', String(operatorId))
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
    return rows.map(tokenView);
  }

  /**
   * The operator a personal token belongs to, with the token's roles its account still holds; null
   * for a bad, expired or revoked token, a disabled account or no role left. Read now, no cache.
   */
  async authenticateToken(token: string): Promise<Operator | null> {
    if (typeof token !== 'string' || !isPersonalToken(token)) return null;
    const row = await selectTokenAccount(this.#db, hashToken(token));
    if (!row || row.revoked_at !== null || row.disabled === 1) return null;
    if (row.expires_at <= this.#clock().toISOString()) return null;
    const account = rolesOf(row.account_roles);
    const roles = rolesOf(row.token_roles).filter((r) => account.includes(r));
    if (roles.length === 0 || row.id === BOOTSTRAP_ACTOR_ID) return null;
    await this.#latch.close(this.#db, 'personal_token');
    return {
      id: row.id,
      name: row.name,
      roles,
      teams: jsonList(row.teams),
      authenticatedBy: 'personal-token',
    };
  }
}
