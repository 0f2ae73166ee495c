/**
 * @module The frame of every console page: the header with the pending count and the navigation
 * the operator's roles allow, the flash message, the one stylesheet and the one script.
 */
import { holdsAny, type Operator, type OperatorRole } from '../../api/index.js';
import { CONSOLE_ICON, CONSOLE_SCRIPT, CONSOLE_STYLE } from './assets.js';
import { type Html, html } from './html.js';

export interface NavEntry {
  readonly path: string;
  readonly label: string;
  readonly roles: readonly OperatorRole[];
}

export interface Frame {
  readonly operator: Operator;
  readonly csrfToken: string;
  /** Null: the operator may not read the inbox, and the header shows no inbox link. */
  readonly pendingCount: number | null;
  readonly nav: readonly NavEntry[];
  readonly here: string;
  readonly flash?: string | undefined;
}

export function document(title: string, body: Html): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · toolgate console</title>
<link rel="icon" href="${CONSOLE_ICON.path}" type="image/svg+xml">
<link rel="stylesheet" href="${CONSOLE_STYLE.path}">
<script src="${CONSOLE_SCRIPT.path}" defer></script>
</head>
<body>
${body}
</body>
</html>
`;
}

/** The inbox with its pending count, for an operator who may read it (none for an owner). */
function inboxLink(frame: Frame): Html | '' {
  if (frame.pendingCount === null) return '';
  return html`<a href="/console/inbox" class="${frame.here === '/inbox' ? 'here' : ''}">Inbox <span class="badge" id="pending-count">${frame.pendingCount}</span></a>`;
}

export function page(frame: Frame, title: string, content: Html): Html {
  const allowed = frame.nav.filter((n) => holdsAny(frame.operator, n.roles));
  const links = allowed.map(
    (n) =>
      html`<a href="/console${n.path}" class="${n.path === frame.here ? 'here' : ''}">${n.label}</a>`,
  );
  return document(
    title,
    html`<header>
<span class="brand">toolgate</span>
<nav>${inboxLink(frame)}${links}</nav>
<span class="who">${frame.operator.name} (${frame.operator.roles.join(', ')})</span>
<form method="post" action="/console/logout"><input type="hidden" name="_csrf" value="${frame.csrfToken}"><button class="link" type="submit">Log out</button></form>
</header>
<main>
${frame.flash ? html`<div class="flash" role="status">${frame.flash}</div>` : ''}
<h1>${title}</h1>
${content}
</main>`,
  );
}

/** Time left until `expiresAt`, as the page first shows it (the script keeps it current). */
export function timeLeft(expiresAt: string, now: Date): Html {
  const ms = Date.parse(expiresAt) - now.getTime();
  let text = 'expired';
  if (ms > 0) {
    const m = Math.floor(ms / 60000);
    const h = Math.floor(m / 60);
    const d = Math.floor(h / 24);
    text = d > 0 ? `${d}d ${h % 24}h` : h > 0 ? `${h}h ${m % 60}m` : `${m}m`;
  }
  return html`<span data-expires="${expiresAt}">${text}</span>`;
}
