/**
 * @module The console's passkey ceremonies' JSON routes (docs/architecture.md §6, "Passkeys bound
 * to the decision"): the WebAuthn options of a sign-in, of the operator's own enrolment (and its
 * step-up), and of one decision. Guarded as the console's forms are — a live session (401), this
 * very origin and the session's CSRF token (403, the refusal audited as a form's is), the action's roles through the operator
 * authority (403, audited) — all before anything runs; sign-in options need the origin only (no
 * session yet) and name nobody. Options only: every answer is checked by the form it fills.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AdminApi, Operator, OperatorAction } from '../../api/index.js';
import { isToolgateError, problem, ToolgateError } from '../../core/index.js';
import { scopeOfForm } from './approval-scope.js';
import { type ConsoleOptions, registerConsole } from './register-console.js';
import {
  checkForm,
  checkSignInOrigin,
  cookiesOf,
  SESSION_COOKIE,
  type SignInRefused,
  setSecurityHeaders,
} from './security.js';

const consoleRoute = { config: { auth: 'public' as const }, schema: { hide: true } };
const BODY_LIMIT = 4096;

type Body = Readonly<Record<string, string>>;

function bodyOf(req: FastifyRequest): Body {
  const out: Record<string, string> = {};
  const body = req.body;
  if (body !== null && typeof body === 'object')
    for (const [k, v] of Object.entries(body)) if (typeof v === 'string') out[k] = v;
  return out;
}

/** The origin the browser is at: the Origin header the same-origin check accepted. */
function originOf(req: FastifyRequest): string {
  const origin = req.headers.origin;
  return typeof origin === 'string' && origin !== 'null'
    ? origin
    : `${req.protocol}://${req.headers.host ?? ''}`;
}

/**
 * Session (401), origin and CSRF token (403, audited as the operator's `console.form_refused` by
 * the forms' own check), the action's roles (403, audited), in that order.
 */
async function signedIn(
  admin: AdminApi,
  req: FastifyRequest,
  action: OperatorAction,
  route: string,
): Promise<Operator> {
  const secret = cookiesOf(req).get(SESSION_COOKIE);
  const view = secret ? await admin.consoleSessions.lookup(secret) : null;
  if (!secret || !view)
    throw new ToolgateError('UNAUTHENTICATED', 'sign in to the console first', {});
  await checkForm(admin, req, { operator: view.operator, secret }, bodyOf(req), route);
  await admin.operators.authority.enforce(view.operator, action, {
    via: 'console',
    method: 'POST',
    route,
  });
  return view.operator;
}

function decisionKind(body: Body): 'approval' | 'change' | 'review' {
  if (body.kind === 'approval' || body.kind === 'change' || body.kind === 'review')
    return body.kind;
  throw new ToolgateError(
    'INPUT_INVALID',
    'a passkey decision is of an approval, a change or a review',
    { problems: [problem('/kind', 'not approval, change or review', 'console.passkey_kind')] },
  );
}

/**
 * A review's options: the review the page showed (by id), the definition hash and the verdict of
 * the form the button is in; the catalog checks the hash is still the stored one.
 */
async function reviewOptions(admin: AdminApi, op: Operator, body: Body, origin: string) {
  const review = await admin.reviews.get(body.id ?? '');
  const decision = body.decision === 'rejected' ? 'rejected' : 'approved';
  return admin.catalog.reviewPasskeyOptions({
    toolId: review.tool_id,
    version: review.version,
    operator: op,
    stated: { definition_hash: body.definition_hash ?? '', decision },
    requestOrigin: origin,
    via: 'console',
  });
}

export async function registerPasskeyRoutes(
  app: FastifyInstance,
  admin: AdminApi,
  signInRefused?: SignInRefused,
): Promise<void> {
  await app.register(async (scope) => {
    scope.addHook('onSend', async (_req, reply, payload) => {
      setSecurityHeaders(reply);
      reply.header('cache-control', 'no-store');
      return payload;
    });
    scope.setErrorHandler((err, req, reply: FastifyReply) => {
      if (isToolgateError(err)) return reply.status(err.httpStatus).send(err.toBody());
      const status = (err as { statusCode?: number }).statusCode ?? 500;
      if (status < 500)
        return reply
          .status(status)
          .send({ code: 'INPUT_MALFORMED', message: 'the request could not be read', details: {} });
      req.log.error({ err }, 'console passkey error');
      return reply.status(500).send({ code: 'INTERNAL', message: 'internal error', details: {} });
    });
    const opts = { ...consoleRoute, bodyLimit: BODY_LIMIT };

    // No session yet: the origin check keeps another site from starting this browser's sign-in.
    scope.post('/console/login/passkey-options', opts, async (req) => {
      await checkSignInOrigin(req, '/console/login/passkey-options', signInRefused);
      // Bounded per peer address and in all (RATE_LIMITED): nobody is signed in to count against.
      return admin.passkeys.loginOptions(originOf(req), req.ip);
    });
    scope.post('/console/passkeys/options', opts, async (req) => {
      const op = await signedIn(admin, req, 'operators.self', '/console/passkeys/options');
      return admin.passkeys.registrationOptions(op, originOf(req));
    });
    scope.post('/console/passkeys/step-up-options', opts, async (req) => {
      const op = await signedIn(admin, req, 'operators.self', '/console/passkeys/step-up-options');
      return admin.passkeys.enrolmentOptions(op, originOf(req));
    });
    scope.post('/console/decisions/passkey-options', opts, async (req) => {
      const op = await signedIn(
        admin,
        req,
        'approvals.decide',
        '/console/decisions/passkey-options',
      );
      const body = bodyOf(req);
      const id = body.id ?? '';
      const kind = decisionKind(body);
      if (kind === 'review') return reviewOptions(admin, op, body, originOf(req));
      // An approval with a scope: the challenge commits to its terms (scopeOfForm reads the box).
      const scope = scopeOfForm(body);
      return kind === 'approval'
        ? admin.approvals.passkeyOptions(id, op, originOf(req), scope)
        : admin.changes.passkeyOptions(id, op, originOf(req));
    });
  });
}

/** The console and its passkey routes: what a gateway's HTTP front registers. */
export async function registerConsoleWithPasskeys(
  app: FastifyInstance,
  admin: AdminApi,
  options: ConsoleOptions = {},
): Promise<void> {
  await registerConsole(app, admin, options);
  await registerPasskeyRoutes(app, admin, options.signInRefused);
}
