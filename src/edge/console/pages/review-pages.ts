/**
 * @module The security review of one pending definition: what the reviewer must read (the stored
 * definition, shown as text; its hash, tier, provenance, the reasons it needs a review, who
 * registered it) and the approve / reject forms. The decision names the hash the page showed, so
 * a definition changed meanwhile is refused rather than approved unread; it is recorded as the
 * session's operator, and the reviewer rules (approver, not the registrant, not the owner team)
 * are the catalog's own. Approving takes the reviewer's TOTP code or their passkey, whose
 * challenge commits to this review, its definition hash and the verdict (docs/architecture.md §6).
 */

import { rolesOf } from '../../../api/index.js';
import type { ConsoleAction, ConsoleContext, ConsolePage } from '../console-page.js';
import { type Html, html } from '../html.js';
import {
  consolePath,
  csrfField,
  jsonBlock,
  mayAct,
  redirectPath,
  requireAction,
} from './page-kit.js';
import { toolFacts } from './tool-facts.js';

function decisionForms(
  ctx: ConsoleContext,
  id: string,
  definitionHash: string,
  pending: boolean,
): Html {
  if (!pending || !mayAct(ctx, 'approvals.decide')) return html``;
  // Everything that waits for a review is restricted, privileged or third-party code: its
  // approval needs the reviewer's second factor (a rejection does not).
  const totp = html`<label for="review-totp">Your TOTP code (approving makes a restricted, privileged or third-party tool callable)</label><input type="text" id="review-totp" name="totp" inputmode="numeric" autocomplete="one-time-code" required pattern="[0-9]{6}">`;
  // Or the reviewer's passkey: the script asks for options committing to this review and verdict.
  const passkey = html`<button type="button" class="secondary" id="review-approve-passkey" data-passkey="decide" data-kind="review" data-id="${id}" data-decision="approved">Approve with your passkey</button>`;
  const hash = html`<input type="hidden" name="definition_hash" value="${definitionHash}">`;
  return html`<section class="decide">
<form id="review-approve-form" method="post" action="${consolePath(['reviews', id, 'approve'])}">${csrfField(ctx)}${hash}
<label>Review notes <textarea id="review-notes" name="notes" required maxlength="4000"></textarea></label>
${totp}
<button id="review-approve" type="submit">Approve — it may go live</button>
${passkey}</form>
<form id="review-reject-form" method="post" action="${consolePath(['reviews', id, 'reject'])}">${csrfField(ctx)}${hash}
<label>Why not <textarea id="review-reason" name="notes" required maxlength="4000"></textarea></label>
<button id="review-reject" type="submit">Reject</button></form>
</section>`;
}

export const reviewPage: ConsolePage = {
  path: '/reviews/:id',
  title: 'Security review',
  // Who may read a pending review: its deciders and those who oversee them.
  action: 'approvals.read',
  roles: rolesOf('approvals.read'),
  async render(ctx, params) {
    const review = await ctx.admin.reviews.get(params.id ?? '');
    const tool = await ctx.admin.catalog.get(review.tool_id, review.version);
    // The definition is the one reviewed: if it no longer has the review's hash, the page says
    // so and the decision (which names the review's hash) is refused by the catalog.
    const current = tool.definition_hash === review.definition_hash;
    return html`<h1>Security review of <span id="review-tool">${review.tool_id}</span>@${review.version}</h1>
<dl class="facts">
<dt>Status</dt><dd id="review-status">${review.status}</dd>
<dt>Definition hash</dt><dd><code id="review-hash">${review.definition_hash}</code></dd>
<dt>Tier</dt><dd id="review-tier">${review.access_tier}</dd>
<dt>Provenance</dt><dd id="review-provenance">${review.provenance}</dd>
<dt>Owner team</dt><dd>${review.owner}</dd>
<dt>Why it needs a review</dt><dd id="review-reasons">${review.reasons.join(', ')}</dd>
<dt>Registered by</dt><dd><code id="review-registrant">${review.registered_by}</code> at ${review.registered_at}</dd>
${review.reviewer ? html`<dt>Reviewed by</dt><dd><code id="review-reviewer">${review.reviewer}</code> at ${review.reviewed_at ?? ''}</dd><dt>Notes</dt><dd>${review.notes ?? ''}</dd>` : ''}
</dl>
${current ? '' : html`<p class="error">The stored definition changed since this review was opened.</p>`}
${toolFacts(tool)}
<h2>Definition as stored</h2>
<div id="review-definition">${jsonBlock(tool.definition)}</div>
${decisionForms(ctx, review.id, review.definition_hash, review.status === 'pending' && current)}`;
  },
};

function reviewAction(decision: 'approved' | 'rejected'): ConsoleAction {
  return {
    path: `/reviews/:id/${decision === 'approved' ? 'approve' : 'reject'}`,
    action: 'approvals.decide',
    roles: rolesOf('approvals.decide'),
    async handle(ctx, params, form) {
      await requireAction(ctx, 'approvals.decide', 'a security review');
      const review = await ctx.admin.reviews.get(params.id ?? '');
      // The hash the reviewer was shown, not the one stored now: a definition changed after the
      // page was rendered is refused (REVIEW_HASH_MISMATCH), never approved unread.
      await ctx.admin.catalog.review(
        review.tool_id,
        review.version,
        ctx.operator,
        {
          definition_hash: form.definition_hash ?? '',
          decision,
          notes: form.notes ?? '',
        },
        {
          via: 'console',
          ...(decision === 'approved' && (form.totp ?? '').trim() !== ''
            ? { totp: (form.totp ?? '').trim() }
            : {}),
          // The passkey's answer the script put in the form: checked against this review and
          // the verdict of the form it came with.
          ...((form.passkey ?? '') !== '' ? { passkey: form.passkey } : {}),
        },
      );
      return {
        redirect: redirectPath(['reviews', review.id]),
        flash: decision === 'approved' ? 'Review approved.' : 'Review rejected.',
      };
    },
  };
}

export const reviewApproveAction = reviewAction('approved');
export const reviewRejectAction = reviewAction('rejected');
