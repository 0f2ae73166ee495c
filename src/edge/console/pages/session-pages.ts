/**
 * @module Live sessions, newest first, with what each has used; an admin suspends one (its later
 * calls are refused) or closes it. Both actions are recorded with the operator who took them.
 */
import { operatorActor, rolesOf } from '../../../api/index.js';
import type { LiveSession } from '../../../domain/sessions/index.js';
import type { ConsoleAction, ConsoleContext, ConsolePage } from '../console-page.js';
import { type Html, html } from '../html.js';
import {
  consolePath,
  csrfField,
  link,
  mayAct,
  pageRequest,
  pager,
  redirectPath,
  requireAction,
  table,
} from './page-kit.js';

function sessionForms(ctx: ConsoleContext, s: LiveSession): Html {
  if (!mayAct(ctx, 'administer')) return html``;
  const form = (verb: 'suspend' | 'close', label: string) =>
    html`<form method="post" action="${consolePath(['sessions', s.id, verb])}">${csrfField(ctx)}<input name="reason" placeholder="reason"> <button>${label}</button></form>`;
  return html`${s.suspended ? html`` : form('suspend', 'Suspend')}${form('close', 'Close')}`;
}

export const sessionsPage: ConsolePage = {
  path: '/sessions',
  title: 'Live sessions',
  nav: 'Sessions',
  action: 'state.read',
  roles: rolesOf('state.read'),
  async render(ctx, _params, query) {
    const page = await ctx.admin.sessions.live(pageRequest(query));
    return html`<h1>Live sessions</h1>${table(
      ['Session', 'Agent', 'User', 'Run', 'Opened', 'Expires', 'Tools', 'State', 'Used', ''],
      page.items.map((s) => [
        link(consolePath(['sessions', s.id]), html`<code>${s.id}</code>`),
        s.agent_id,
        s.user_id ?? '',
        s.run_id,
        s.created_at,
        s.expires_at,
        s.tools.map((t) => `${t.id}@${t.version}`).join(', '),
        s.suspended ? 'suspended' : 'open',
        `${s.external_sends} sends, ${s.egress_bytes} egress bytes${s.private_data_read ? ', read private data' : ''}`,
        sessionForms(ctx, s),
      ]),
    )}${pager(['sessions'], {}, page.next_cursor)}`;
  },
};

export const sessionPage: ConsolePage = {
  path: '/sessions/:id',
  title: 'Session',
  action: 'state.read',
  roles: rolesOf('state.read'),
  async render(ctx, params) {
    const s = await ctx.admin.sessions.inspect(params.id ?? '');
    return html`<h1>Session <code>${s.id}</code></h1>
<p>Agent ${s.agent_id}${s.user_id ? ` for ${s.user_id}` : ''} · run ${s.run_id} · ${s.status}${s.suspended ? ', suspended' : ''} · opened ${s.created_at}, expires ${s.expires_at}</p>
<h2>Tools offered</h2>${table(
      ['Name', 'Tool', 'Version'],
      s.tools.map((t) => [t.name, link(consolePath(['catalog', t.id]), t.id), t.version]),
    )}
<h2>Withheld, and why</h2>${table(
      ['Tool', 'Version', 'Reason'],
      s.withheld.map((w) => [w.id, w.version, w.reason]),
    )}`;
  },
};

function reasonOf(form: Readonly<Record<string, string>>, verb: string): string {
  const given = (form.reason ?? '').trim();
  return given === '' ? `${verb} from the console` : given;
}

export const suspendSessionAction: ConsoleAction = {
  path: '/sessions/:id/suspend',
  action: 'administer',
  roles: rolesOf('administer'),
  async handle(ctx, params, form) {
    await requireAction(ctx, 'administer', 'suspending a session');
    const id = params.id ?? '';
    const changed = await ctx.admin.sessions.suspendBy(
      id,
      operatorActor(ctx.operator, 'console'),
      reasonOf(form, 'suspended'),
    );
    return {
      redirect: redirectPath(['sessions']),
      flash: changed ? `session ${id} suspended` : `session ${id} was already suspended`,
    };
  },
};

export const closeSessionAction: ConsoleAction = {
  path: '/sessions/:id/close',
  action: 'administer',
  roles: rolesOf('administer'),
  async handle(ctx, params, form) {
    await requireAction(ctx, 'administer', 'closing a session');
    const id = params.id ?? '';
    await ctx.admin.sessions.closeBy(
      id,
      operatorActor(ctx.operator, 'console'),
      reasonOf(form, 'closed'),
    );
    return { redirect: redirectPath(['sessions']), flash: `session ${id} closed` };
  },
};
