/**
 * @module The approvals inbox: pending call approvals, pending four-eyes changes (grant
 * requests among them) and definitions waiting for a security review in one list, newest first, walked by the keyset (created_at, id) across
 * every source at once — never by offset, so 10,000 pending items page as fast as ten.
 */
import type { AdminApi } from '../../api/index.js';
import { decodeCursor, encodeCursor, type PageKey } from '../../core/index.js';
import { type Html, html } from './html.js';
import { timeLeft } from './layout.js';

export interface InboxItem {
  readonly kind: 'approval' | 'change' | 'review';
  readonly id: string;
  readonly createdAt: string;
  readonly href: string;
  /** Tool and version, or what the change is about. */
  readonly subject: string;
  readonly actionClass: string;
  /** Who asked: agent, user and session of a call; the requesting operator of a change. */
  readonly askedBy: readonly (readonly [string, string])[];
  readonly expiresAt: string | null;
}

/** One kind of pending work: up to `limit` items strictly older than `before` (newest first). */
export interface InboxSource {
  page(before: PageKey | undefined, limit: number): Promise<readonly InboxItem[]>;
  count(): Promise<number>;
}

export function approvalSource(admin: AdminApi): InboxSource {
  return {
    async page(before, limit) {
      const cursor = before ? encodeCursor('approvals', before) : undefined;
      const page = await admin.approvals.page('pending', {
        limit,
        ...(cursor ? { cursor } : {}),
      });
      return page.items.map((a) => ({
        kind: 'approval' as const,
        id: a.id,
        createdAt: a.created_at,
        href: `/console/approvals/${encodeURIComponent(a.id)}`,
        subject: `${a.tool_id}@${a.tool_version}`,
        actionClass: a.action_class,
        askedBy: [
          ['agent', a.agent_id],
          ['user', a.user_id ?? '—'],
          ['session', a.session_id],
        ] as const,
        expiresAt: a.expires_at,
      }));
    },
    count: () => admin.approvals.countPending(),
  };
}

export function changeSource(admin: AdminApi): InboxSource {
  return {
    async page(before, limit) {
      const cursor = before ? encodeCursor('changes', before) : undefined;
      const page = await admin.changes.page('pending', { limit, ...(cursor ? { cursor } : {}) });
      return page.items.map((c) => ({
        kind: 'change' as const,
        id: c.id,
        createdAt: c.created_at,
        href: `/console/changes/${encodeURIComponent(c.id)}`,
        subject: c.subject,
        actionClass: `four eyes: ${c.approvers.length}/${c.required}`,
        askedBy: [['requested by', c.requested_by]] as const,
        expiresAt: null,
      }));
    },
    count: () => admin.changes.countPending(),
  };
}

/**
 * Drafts waiting for a security review. The reviews' keyset is (registered_at, id), the same
 * shape as the inbox's (created_at, id), so the merged cursor maps onto it directly.
 */
export function reviewSource(admin: AdminApi): InboxSource {
  return {
    async page(before, limit) {
      const cursor = before ? encodeCursor('reviews', before) : undefined;
      const page = await admin.reviews.page('pending', { limit, ...(cursor ? { cursor } : {}) });
      return page.items.map((r) => ({
        kind: 'review' as const,
        id: r.id,
        createdAt: r.registered_at,
        href: `/console/reviews/${encodeURIComponent(r.id)}`,
        subject: `${r.tool_id}@${r.version}`,
        actionClass: `security review: ${r.access_tier}, ${r.provenance}`,
        askedBy: [['registered by', r.registered_by]] as const,
        expiresAt: null,
      }));
    },
    count: () => admin.reviews.countPending(),
  };
}

export interface InboxPage {
  readonly items: readonly InboxItem[];
  readonly nextCursor: string | null;
}

function newerFirst(a: InboxItem, b: InboxItem): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? 1 : -1;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** One page over every source: each gives its newest `limit + 1` below the cursor, merged. */
export async function inboxPage(
  sources: readonly InboxSource[],
  cursor: string | undefined,
  limit: number,
): Promise<InboxPage> {
  const before = cursor ? decodeCursor('inbox', cursor) : undefined;
  const parts = await Promise.all(sources.map((s) => s.page(before, limit + 1)));
  const merged = parts.flat().sort(newerFirst);
  const items = merged.slice(0, limit);
  const last = items.at(-1);
  return {
    items,
    nextCursor:
      merged.length > limit && last ? encodeCursor('inbox', [last.createdAt, last.id]) : null,
  };
}

export async function pendingCount(sources: readonly InboxSource[]): Promise<number> {
  return (await Promise.all(sources.map((s) => s.count()))).reduce((a, b) => a + b, 0);
}

export function inboxTable(page: InboxPage, now: Date): Html {
  if (page.items.length === 0) return html`<p class="muted">Nothing waits for a decision.</p>`;
  const rows = page.items.map(
    (item) => html`<tr data-id="${item.id}">
<td><span class="kind">${item.kind}</span></td>
<td><a href="${item.href}">${item.subject}</a></td>
<td class="class-${item.actionClass.replace(/[^a-z_]/g, '')}">${item.actionClass}</td>
<td>${item.askedBy.map(([k, v]) => html`<div><span class="muted">${k}</span> <code>${v}</code></div>`)}</td>
<td>${item.createdAt}</td>
<td>${item.expiresAt ? timeLeft(item.expiresAt, now) : html`<span class="muted">—</span>`}</td>
</tr>`,
  );
  return html`<table id="inbox">
<thead><tr><th>Kind</th><th>Tool / change</th><th>Action class</th><th>Who asked</th><th>Asked at</th><th>Time left</th></tr></thead>
<tbody>${rows}</tbody>
</table>
${page.nextCursor ? html`<p class="pager"><a id="next-page" href="/console/inbox?cursor=${encodeURIComponent(page.nextCursor)}">Older →</a></p>` : ''}`;
}
