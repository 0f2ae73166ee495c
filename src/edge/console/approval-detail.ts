/**
 * @module An approval's detail, rendered from the resolved call the gate stored (literal
 * arguments after policy resolution, destination hosts, the conditions that asked for approval,
 * who asked, the time left) — never from the model's description of it; and the forms and
 * actions that approve (with TOTP where the action class needs a step-up) or reject (with a
 * reason). Four-eyes changes get the same.
 */
import { rolesOf } from '../../api/index.js';
import { argumentsText, problem, ToolgateError } from '../../core/index.js';
import { revokeScopeForm, scopeFieldset, scopeOfForm, scopeRow } from './approval-scope.js';
import { costRow, previewSection, reasonsRow } from './call-reasons.js';
import { changeSubject } from './change-subject.js';
import type { ConsoleAction, ConsoleContext } from './console-page.js';
import { type Html, html } from './html.js';
import { timeLeft } from './layout.js';

export async function renderApproval(ctx: ConsoleContext, id: string, now: Date): Promise<Html> {
  const a = await ctx.admin.approvals.get(id);
  const r = a.rendered;
  // The registry's description of the tool: text its author wrote, shown as text like the rest.
  const description = await ctx.admin.catalog
    .get(a.tool_id, a.tool_version)
    .then((t) => t.description)
    .catch(() => null);
  const decidable = a.status === 'pending';
  const mayDecide = ctx.admin.operators.authority.can(ctx.operator, 'approvals.decide');
  const hidden = html`<input type="hidden" name="_csrf" value="${ctx.csrfToken}">`;
  const forms =
    a.status === 'withdrawn'
      ? html`<p class="muted">Withdrawn: <strong>${a.reason ?? 'its run ended'}</strong>${a.decided_at ? html` at ${a.decided_at}` : ''}. No retry can use it, so it cannot be decided.</p>`
      : !decidable
        ? html`<p class="muted">Decided: <strong>${a.status}</strong>${a.decided_by ? html` by <code>${a.decided_by}</code>` : ''}${a.decided_at ? html` at ${a.decided_at}` : ''}${a.reason ? html` — ${a.reason}` : ''}</p>`
        : !mayDecide
          ? html`<p class="muted">Only an approver can decide this call.</p>`
          : html`<div class="actions">
<form method="post" action="/console/approvals/${encodeURIComponent(a.id)}/approve" id="approve-form">
${hidden}
${a.second_factor ? html`<label for="totp">Your TOTP code (this action class needs a step-up)</label><input type="text" id="totp" name="totp" inputmode="numeric" autocomplete="one-time-code" required pattern="[0-9]{6}">` : ''}
${scopeFieldset(a)}
<button type="submit" id="approve">Approve this exact call</button>
${passkeyButton('approval', a.id)}
</form>
<form method="post" action="/console/approvals/${encodeURIComponent(a.id)}/reject" id="reject-form">
${hidden}
<label for="reason">Reason (required)</label>
<textarea id="reason" name="reason" required rows="2" maxlength="1000"></textarea>
<button type="submit" class="reject" id="reject">Reject</button>
</form>
</div>`;
  return html`<dl id="approval">
<dt>Tool</dt><dd><code id="tool">${r.tool}</code> version <code>${r.version}</code></dd>
<dt>Action class</dt><dd class="class-${r.action_class}">${r.action_class}</dd>
<dt>Registered description</dt><dd id="description">${description ?? html`<span class="muted">unknown</span>`}</dd>
<dt>Status</dt><dd>${a.status}</dd>
<dt>Agent</dt><dd><code>${a.agent_id}</code></dd>
<dt>User</dt><dd><code>${a.user_id ?? '—'}</code></dd>
<dt>Session</dt><dd><code>${a.session_id}</code></dd>
<dt>Asked at</dt><dd>${a.created_at}</dd>
<dt>Time left</dt><dd>${decidable ? timeLeft(a.expires_at, now) : '—'}</dd>
<dt>Destination hosts</dt><dd id="hosts">${r.destination_hosts.length === 0 ? html`<span class="muted">none</span>` : r.destination_hosts.map((h) => html`<div><code>${h}</code></div>`)}</dd>
${reasonsRow(r)}
${costRow(r)}
<dt>Step-up</dt><dd>${a.second_factor ? 'TOTP required' : 'none'}${a.out_of_band ? ' · out-of-band only' : ''}</dd>
${scopeRow(a)}
</dl>
<h2>Arguments, as resolved by the gate</h2>
<pre id="arguments">${argumentsText(r.arguments)}</pre>
${previewSection(r)}
${forms}
${mayDecide ? revokeScopeForm(a, hidden) : ''}`;
}

export async function renderChange(ctx: ConsoleContext, id: string): Promise<Html> {
  const c = await ctx.admin.changes.get(id);
  const hidden = html`<input type="hidden" name="_csrf" value="${ctx.csrfToken}">`;
  const mayDecide = ctx.admin.operators.authority.can(ctx.operator, 'approvals.decide');
  const forms =
    c.status !== 'pending'
      ? html`<p class="muted">Decided: <strong>${c.status}</strong>${c.decided_at ? html` at ${c.decided_at}` : ''}</p>`
      : !mayDecide
        ? html`<p class="muted">Only an approver can decide this change.</p>`
        : html`<div class="actions">
<form method="post" action="/console/changes/${encodeURIComponent(c.id)}/approve" id="approve-form">
${hidden}
<label for="totp">Your TOTP code</label><input type="text" id="totp" name="totp" inputmode="numeric" autocomplete="one-time-code" required pattern="[0-9]{6}">
<button type="submit" id="approve">Approve</button>
${passkeyButton('change', c.id)}
</form>
<form method="post" action="/console/changes/${encodeURIComponent(c.id)}/reject" id="reject-form">
${hidden}
<label for="reason">Reason (required)</label>
<textarea id="reason" name="reason" required rows="2" maxlength="1000"></textarea>
<button type="submit" class="reject" id="reject">Reject</button>
</form>
</div>`;
  return html`<dl id="change">
<dt>Kind</dt><dd>${c.kind}</dd>
<dt>Subject</dt><dd><code>${c.subject}</code></dd>
<dt>Why</dt><dd>${c.reason}</dd>
<dt>Requested by</dt><dd><code>${c.requested_by}</code></dd>
<dt>Asked at</dt><dd>${c.created_at}</dd>
<dt>Approvals</dt><dd>${c.approvers.length} of ${c.required}${c.approvers.map((a) => html` <code>${a}</code>`)}</dd>
<dt>Status</dt><dd>${c.status}</dd>
</dl>
${await changeSubject(ctx, c)}
${forms}`;
}

/**
 * Approving with a passkey instead of the code: the console's script asks for options whose
 * challenge commits to exactly this decision, and sends the form with the answer in `passkey`.
 */
function passkeyButton(kind: 'approval' | 'change', id: string): Html {
  return html`<button type="button" class="secondary" id="approve-passkey" data-passkey="decide" data-kind="${kind}" data-id="${id}">Approve with your passkey</button>`;
}

/** The passkey's answer the script put in the form, if any (checked by the desk). */
function passkeyOf(form: Readonly<Record<string, string>>): { passkey?: string } {
  const passkey = form.passkey ?? '';
  return passkey !== '' ? { passkey } : {};
}

function reasonOf(form: Readonly<Record<string, string>>): string {
  const reason = (form.reason ?? '').trim();
  if (reason.length === 0 || reason.length > 1000)
    throw new ToolgateError('INPUT_INVALID', 'a rejection needs a reason (up to 1000 characters)', {
      problems: [problem('/reason', 'is required', 'console.reason')],
    });
  return reason;
}

function totpOf(form: Readonly<Record<string, string>>): string | undefined {
  const code = (form.totp ?? '').trim();
  return code.length > 0 ? code : undefined;
}

/** What an approval's page says once approved: one call, or the scope's calls. */
function approvedFlash(decided: unknown): string {
  return (decided as { scope?: unknown } | null)?.scope
    ? 'Approved with a scope: the calls it covers run without waiting, within its bounds.'
    : 'Approved. The agent’s retry runs once.';
}

/**
 * Decisions recorded as the console session's operator (`operator:<id>` via `console`), never a
 * name the form states: the form has no field for one.
 */
export function decisionActions(): readonly ConsoleAction[] {
  /** One approver-only decision on `/<kind>/:id/<verb>`, back to the item's page with a flash. */
  const decision = (
    kind: 'approvals' | 'changes',
    verb: 'approve' | 'reject' | 'revoke-scope',
    flash: string | ((decided: unknown) => string),
    decide: (
      ctx: ConsoleContext,
      id: string,
      form: Readonly<Record<string, string>>,
    ) => Promise<unknown>,
  ): ConsoleAction => ({
    path: `/${kind}/:id/${verb}`,
    action: 'approvals.decide',
    roles: rolesOf('approvals.decide'),
    async handle(ctx, params, form) {
      const id = params.id ?? '';
      const decided = await decide(ctx, id, form);
      const said = typeof flash === 'string' ? flash : flash(decided);
      return { redirect: `/${kind}/${encodeURIComponent(id)}`, flash: said };
    },
  });
  return [
    decision('approvals', 'approve', approvedFlash, (ctx, id, form) => {
      const totp = totpOf(form);
      const scope = scopeOfForm(form);
      return ctx.admin.approvals.approve(id, ctx.operator, {
        ...(totp ? { totp } : {}),
        ...passkeyOf(form),
        ...(scope ? { scope } : {}),
        via: 'console',
      });
    }),
    decision(
      'approvals',
      'revoke-scope',
      'Scope revoked: its next call waits again.',
      (ctx, id, form) =>
        ctx.admin.approvals.revokeScope(id, ctx.operator, reasonOf(form), 'console'),
    ),
    decision('approvals', 'reject', 'Rejected.', (ctx, id, form) =>
      ctx.admin.approvals.reject(id, ctx.operator, reasonOf(form), 'console'),
    ),
    decision('changes', 'approve', 'Your approval is recorded.', (ctx, id, form) =>
      ctx.admin.changes.approve(id, ctx.operator, totpOf(form), 'console', passkeyOf(form)),
    ),
    decision('changes', 'reject', 'Rejected.', (ctx, id, form) =>
      ctx.admin.changes.reject(id, ctx.operator, reasonOf(form), 'console'),
    ),
  ];
}
