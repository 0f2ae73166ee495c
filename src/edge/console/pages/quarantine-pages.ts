/**
 * @module Quarantine: every quarantined tool version with each finding (rule, field, message) and
 * the flagged text marked inside the text it was found in; release with a required review note.
 * Release is what `catalog.release` does today (an admin's decision with a reason, the findings
 * kept on record), open here to admins and approvers; owners see their teams' quarantine only.
 */

import { operatorActor, rolesOf } from '../../../api/index.js';
import { ToolgateError } from '../../../core/index.js';
import type { ToolVersionDetail } from '../../../domain/catalog/index.js';
import type { ConsoleAction, ConsoleContext, ConsolePage } from '../console-page.js';
import { type Html, html } from '../html.js';
import { fieldText, flaggedText } from './flagged-text.js';
import {
  consolePath,
  csrfField,
  link,
  mayAct,
  memoryPage,
  pager,
  redirectPath,
  requireAction,
  requiredField,
  seesTool,
} from './page-kit.js';

function releaseForm(ctx: ConsoleContext, v: ToolVersionDetail): Html {
  if (!mayAct(ctx, 'quarantine.release')) return html``;
  return html`<form method="post" action="${consolePath(['quarantine', v.id, v.version, 'release'])}">${csrfField(ctx)}
<label>Review note <textarea name="note" required></textarea></label> <button>Release</button></form>`;
}

export const quarantinePage: ConsolePage = {
  path: '/quarantine',
  title: 'Quarantine',
  nav: 'Quarantine',
  action: 'catalog.browse',
  roles: rolesOf('catalog.browse'),
  async render(ctx, _params, query) {
    const listed = (await ctx.admin.catalog.list({ quarantined: true })).filter((t) =>
      seesTool(ctx, t.owner),
    );
    const page = memoryPage('console-quarantine', listed, (t) => [t.id, t.version], query);
    // The list holds summaries; the flagged text is found in each version's definition.
    const versions = await Promise.all(
      page.items.map((t) => ctx.admin.catalog.get(t.id, t.version)),
    );
    const items =
      versions.length === 0
        ? html`<p class="empty">No tool is quarantined.</p>`
        : versions.map(
            (
              v,
            ) => html`<section class="quarantined"><h2>${link(consolePath(['catalog', v.id]), v.id)}@${v.version}</h2>
<p>Owner ${v.owner} · ${v.action_class} · ${v.access_tier} · ${v.provenance}</p>
<ul class="findings">${v.findings.map(
              (f) =>
                html`<li><strong>${f.rule}</strong> (${f.category}) in <code>${f.field}</code>: ${f.message}<blockquote>${flaggedText(f, fieldText(v.definition, f.field))}</blockquote></li>`,
            )}</ul>${v.findings.length === 0 ? html`<p>Quarantined by hand (no finding).</p>` : html``}
${releaseForm(ctx, v)}</section>`,
          );
    return html`<h1>Quarantine</h1>${items}${pager(['quarantine'], {}, page.next_cursor)}`;
  },
};

export const releaseAction: ConsoleAction = {
  path: '/quarantine/:id/:version/release',
  action: 'quarantine.release',
  roles: rolesOf('quarantine.release'),
  async handle(ctx, params, form) {
    await requireAction(ctx, 'quarantine.release', 'releasing a tool from quarantine');
    const id = params.id ?? '';
    const version = params.version ?? '';
    const note = requiredField(form, 'note');
    const current = await ctx.admin.catalog.get(id, version);
    if (!seesTool(ctx, current.owner)) {
      throw new ToolgateError('TOOL_NOT_FOUND', `no tool ${id}`, { toolId: id, version });
    }
    await ctx.admin.catalog.release(id, version, operatorActor(ctx.operator, 'console'), note);
    return { redirect: redirectPath(['quarantine']), flash: `${id}@${version} released` };
  },
};
