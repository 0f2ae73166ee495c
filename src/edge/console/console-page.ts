/**
 * @module The contract between the console's shell (sessions, CSRF, CSP, layout) and its pages.
 * A page renders from the operator's own view of the admin API; an action changes state and is
 * only reached after the shell checked the session, the CSRF token and the Origin.
 */
import type { AdminApi, Operator, OperatorAction, OperatorRole } from '../../api/index.js';
import type { Html } from './html.js';

export interface ConsoleContext {
  /** The operator of this console session (authenticated; never a name a form states). */
  readonly operator: Operator;
  readonly admin: AdminApi;
  /** The session's CSRF token, for the hidden field of every form this page renders. */
  readonly csrfToken: string;
  /**
   * Pending items of the inbox, shown in every page's header; null for an operator who may not
   * read the inbox (an owner): they see neither the link nor how much waits across all teams.
   */
  readonly pendingCount: number | null;
}

export interface ConsolePage {
  /** Path under /console, e.g. `/catalog` or `/audit/:id` (Fastify syntax). */
  readonly path: string;
  readonly title: string;
  /** Roles that may open the page (any of them); others get 403, audited. */
  readonly roles: readonly OperatorRole[];
  /**
   * The action of the operator authority's table the page belongs to (its roles then come from the
   * table); named in the audit record of a refusal. A deployment's page may name roles only.
   */
  readonly action?: OperatorAction;
  /** Shown in the navigation when set. */
  readonly nav?: string;
  render(
    ctx: ConsoleContext,
    params: Readonly<Record<string, string>>,
    query: Readonly<Record<string, string>>,
  ): Promise<Html>;
}

export interface ConsoleAction {
  /** Path under /console of a POST form target, e.g. `/approvals/:id/approve`. */
  readonly path: string;
  /** Roles that may post the form (any of them); others get 403, audited. */
  readonly roles: readonly OperatorRole[];
  /** As a page's `action`: the action of the authority's table, named in a refusal's record. */
  readonly action?: OperatorAction;
  /** Returns where to send the browser next (a path under /console). */
  handle(
    ctx: ConsoleContext,
    params: Readonly<Record<string, string>>,
    form: Readonly<Record<string, string>>,
  ): Promise<{ readonly redirect: string; readonly flash?: string }>;
}

/** A file the console hands out (a governance report); reached by GET, changes nothing. */
export interface ConsoleDownload {
  /** Path under /console, e.g. `/reports/:name/download`. */
  readonly path: string;
  readonly roles: readonly OperatorRole[];
  /** As a page's `action`. */
  readonly action?: OperatorAction;
  /** The shell sends `body` with `contentType` and `Content-Disposition: attachment; filename`. */
  download(
    ctx: ConsoleContext,
    params: Readonly<Record<string, string>>,
    query: Readonly<Record<string, string>>,
  ): Promise<{ readonly filename: string; readonly contentType: string; readonly body: string }>;
}
