/**
 * @module The console under `/console`, on the same Fastify app as REST and MCP
 * (docs/architecture.md §6). The bearer-token hook skips its routes (`auth: 'public'`); this
 * shell guards them instead, deny by default: a page without a live session redirects to the
 * login, a POST without one is refused (401) and runs nothing; every POST must also come from
 * this origin and carry the session's CSRF token. Every response carries the strict headers.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  type AdminApi,
  holdsAny,
  type Operator,
  type OperatorAction,
  type OperatorRole,
  rolesOf,
} from '../../api/index.js';
import { type Clock, isToolgateError, systemClock, ToolgateError } from '../../core/index.js';
import { decisionActions, renderApproval, renderChange } from './approval-detail.js';
import { CONSOLE_ICON, CONSOLE_SCRIPT, CONSOLE_STYLE } from './assets.js';
import type { ConsoleAction, ConsoleContext, ConsolePage } from './console-page.js';
import { type Html, html, toHtmlString } from './html.js';
import {
  approvalSource,
  changeSource,
  type InboxSource,
  inboxPage,
  inboxTable,
  pendingCount,
  reviewSource,
} from './inbox.js';
import { type NavEntry, page } from './layout.js';
import {
  beginOidc,
  completeOidc,
  continuePage,
  LOGIN_FAILED,
  type LocalLogin,
  loginPage,
  type OidcLogin,
  type SessionPolicy,
  SSO_FAILED,
  signInWith,
  startConsoleSession,
} from './login.js';
import {
  checkForm,
  checkSignInOrigin,
  clearCookie,
  cookiesOf,
  csrfTokenOf,
  FLASH_COOKIE,
  SESSION_COOKIE,
  type SignInRefused,
  setCookie,
  setSecurityHeaders,
} from './security.js';

export interface ConsoleOptions extends SessionPolicy {
  /** Local accounts; without it the login page offers none. */
  readonly loginLocal?: LocalLogin;
  /** Single sign-on; without it `/console/login/oidc` is not found. */
  readonly oidc?: OidcLogin;
  /** Pages and form actions beside the inbox (the console's page registry). */
  readonly pages?: readonly ConsolePage[];
  readonly actions?: readonly ConsoleAction[];
  /** More pending work for the inbox (e.g. a security-review queue), beside approvals and changes. */
  readonly inboxSources?: readonly InboxSource[];
  /** Inbox page size; default 50. */
  readonly inboxPageSize?: number;
  readonly clock?: Clock;
  /** Records a sign-in request refused for its origin (invariant 14); sampled per peer. */
  readonly signInRefused?: SignInRefused;
}

/** What a page or form is guarded by: its roles, and the action of the authority's table if any. */
interface Guarded {
  readonly roles: readonly OperatorRole[];
  readonly action?: OperatorAction;
}

/** The inbox and the approval and change pages: `approvals.read` of the operator authority. */
const INBOX: Guarded = { action: 'approvals.read', roles: rolesOf('approvals.read') };
const FORM_LIMIT = 64 * 1024;

interface Session {
  readonly operator: Operator;
  readonly secret: string;
}

type Form = Readonly<Record<string, string>>;

function formOf(body: unknown): Form {
  return body !== null && typeof body === 'object' ? (body as Form) : {};
}

function stringRecord(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (value === null || typeof value !== 'object') return out;
  for (const [k, v] of Object.entries(value)) if (typeof v === 'string') out[k] = v;
  return out;
}

/**
 * Whether the session's operator, as its account is stored now (the session lookup joins it), may
 * open a page or take an action of these roles: the built-in pages take them from the operator
 * authority's table (OPERATOR_ACTIONS); a page a deployment adds names its own.
 */
function mayOpen(op: Operator, roles: readonly OperatorRole[]): boolean {
  return holdsAny(op, roles);
}

/**
 * Refuses, through the operator authority (which audits the refusal as `operator.forbidden`), an
 * operator whose roles do not open this page or post this form.
 */
function enforce(
  admin: AdminApi,
  op: Operator,
  target: Guarded,
  method: 'GET' | 'POST',
  path: string,
): Promise<void> {
  const asking = { via: 'console', method, route: `/console${path}` } as const;
  return target.action !== undefined
    ? admin.operators.authority.enforce(op, target.action, asking)
    : admin.operators.authority.enforceRoles(op, target.roles, asking);
}

/** Whether the authority refuses the page (the refusal audited); a page shows 403 instead. */
function refusedPage(admin: AdminApi, op: Operator, target: Guarded, path: string) {
  return enforce(admin, op, target, 'GET', path).then(
    () => false,
    () => true,
  );
}

/**
 * Every console route: public to the bearer-token hook (the session cookie guards it), and left
 * out of the OpenAPI document, being HTML pages and form posts for people, not an API.
 */
const consoleRoute = { config: { auth: 'public' as const }, schema: { hide: true } };

/** The body of a page whose item is not available (not found, or refused by the service). */
function notFoundBody(message: string): Html {
  return html`<p class="error">${message}</p>`;
}

function sendHtml(reply: FastifyReply, status: number, body: Html): FastifyReply {
  return reply.status(status).type('text/html; charset=utf-8').send(toHtmlString(body));
}

function takeFlash(req: FastifyRequest, reply: FastifyReply): string | undefined {
  const raw = cookiesOf(req).get(FLASH_COOKIE);
  if (raw === undefined) return undefined;
  clearCookie(reply, FLASH_COOKIE);
  try {
    return Buffer.from(raw, 'base64url').toString('utf8').slice(0, 300);
  } catch {
    return undefined;
  }
}

function setFlash(reply: FastifyReply, text: string): void {
  setCookie(reply, FLASH_COOKIE, Buffer.from(text.slice(0, 300)).toString('base64url'), 60);
}

export async function registerConsole(
  app: FastifyInstance,
  admin: AdminApi,
  options: ConsoleOptions = {},
): Promise<void> {
  const clock = options.clock ?? systemClock;
  const sources: readonly InboxSource[] = [
    approvalSource(admin),
    changeSource(admin),
    reviewSource(admin),
    ...(options.inboxSources ?? []),
  ];
  const pages = options.pages ?? [];
  const actions = [...decisionActions(), ...(options.actions ?? [])];
  const nav: NavEntry[] = pages
    .filter((p) => p.nav !== undefined)
    .map((p) => ({ path: p.path, label: p.nav ?? p.title, roles: p.roles }));
  const policy: SessionPolicy = {
    ...(options.idleMs !== undefined ? { idleMs: options.idleMs } : {}),
    ...(options.lifetimeMs !== undefined ? { lifetimeMs: options.lifetimeMs } : {}),
  };
  const pageSize = options.inboxPageSize ?? 50;
  // The console's own scope: its hooks, parser and error handler apply to its routes only.
  let routes: FastifyInstance = app;

  async function sessionOf(req: FastifyRequest): Promise<Session | null> {
    const secret = cookiesOf(req).get(SESSION_COOKIE);
    if (!secret) return null;
    const view = await admin.consoleSessions.lookup(secret);
    return view ? { operator: view.operator, secret } : null;
  }

  async function contextOf(session: Session): Promise<ConsoleContext> {
    return {
      operator: session.operator,
      admin,
      csrfToken: csrfTokenOf(session.secret),
      pendingCount: mayOpen(session.operator, INBOX.roles) ? await pendingCount(sources) : null,
    };
  }

  function framed(
    req: FastifyRequest,
    reply: FastifyReply,
    ctx: ConsoleContext,
    here: string,
    title: string,
    content: Html,
    status = 200,
  ): FastifyReply {
    const frame = {
      operator: ctx.operator,
      csrfToken: ctx.csrfToken,
      pendingCount: ctx.pendingCount,
      nav,
      here,
      flash: takeFlash(req, reply),
    };
    return sendHtml(reply, status, page(frame, title, content));
  }

  /** A page: a live session and one of the roles, else the login page or 403. */
  function guardedPage(
    path: string,
    target: Guarded,
    here: string,
    render: (ctx: ConsoleContext, req: FastifyRequest) => Promise<{ title: string; content: Html }>,
  ): void {
    routes.get(`/console${path}`, consoleRoute, async (req, reply) => {
      const session = await sessionOf(req);
      if (!session) return reply.redirect('/console/login', 303);
      if (!mayOpen(session.operator, target.roles) && here === '/inbox') {
        // Not everyone decides approvals (an owner manages tools): their start is their first page.
        const start = nav.find((n) => mayOpen(session.operator, n.roles));
        if (start) return reply.redirect(`/console${start.path}`, 303);
      }
      const ctx = await contextOf(session);
      if (await refusedPage(admin, session.operator, target, path))
        return framed(
          req,
          reply,
          ctx,
          here,
          'Not allowed',
          html`<p class="error">Your roles do not include this page.</p>`,
          403,
        );
      try {
        const { title, content } = await render(ctx, req);
        return framed(req, reply, ctx, here, title, content);
      } catch (err) {
        if (!isToolgateError(err)) throw err;
        return framed(
          req,
          reply,
          ctx,
          here,
          'Not available',
          notFoundBody(err.message),
          err.httpStatus,
        );
      }
    });
  }

  /**
   * A state change: session (401), same origin and CSRF token (403), role (403), in that order,
   * all before the action runs. A refused decision of the action itself returns to its page.
   */
  function guardedAction(action: ConsoleAction): void {
    routes.post(`/console${action.path}`, consoleRoute, async (req, reply) => {
      const session = await sessionOf(req);
      if (!session) throw new ToolgateError('UNAUTHENTICATED', 'sign in to the console first', {});
      const form = formOf(req.body);
      await checkForm(admin, req, session, form, `/console${action.path}`);
      await enforce(admin, session.operator, action, 'POST', action.path);
      const ctx = await contextOf(session);
      const params = stringRecord(req.params);
      const path = (req.url.split('?')[0] ?? '').replace(/\/[^/]*$/, '');
      try {
        const { redirect, flash } = await action.handle(ctx, params, form);
        if (flash) setFlash(reply, flash);
        return reply.redirect(
          `/console${redirect.startsWith('/') ? redirect : `/${redirect}`}`,
          303,
        );
      } catch (err) {
        if (!isToolgateError(err) || err.httpStatus >= 500) throw err;
        // Not found (or another team's: the same): the page a missing item gets, not a redirect.
        if (err.httpStatus === 404) {
          return framed(req, reply, ctx, '', 'Not available', notFoundBody(err.message), 404);
        }
        setFlash(reply, `Refused: ${err.message}`);
        return reply.redirect(path.startsWith('/console') ? path : '/console', 303);
      }
    });
  }

  await app.register(async (scope) => {
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: FORM_LIMIT },
      (_req, body, done) => {
        const out: Record<string, string> = {};
        for (const [k, v] of new URLSearchParams(String(body))) if (!(k in out)) out[k] = v;
        done(null, out);
      },
    );
    scope.addHook('onSend', async (_req, reply, payload) => {
      setSecurityHeaders(reply);
      if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
      return payload;
    });
    scope.setErrorHandler((err, _req, reply) => {
      if (isToolgateError(err)) return reply.status(err.httpStatus).send(err.toBody());
      const status = (err as { statusCode?: number }).statusCode ?? 500;
      if (status < 500)
        return reply
          .status(status)
          .send({ code: 'INPUT_MALFORMED', message: 'the form could not be read', details: {} });
      reply.log.error({ err }, 'console error');
      return reply.status(500).send({ code: 'INTERNAL', message: 'internal error', details: {} });
    });

    routes = scope;
    {
      scope.get('/console/assets/:file', consoleRoute, async (req, reply) => {
        const file = (req.params as { file?: string }).file;
        const asset = [CONSOLE_SCRIPT, CONSOLE_STYLE, CONSOLE_ICON].find((a) => a.file === file);
        if (!asset) return reply.status(404).type('text/plain').send('not found');
        return reply
          .header('cache-control', 'public, max-age=31536000, immutable')
          .type(
            asset === CONSOLE_SCRIPT
              ? 'text/javascript; charset=utf-8'
              : asset === CONSOLE_STYLE
                ? 'text/css; charset=utf-8'
                : 'image/svg+xml',
          )
          .send(asset.text);
      });

      scope.get('/console/login', consoleRoute, async (req, reply) => {
        if (await sessionOf(req)) return reply.redirect('/console/inbox', 303);
        return sendHtml(
          reply,
          200,
          loginPage({ local: !!options.loginLocal, oidc: !!options.oidc }),
        );
      });
      scope.post('/console/login', consoleRoute, async (req, reply) => {
        // Login has no session yet, so no CSRF token: the origin check keeps another site from
        // signing this browser in to an account of its choosing.
        await checkSignInOrigin(req, '/console/login', options.signInRefused);
        const form = formOf(req.body);
        const failed = () =>
          sendHtml(
            reply,
            401,
            loginPage({ local: !!options.loginLocal, oidc: !!options.oidc, error: LOGIN_FAILED }),
          );
        if (!options.loginLocal) return failed();
        let operator: Operator;
        try {
          operator = await signInWith(options.loginLocal, form, req.ip);
        } catch {
          return failed();
        }
        await startConsoleSession(admin, req, reply, operator, policy);
        return reply.redirect('/console/inbox', 303);
      });
      scope.get('/console/login/oidc', consoleRoute, async (_req, reply) => {
        if (!options.oidc) return reply.status(404).type('text/plain').send('not found');
        return reply.redirect(await beginOidc(admin, options.oidc, reply), 303);
      });
      scope.get('/console/login/oidc/callback', consoleRoute, async (req, reply) => {
        if (!options.oidc) return reply.status(404).type('text/plain').send('not found');
        const operator = await completeOidc(
          admin,
          options.oidc,
          req,
          reply,
          stringRecord(req.query),
        );
        if (!operator)
          return sendHtml(
            reply,
            401,
            loginPage({ local: !!options.loginLocal, oidc: true, error: SSO_FAILED }),
          );
        await startConsoleSession(admin, req, reply, operator, policy);
        return sendHtml(reply, 200, continuePage());
      });
      scope.post('/console/logout', consoleRoute, async (req, reply) => {
        const session = await sessionOf(req);
        if (!session) throw new ToolgateError('UNAUTHENTICATED', 'no console session', {});
        await checkForm(admin, req, session, formOf(req.body), '/console/logout');
        await admin.consoleSessions.revoke(session.secret);
        clearCookie(reply, SESSION_COOKIE);
        return reply.redirect('/console/login', 303);
      });

      const inbox = async (ctx: ConsoleContext, req: FastifyRequest) => {
        const cursor = stringRecord(req.query).cursor;
        const result = await inboxPage(sources, cursor, pageSize);
        return {
          title: `Inbox (${ctx.pendingCount} pending)`,
          content: inboxTable(result, clock()),
        };
      };
      guardedPage('', INBOX, '/inbox', inbox);
      guardedPage('/inbox', INBOX, '/inbox', inbox);
      guardedPage('/approvals/:id', INBOX, '/inbox', async (ctx, req) => {
        const id = stringRecord(req.params).id ?? '';
        return { title: `Approval ${id}`, content: await renderApproval(ctx, id, clock()) };
      });
      guardedPage('/changes/:id', INBOX, '/inbox', async (ctx, req) => {
        const id = stringRecord(req.params).id ?? '';
        return { title: `Change ${id}`, content: await renderChange(ctx, id) };
      });
      for (const p of pages) {
        guardedPage(p.path, p, p.path, async (ctx, req) => ({
          title: p.title,
          content: await p.render(ctx, stringRecord(req.params), stringRecord(req.query)),
        }));
      }
      for (const a of actions) guardedAction(a);
    }
  });
}
