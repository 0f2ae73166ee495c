/**
 * @module Signing in to the console: local accounts (operator id, password, TOTP) through the
 * `loginLocal` port, single sign-on through the `oidc` port, and the session that either starts
 * (a fresh id at every login: whatever id the browser held before is revoked, never promoted).
 * Every failure shows one generic message.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AdminApi, SignInFactor } from '../../api/index.js';
import { isToolgateError } from '../../core/index.js';
import type { Operator } from '../../domain/operators/index.js';
import { type Html, html } from './html.js';
import { document } from './layout.js';
import { clearCookie, cookiesOf, LOGIN_COOKIE, SESSION_COOKIE, setCookie } from './security.js';

/**
 * Local accounts: resolves to the operator, or rejects (wrong id, password or code alike). `peer`
 * is the address the attempt came from: the rate limit is the account's and the peer's.
 */
export type LocalLogin = (
  id: string,
  password: string,
  factor: SignInFactor,
  peer: string,
) => Promise<Operator>;

/**
 * The second factor the login form carries: a passkey's answer (the script put it in `passkey`)
 * or else the TOTP code. A passkey is the second factor after the password, never the sign-in on
 * its own (docs/architecture.md §6): the login rate limit, the disabled check and the record of
 * how the operator signed in stay the password's.
 */
export function signInFactorOf(form: Readonly<Record<string, string>>): SignInFactor {
  const passkey = form.passkey ?? '';
  return passkey !== '' ? { passkey } : (form.totp ?? '');
}

/** The login form, signed in through `login` (operator id, password, second factor). */
export function signInWith(
  login: LocalLogin,
  form: Readonly<Record<string, string>>,
  peer: string,
): Promise<Operator> {
  return login(form.operator ?? '', form.password ?? '', signInFactorOf(form), peer);
}

/**
 * Single sign-on: the relying party's two halves around the provider's redirect, and where a
 * failed one is recorded (`reason`: the check that refused it; `peer`: the address it came from).
 */
export interface OidcLogin {
  begin(): Promise<{ url: string; pending: unknown }>;
  complete(pending: unknown, query: Record<string, string>): Promise<Operator>;
  failed?(reason: string, peer: string): Promise<void>;
}

export interface SessionPolicy {
  readonly idleMs?: number;
  readonly lifetimeMs?: number;
}

export const LOGIN_FAILED = 'Sign-in failed. Check your operator id, password and code.';
/**
 * A failed single sign-on: one message whatever the cause (the cause is the audit record's), and
 * not the local form's words, which would send the user to the wrong fix.
 */
export const SSO_FAILED =
  'Single sign-on failed. Sign in again; if it keeps failing, ask an admin to check the identity provider and the role map.';
const PENDING_LOGIN_MS = 10 * 60 * 1000;

/**
 * Starts a console session for an operator who has just authenticated, and sets its cookie:
 * the one function every login path ends in. The browser's previous session, if any, ends.
 */
export async function startConsoleSession(
  admin: AdminApi,
  req: FastifyRequest,
  reply: FastifyReply,
  operator: Operator,
  policy: SessionPolicy,
): Promise<void> {
  const old = cookiesOf(req).get(SESSION_COOKIE);
  if (old) await admin.consoleSessions.revoke(old);
  const grant = await admin.consoleSessions.create(operator, {
    ...(policy.idleMs !== undefined ? { idleMs: policy.idleMs } : {}),
    ...(policy.lifetimeMs !== undefined ? { lifetimeMs: policy.lifetimeMs } : {}),
  });
  setCookie(reply, SESSION_COOKIE, grant.secret, (Date.parse(grant.expiresAt) - Date.now()) / 1000);
}

export function loginPage(options: { local: boolean; oidc: boolean; error?: string }): Html {
  return document(
    'Sign in',
    html`<div class="login">
<h1>toolgate console</h1>
${options.error ? html`<div class="error" role="alert" id="login-error">${options.error}</div>` : ''}
${
  options.local
    ? html`<form method="post" action="/console/login" id="login-form">
<label for="operator">Operator id</label><input type="text" id="operator" name="operator" autocomplete="username" required maxlength="200">
<label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password" required maxlength="1000">
<label for="totp">TOTP code</label><input type="text" id="totp" name="totp" inputmode="numeric" autocomplete="one-time-code" required maxlength="12">
<input type="hidden" name="passkey" value="">
<button type="submit">Sign in</button>
</form>
<p><button type="button" form="login-form" class="secondary" id="passkey-login" data-passkey="login">Sign in with a passkey instead of the code</button></p>`
    : html`<p class="muted">Local accounts are not configured on this gateway.</p>`
}
${options.oidc ? html`<p><a href="/console/login/oidc" id="sso">Sign in with single sign-on</a></p>` : ''}
</div>`,
  );
}

/** Redirect to the provider, the pending login kept server-side under a handle in a cookie. */
export async function beginOidc(
  admin: AdminApi,
  oidc: OidcLogin,
  reply: FastifyReply,
): Promise<string> {
  const { url, pending } = await oidc.begin();
  const handle = await admin.consoleSessions.beginLogin(pending, PENDING_LOGIN_MS);
  // Lax, not Strict: the provider's redirect back is a cross-site navigation, and the handle
  // must come with it. It is single use and only names a pending login, never a session.
  setCookie(reply, LOGIN_COOKIE, handle, PENDING_LOGIN_MS / 1000, 'Lax');
  return url;
}

/**
 * The callback: the pending login of this browser, taken once, completed by the provider port.
 * A failure is logged and handed to the port's `failed` with its reason (never the code, the
 * state or a token): no pending login (`no_login`), one already taken or expired
 * (`login_expired`: a replayed callback), the provider's check (OIDC_LOGIN_FAILED's `reason`), no
 * role (`no_role`), an account refused (`account_refused`) or claims it cannot take.
 */
export async function completeOidc(
  admin: AdminApi,
  oidc: OidcLogin,
  req: FastifyRequest,
  reply: FastifyReply,
  query: Record<string, string>,
): Promise<Operator | null> {
  const handle = cookiesOf(req).get(LOGIN_COOKIE);
  clearCookie(reply, LOGIN_COOKIE);
  let reason = 'no_login';
  try {
    const taken = handle ? await admin.consoleSessions.takeLogin(handle) : null;
    if (handle) reason = 'login_expired';
    if (taken) return await oidc.complete(taken.pending, query);
  } catch (err) {
    reason = oidcFailureReason(err);
    if (reason === 'error') req.log.error({ err }, 'single sign-on failed unexpectedly');
  }
  req.log.warn({ reason }, 'single sign-on failed');
  await oidc.failed?.(reason, req.ip);
  return null;
}

/** Which check refused a single sign-on, from what the provider port or the account threw. */
function oidcFailureReason(err: unknown): string {
  if (!isToolgateError(err)) return 'error';
  if (err.code === 'OIDC_LOGIN_FAILED') return String((err.details as { reason: string }).reason);
  if (err.code === 'FORBIDDEN') return 'no_role';
  if (err.code === 'UNAUTHENTICATED') return 'account_refused';
  if (err.code === 'INPUT_INVALID') return 'claims_invalid';
  return 'error';
}

/**
 * After the provider's cross-site redirect, a Strict cookie is not sent on the rest of that
 * navigation; this page moves on from our own origin, where it is.
 */
export function continuePage(): Html {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=/console/inbox"><title>Signed in</title></head>
<body><p><a href="/console/inbox">Continue to the console</a></p></body></html>
`;
}
