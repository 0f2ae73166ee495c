/**
 * @module The console's browser security: response headers (a strict CSP without inline script,
 * no framing), the `__Host-` session cookie, CSRF tokens derived from the session's secret, and
 * the same-origin check every POST passes before anything runs (a signed-in operator's refusal
 * audited: `checkForm`).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AdminApi, Operator } from '../../api/index.js';
import { isToolgateError, ToolgateError } from '../../core/index.js';

export const SESSION_COOKIE = '__Host-toolgate_console';
export const LOGIN_COOKIE = '__Host-toolgate_console_login';
export const FLASH_COOKIE = '__Host-toolgate_console_flash';

export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** Headers on every console response, pages, assets and errors alike. */
export function setSecurityHeaders(reply: FastifyReply): void {
  reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
  reply.header('x-frame-options', 'DENY');
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'no-referrer');
  reply.header('cross-origin-opener-policy', 'same-origin');
  reply.header('cross-origin-resource-policy', 'same-origin');
}

export function cookiesOf(req: FastifyRequest): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    // The first cookie of a name wins: a browser sends the most specific (ours, Path=/) first.
    if (!out.has(name)) out.set(name, part.slice(eq + 1).trim());
  }
  return out;
}

/**
 * A `__Host-` cookie: Secure, Path=/, no Domain, so no subdomain or plain-HTTP page can set or
 * shadow it; HttpOnly, so no script reads it; SameSite=Strict, so no other site's request carries
 * it. Browsers treat http://127.0.0.1 and localhost as secure contexts; elsewhere serve TLS.
 */
export function setCookie(
  reply: FastifyReply,
  name: string,
  value: string,
  maxAgeSeconds: number,
  sameSite: 'Strict' | 'Lax' = 'Strict',
): void {
  const cookie = `${name}=${value}; Path=/; Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}; HttpOnly; Secure; SameSite=${sameSite}`;
  const prior = reply.getHeader('set-cookie');
  const list =
    prior === undefined ? [] : Array.isArray(prior) ? prior.map(String) : [String(prior)];
  reply.header('set-cookie', [...list, cookie]);
}

export function clearCookie(reply: FastifyReply, name: string): void {
  setCookie(reply, name, '', 0);
}

/** The CSRF token of a session: derived from its secret, so it is never stored anywhere. */
export function csrfTokenOf(sessionSecret: string): string {
  return createHash('sha256')
    .update('toolgate console csrf\0')
    .update(sessionSecret)
    .digest('base64url');
}

export function csrfMatches(expected: string, presented: string | undefined): boolean {
  if (typeof presented !== 'string') return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}

function refused(reason: 'cross_origin' | 'csrf', message: string): ToolgateError {
  return new ToolgateError('CONSOLE_FORM_REFUSED', message, { reason });
}

/**
 * A state change must come from a page of this very origin: the Origin header names it, or,
 * where a browser sends none, Sec-Fetch-Site says `same-origin`. Neither present: refused.
 */
export function checkSameOrigin(req: FastifyRequest): void {
  const origin = req.headers.origin;
  if (typeof origin === 'string' && origin !== 'null') {
    const host = req.headers.host ?? '';
    if (origin !== `${req.protocol}://${host}`)
      throw refused('cross_origin', 'the form was not sent from this console');
    return;
  }
  if (req.headers['sec-fetch-site'] === 'same-origin') return;
  throw refused('cross_origin', 'the form was not sent from this console');
}

export function checkCsrf(sessionSecret: string, form: Readonly<Record<string, string>>): void {
  if (!csrfMatches(csrfTokenOf(sessionSecret), form._csrf))
    throw refused('csrf', 'the form is stale or was not sent from this console; reload the page');
}

/**
 * A signed-in operator's POST — an HTML form or a passkey ceremony's JSON request alike — must
 * come from this origin and carry the session's CSRF token (CONSOLE_FORM_REFUSED, 403). A refusal
 * is audited as that operator's (`console.form_refused`, its reason and `route`) before it is
 * thrown: the forged cross-site decision is the attempt an auditor wants to see. The one check
 * every session-bound console POST passes; never a copy of it.
 */
export async function checkForm(
  admin: AdminApi,
  req: FastifyRequest,
  session: { readonly operator: Operator; readonly secret: string },
  form: Readonly<Record<string, string>>,
  route: string,
): Promise<void> {
  try {
    checkSameOrigin(req);
    checkCsrf(session.secret, form);
  } catch (err) {
    if (isToolgateError(err) && err.code === 'CONSOLE_FORM_REFUSED') {
      const { reason } = err.details as { reason: 'cross_origin' | 'csrf' };
      const asking = { via: 'console', method: 'POST', route } as const;
      await admin.operators.authority.formRefused(session.operator, reason, asking);
    }
    throw err;
  }
}

/** Where a refused sign-in request is recorded: no one is signed in, so it is the peer's. */
export type SignInRefused = (reason: 'cross_origin', route: string, peer: string) => Promise<void>;

/**
 * A sign-in POST (no session yet, so no CSRF token) must come from this origin; a refusal is
 * recorded through `refused` (sampled per peer: anyone may send one) before it is thrown.
 */
export async function checkSignInOrigin(
  req: FastifyRequest,
  route: string,
  refused: SignInRefused | undefined,
): Promise<void> {
  try {
    checkSameOrigin(req);
  } catch (err) {
    if (isToolgateError(err) && err.code === 'CONSOLE_FORM_REFUSED')
      await refused?.('cross_origin', route, req.ip);
    throw err;
  }
}
