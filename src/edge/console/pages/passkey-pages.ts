/**
 * @module Passkeys: the signed-in operator's own passkeys (name, when enrolled and last used),
 * enrolling another — the console's script runs `navigator.credentials.create` and the form
 * carries its answer, with a current TOTP code (or, without a TOTP, an assertion of an existing
 * passkey) — and removing one (docs/architecture.md §6, "Passkeys bound to the decision"). Every
 * operator has this page (`operators.self`); an admin removes another's through the CLI or REST.
 */
import { rolesOf } from '../../../api/index.js';
import type { ConsoleAction, ConsoleContext, ConsolePage } from '../console-page.js';
import { type Html, html } from '../html.js';
import { consolePath, csrfField, table } from './page-kit.js';

async function enrolForm(ctx: ConsoleContext, count: number): Promise<Html> {
  const totp = await ctx.admin.secondFactor.enrolled(ctx.operator.id);
  if (!totp && count === 0) {
    return html`<p class="muted" id="passkey-none">Enrolling a passkey needs a current second factor, and your account has none: an admin enrols a TOTP for you first.</p>`;
  }
  return html`<form method="post" action="/console/passkeys/enrol" id="enrol-form">${csrfField(ctx)}
<label for="passkey-name">Name (which device or key)</label><input type="text" id="passkey-name" name="name" maxlength="64">
${totp ? html`<label for="totp">Your TOTP code (proves it is you adding a factor)</label><input type="text" id="totp" name="totp" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}">` : html`<p class="muted">One of your passkeys confirms it is you first.</p>`}
<button type="button" id="enrol-passkey" data-passkey="enrol"${totp ? '' : html` data-step-up="passkey"`}>Enrol a passkey</button>
</form>`;
}

export const passkeysPage: ConsolePage = {
  path: '/passkeys',
  title: 'Passkeys',
  nav: 'Passkeys',
  action: 'operators.self',
  roles: rolesOf('operators.self'),
  async render(ctx) {
    const passkeys = await ctx.admin.passkeys.list(ctx.operator.id);
    const rows = passkeys.map((p) => [
      html`<span class="passkey-name">${p.name}</span>`,
      html`<code>${p.credential_id.slice(0, 16)}…</code>`,
      p.created_at,
      p.last_used_at ?? '—',
      html`<form method="post" action="${consolePath(['passkeys', p.credential_id, 'remove'])}" data-confirm="Remove this passkey?">${csrfField(ctx)}<button class="reject">Remove</button></form>`,
    ]);
    return html`<p>A passkey signs each decision you make: the browser's challenge commits to the approval or change, its tool, version and exact arguments, so your assertion cannot be replayed or relayed to another decision. It also signs you in after your password, instead of the code.</p>
<div id="passkeys">${rows.length === 0 ? html`<p class="empty">You have no passkey.</p>` : table(['Name', 'Credential', 'Enrolled', 'Last used', ''], rows)}</div>
<h2>Enrol a passkey</h2>
${await enrolForm(ctx, passkeys.length)}`;
  },
};

export const passkeyEnrolAction: ConsoleAction = {
  path: '/passkeys/enrol',
  action: 'operators.self',
  roles: rolesOf('operators.self'),
  async handle(ctx, _params, form) {
    const stepUp = form.step_up ?? '';
    await ctx.admin.passkeys.register(
      ctx.operator,
      {
        credential: form.credential ?? '',
        ...(form.name !== undefined ? { name: form.name } : {}),
        ...(form.totp !== undefined && form.totp !== '' ? { totp: form.totp } : {}),
        ...(stepUp !== '' ? { stepUp } : {}),
      },
      'console',
    );
    return { redirect: '/passkeys', flash: 'Passkey enrolled.' };
  },
};

export const passkeyRemoveAction: ConsoleAction = {
  path: '/passkeys/:credential/remove',
  action: 'operators.self',
  roles: rolesOf('operators.self'),
  async handle(ctx, params) {
    await ctx.admin.passkeys.remove(
      ctx.operator,
      ctx.operator.id,
      params.credential ?? '',
      'console',
    );
    return { redirect: '/passkeys', flash: 'Passkey removed.' };
  },
};
