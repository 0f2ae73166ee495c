/**
 * @module What the console's shell does for a page, done plainly for the pages' tests: a
 * ConsoleContext from an Operator value (as the shell builds one after login), a page or action
 * found by its path in the lists, rendered to a string. Roles are asserted here as the shell
 * checks them, and each action is also called with a wrong role to prove it checks again.
 */
import type { AdminApi } from '../../src/api/index.js';
import type { Operator, OperatorRole } from '../../src/domain/operators/index.js';
import type {
  ConsoleAction,
  ConsoleContext,
  ConsoleDownload,
  ConsolePage,
} from '../../src/edge/console/console-page.js';
import { toHtmlString } from '../../src/edge/console/html.js';
import {
  CONSOLE_ACTIONS,
  CONSOLE_DOWNLOADS,
  CONSOLE_PAGES,
} from '../../src/edge/console/pages/index.js';

export const CSRF = 'csrf-token-of-this-session';

export function operator(
  id: string,
  roles: readonly OperatorRole[],
  teams: readonly string[] = [],
): Operator {
  return { id, name: id, roles, teams, authenticatedBy: 'password+totp' };
}

export function contextOf(admin: AdminApi, op: Operator): ConsoleContext {
  return { operator: op, admin, csrfToken: CSRF, pendingCount: 0 };
}

export function pageAt(path: string): ConsolePage {
  const page = CONSOLE_PAGES.find((p) => p.path === path);
  if (!page) throw new Error(`no console page ${path}`);
  return page;
}

export function actionAt(path: string): ConsoleAction {
  const action = CONSOLE_ACTIONS.find((a) => a.path === path);
  if (!action) throw new Error(`no console action ${path}`);
  return action;
}

export function downloadAt(path: string): ConsoleDownload {
  const d = CONSOLE_DOWNLOADS.find((x) => x.path === path);
  if (!d) throw new Error(`no console download ${path}`);
  return d;
}

/** Renders as the shell would after its role check (which refuses, as the shell's 403 would). */
export async function render(
  admin: AdminApi,
  op: Operator,
  path: string,
  params: Record<string, string> = {},
  query: Record<string, string> = {},
): Promise<string> {
  const page = pageAt(path);
  if (!page.roles.some((r) => op.roles.includes(r))) {
    throw Object.assign(new Error(`403: ${op.id} may not open ${path}`), { status: 403 });
  }
  return toHtmlString(await page.render(contextOf(admin, op), params, query));
}

/** Every `<form method="post">` target in a rendered page. */
export function postTargets(text: string): string[] {
  return [...text.matchAll(/<form method="post" action="([^"]*)"/g)].map((m) => m[1] ?? '');
}
