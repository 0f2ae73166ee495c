/**
 * @module The console's scoped approvals (docs/operators-and-approvals.md, "Scoped approvals"): the
 * labelled option on an approval's page — offered only where the desk would grant one, with the
 * binding and the bounds in plain words before submit — the scope an approval was given with,
 * what is used of it, and the form that revokes it. The desk checks everything again.
 */
import type { ApprovalView } from '../../api/index.js';
import { type ScopeRequest, scopeRefusalOf, scopeWords } from '../../api/index.js';
import { problem, ToolgateError } from '../../core/index.js';
import { type Html, html } from './html.js';

/** Why the page offers no scope, in words (null: it offers one). */
function notOffered(a: ApprovalView): string | null {
  switch (
    scopeRefusalOf({ action_class: a.action_class, out_of_band: a.out_of_band ? 1 : 0 }, a.rendered)
  ) {
    case 'action_class':
      return `a ${a.action_class} call is approved one call at a time`;
    case 'out_of_band':
      return 'this call is approved out of band only';
    case 'escalated':
      return 'this call waits because untrusted content reached its run';
    case 'not_bindable':
      return 'this request was recorded before scopes';
    case null:
      return null;
  }
}

/** The scope option inside the approve form, or a line saying why there is none. */
export function scopeFieldset(a: ApprovalView): Html {
  const why = notOffered(a);
  if (why !== null) return html`<p class="muted" id="scope-unavailable">No scope: ${why}.</p>`;
  const destinations = a.rendered.destination_values ?? [];
  const words = scopeWords({
    calls: 10,
    amount_cents: null,
    until: 'the time you choose',
    destinations,
  });
  return html`<fieldset id="scope-option"><legend>Or approve with a scope</legend>
<label><input type="checkbox" id="scope" name="scope" value="on"> Approve a bounded scope instead of this one call</label>
<p id="scope-words">With a scope, later calls of <code>${a.tool_id}@${a.tool_version}</code> by this agent${a.user_id ? html` for <code>${a.user_id}</code>` : ''} in this run run without waiting: ${words.replace('up to 10 calls', 'up to the calls below')}. Each still passes every other rule and is charged to the run's budgets and the agent's ceilings; any other destination, tool, version or run waits. You can revoke it here.</p>
<label for="scope-calls">Calls, this one included (2–100)</label><input type="number" id="scope-calls" name="scope_calls" min="2" max="100" value="10">
<label for="scope-amount">At most this many cents in all (optional)</label><input type="number" id="scope-amount" name="scope_amount_cents" min="0">
<label for="scope-minutes">For this many minutes (1–1440)</label><input type="number" id="scope-minutes" name="scope_minutes" min="1" max="1440" value="15">
${a.second_factor ? '' : html`<label for="scope-totp">Your TOTP code (a scope needs your second factor, or approve with your passkey)</label><input type="text" id="scope-totp" name="totp" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}">`}
</fieldset>`;
}

/** The "Scope" row of an approval given with one: the bounds in words and what is used. */
export function scopeRow(a: ApprovalView): Html | string {
  const s = a.scope;
  if (!s) return '';
  const amount =
    s.amount_cents === null ? '' : `, ${s.amount_used_cents} of ${s.amount_cents} cents`;
  return html`<dt>Scope</dt><dd id="scope-view"><strong>${s.status}</strong>: ${scopeWords(s)} — ${s.calls_used} of ${s.calls} calls used${amount}; granted by <code>${s.granted_by}</code>${s.revoked_by ? html`; revoked by <code>${s.revoked_by}</code>: ${s.revoke_reason ?? ''}` : ''}</dd>`;
}

/** The form that revokes a live scope. */
export function revokeScopeForm(a: ApprovalView, hidden: Html): Html | string {
  if (a.scope?.status !== 'active') return '';
  return html`<form method="post" action="/console/approvals/${encodeURIComponent(a.id)}/revoke-scope" id="revoke-scope-form">
${hidden}
<label for="revoke-reason">Why revoke the scope (required)</label>
<textarea id="revoke-reason" name="reason" required rows="2" maxlength="1000"></textarea>
<button type="submit" class="reject" id="revoke-scope">Revoke the scope</button>
</form>`;
}

function count(form: Readonly<Record<string, string>>, name: string): number | undefined {
  const text = (form[name] ?? '').trim();
  if (text === '') return undefined;
  if (![...text].every((c) => c >= '0' && c <= '9') || text.length > 12)
    throw new ToolgateError('INPUT_INVALID', `${name} must be a whole number`, {
      problems: [problem(`/${name}`, 'must be a whole number', 'console.scope')],
    });
  return Number(text);
}

/**
 * The scope the form asks for, or undefined when its box is not ticked. A passkey's form carries
 * the exact `until` its assertion signed (`scope_until`); else the minutes, which the desk turns
 * into a time by its clock.
 */
export function scopeOfForm(form: Readonly<Record<string, string>>): ScopeRequest | undefined {
  if (form.scope !== 'on') return undefined;
  const amount = count(form, 'scope_amount_cents');
  const until = (form.scope_until ?? '').trim();
  return {
    calls: count(form, 'scope_calls') ?? 0,
    ...(amount !== undefined ? { amount_cents: amount } : {}),
    ...(until !== '' ? { until } : { minutes: count(form, 'scope_minutes') ?? 0 }),
  };
}
