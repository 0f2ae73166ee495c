/**
 * @module What the console's pages share: who may see which tools and act on them (checked again
 * on the server for every action, never only by hiding a form), the hidden CSRF field, links with
 * their query escaped, tables, JSON shown as text, and the cursor pager. Everything is built with
 * `html`, so every value stays text.
 */

import type { PageKey, PageRequest } from '../../../core/index.js';
import { pageOf, ToolgateError, visibleEscapes } from '../../../core/index.js';
import { hasRole, type Operator, type OperatorRole } from '../../../domain/operators/index.js';
import type { ConsoleContext } from '../console-page.js';
import { type Html, type HtmlValue, html } from '../html.js';

/** Roles that read the whole catalog; an operator holding only `owner` sees its teams' tools. */
const CATALOG_READERS: readonly OperatorRole[] = ['admin', 'auditor', 'approver'];

export function seesWholeCatalog(op: Operator): boolean {
  return CATALOG_READERS.some((r) => hasRole(op, r));
}

/** Whether the operator may see a tool of this owner: readers all, an owner its own teams'. */
export function seesTool(op: Operator, owner: string): boolean {
  return seesWholeCatalog(op) || (hasRole(op, 'owner') && op.teams.includes(owner));
}

/** Whether the operator holds any of the roles of an action (shows its form). */
export function mayAct(op: Operator, roles: readonly OperatorRole[]): boolean {
  return roles.some((r) => hasRole(op, r));
}

/** The server-side check of an action's roles: FORBIDDEN, and nothing changed. */
export function requireRole(op: Operator, roles: readonly OperatorRole[], what: string): void {
  if (!mayAct(op, roles)) {
    throw new ToolgateError('FORBIDDEN', `${what} needs the role ${roles.join(' or ')}`, {});
  }
}

/** The hidden field every form carries; the shell checks it before any action runs. */
export function csrfField(ctx: ConsoleContext): Html {
  return html`<input type="hidden" name="_csrf" value="${ctx.csrfToken}">`;
}

/** A path under /console with its segments and query encoded (values are attacker text). */
export function consolePath(
  segments: readonly string[],
  query: Readonly<Record<string, string | undefined>> = {},
): string {
  const path = `/console/${segments.map((s) => encodeURIComponent(s)).join('/')}`;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') params.set(k, v);
  const text = params.toString();
  return text === '' ? path : `${path}?${text}`;
}

/**
 * Where an action sends the browser: the same path relative to /console, as the contract's page
 * and action paths are (`/catalog/x`, not `/console/catalog/x`).
 */
export function redirectPath(
  segments: readonly string[],
  query: Readonly<Record<string, string | undefined>> = {},
): string {
  return consolePath(segments, query).slice('/console'.length);
}

export function link(href: string, text: HtmlValue): Html {
  return html`<a href="${href}">${text}</a>`;
}

/** A table: a header row and one row per item, each cell any `HtmlValue`. */
export function table(headers: readonly string[], rows: readonly (readonly HtmlValue[])[]): Html {
  if (rows.length === 0) return html`<p class="empty">Nothing to show.</p>`;
  return html`<table><thead><tr>${headers.map((h) => html`<th>${h}</th>`)}</tr></thead><tbody>${rows.map(
    (r) => html`<tr>${r.map((c) => html`<td>${c}</td>`)}</tr>`,
  )}</tbody></table>`;
}

/** A value as indented JSON text in a `<pre>` (arguments and results are attacker-controlled). */
export function jsonBlock(value: unknown): Html {
  let text: string;
  try {
    text = JSON.stringify(value, null, 2) ?? 'null';
  } catch {
    text = String(value);
  }
  // Review and audit pages: bidi and zero-width characters as visible escapes, never raw.
  return html`<pre class="json">${visibleEscapes(text)}</pre>`;
}

/** "Next page" link for a cursor, keeping the page's other query values. */
export function pager(
  segments: readonly string[],
  query: Readonly<Record<string, string | undefined>>,
  nextCursor: string | null,
): Html {
  if (nextCursor === null) return html``;
  return html`<p class="pager">${link(consolePath(segments, { ...query, cursor: nextCursor }), 'Next page →')}</p>`;
}

/** A page request from the query string (limit checked by the list itself). */
export function pageRequest(query: Readonly<Record<string, string>>, limit = 50): PageRequest {
  const asked = query.limit !== undefined ? Number(query.limit) : limit;
  return { ...(query.cursor ? { cursor: query.cursor } : {}), limit: asked };
}

/** A cursor page of a list held in memory (tools, agents, providers). */
export function memoryPage<T>(
  list: string,
  items: readonly T[],
  keyOf: (item: T) => PageKey,
  query: Readonly<Record<string, string>>,
): { items: T[]; next_cursor: string | null } {
  return pageOf(list, items, keyOf, 'asc', pageRequest(query, 100));
}

/** A required, trimmed form field, or INPUT_INVALID naming it. */
export function requiredField(form: Readonly<Record<string, string>>, name: string): string {
  const value = (form[name] ?? '').trim();
  if (value === '') {
    throw new ToolgateError('INPUT_INVALID', `${name} is required`, {
      problems: [{ pointer: `/${name}`, message: 'must not be empty', rule: 'required' }],
    });
  }
  return value;
}
