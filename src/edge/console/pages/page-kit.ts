/**
 * @module What the console's pages share: who may see which tools and act on them (checked again
 * on the server for every action, never only by hiding a form), the hidden CSRF field, links with
 * their query escaped, tables, JSON shown as text, and the cursor pager. Everything is built with
 * `html`, so every value stays text.
 */

import type { OperatorAction } from '../../../api/index.js';
import type { PageKey, PageRequest } from '../../../core/index.js';
import { pageOf, ToolgateError } from '../../../core/index.js';
import type { ConsoleContext } from '../console-page.js';
import { type Html, type HtmlValue, html } from '../html.js';

/**
 * The teams whose tools the catalog pages show this operator, or null for all: readers see the
 * whole catalog, an operator holding only `owner` its teams' (the authority's `catalog.browse`).
 */
export function catalogScope(ctx: ConsoleContext): readonly string[] | null {
  return ctx.admin.operators.authority.teamScope(ctx.operator, 'catalog.browse');
}

/** Whether the operator may see a tool of this owner: readers all, an owner its own teams'. */
export function seesTool(ctx: ConsoleContext, owner: string): boolean {
  return ctx.admin.operators.authority.reaches(ctx.operator, 'catalog.browse', owner);
}

/** Whether the operator may take an action (shows its form); the authority decides. */
export function mayAct(ctx: ConsoleContext, action: OperatorAction): boolean {
  return ctx.admin.operators.authority.can(ctx.operator, action);
}

/**
 * The server-side check of an action by the operator authority: FORBIDDEN (audited by the
 * authority), and nothing changed.
 */
export function requireAction(
  ctx: ConsoleContext,
  action: OperatorAction,
  what: string,
): Promise<void> {
  return ctx.admin.operators.authority.enforce(ctx.operator, action, { via: 'console', what });
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
  // Review and audit pages: `html` shows every invisible or control character as an escape.
  return html`<pre class="json">${text}</pre>`;
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
