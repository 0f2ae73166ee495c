/**
 * @module The approval page's account of why a call waits, what it costs and what its preview
 * returned: rendered from the reasons the gate recorded on the approval (core/approval-reasons.ts),
 * the same list `toolgate approvals show` and the REST view's display fields read. Every value is
 * text through `html`, so invisible and bidi characters show as visible escapes; the flagged
 * excerpt and the preview are marked untrusted.
 */
import {
  type ApprovalReason,
  type CallPreview,
  costLine,
  destinationLine,
  flaggedLine,
  type RenderedCall,
  reasonHeadline,
  reasonsOf,
} from '../../core/index.js';
import { type Html, html } from './html.js';

function reasonItem(r: ApprovalReason): Html {
  const particulars =
    r.kind === 'untrusted_destination'
      ? html`<ul>${r.destinations.map((d) => html`<li class="warn untrusted-destination">${destinationLine(d)}</li>`)}</ul>`
      : r.kind === 'after_injection'
        ? html`<ul>${r.flagged.map(
            (f) =>
              html`<li class="warn flagged-source">${flaggedLine(f)}${
                f.excerpt === null
                  ? ''
                  : html`<div>Flagged text <span class="muted">(untrusted, shown as text)</span>: <code class="flagged-text">${f.excerpt}</code></div>`
              }</li>`,
          )}</ul>`
        : '';
  return html`<li class="reason" data-kind="${r.kind}" data-rule="${r.rule}">${reasonHeadline(r)} <code class="muted">${r.rule}</code>${particulars}</li>`;
}

/** The "Why approval" row: every recorded reason, each with its particulars. */
export function reasonsRow(r: RenderedCall): Html {
  return html`<dt>Why approval</dt><dd id="conditions"><ul id="reasons">${reasonsOf(r).map(reasonItem)}</ul></dd>`;
}

/** The "Cost" row, when the call costs something or a budget applies. */
export function costRow(r: RenderedCall): Html | string {
  const line = costLine(r.cost);
  return line === null ? '' : html`<dt>Cost</dt><dd id="cost">${line}</dd>`;
}

function previewBody(p: CallPreview): Html {
  switch (p.status) {
    case 'running':
      return html`<p id="preview-status" class="muted">The preview of <code>${p.tool}</code> is still running; reload to see it.</p>`;
    case 'ok':
      return html`<p id="preview-status">Result of <code>${p.tool}</code>@${p.version ?? '?'} (call <code>${p.call_id ?? ''}</code>) — <strong>untrusted</strong>: what a tool returned, not used for any decision${p.injection ? html`; <strong class="warn">the result scan flagged instruction-like text in it</strong>` : ''}${p.truncated ? ' (cut at the size bound)' : ''}.</p>
<pre id="preview" class="untrusted">${p.text ?? ''}</pre>`;
    case 'refused':
    case 'failed':
      return html`<p id="preview-status" class="warn">No preview: <code>${p.tool}</code> was ${p.status} (${p.code ?? ''}${p.rule ? html` <code>${p.rule}</code>` : ''}): ${p.message ?? ''}. Decide from the call itself.</p>`;
  }
}

/** The preview section: the declared read-only preview's outcome, or nothing when none is declared. */
export function previewSection(r: RenderedCall): Html | string {
  if (r.preview === undefined) return '';
  return html`<h2>Current state (preview)</h2>${previewBody(r.preview)}`;
}
