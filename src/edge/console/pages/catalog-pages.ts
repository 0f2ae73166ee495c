/**
 * @module Catalog pages: every tool version with its lifecycle, owner team, tier and action class;
 * one tool with its versions and definition; its lifecycle actions. An operator holding only the
 * `owner` role sees, opens and changes only its teams' tools: another team's tool is "not found"
 * in lists, details and actions alike.
 */

import { operatorActor, rolesOf } from '../../../api/index.js';
import { ToolgateError } from '../../../core/index.js';
import type { ToolVersionDetail, ToolVersionSummary } from '../../../domain/catalog/index.js';
import type { ConsoleAction, ConsoleContext, ConsolePage } from '../console-page.js';
import { type Html, html } from '../html.js';
import { fieldText, flaggedText } from './flagged-text.js';
import {
  catalogScope,
  consolePath,
  csrfField,
  jsonBlock,
  link,
  mayAct,
  memoryPage,
  pager,
  redirectPath,
  requireAction,
  requiredField,
  seesTool,
  table,
} from './page-kit.js';

const TRANSITIONS = ['active', 'deprecated', 'retired'] as const;

function lifecycleText(t: ToolVersionSummary): string {
  return t.quarantined ? `${t.lifecycle} (quarantined)` : t.lifecycle;
}

/** The versions of a tool the operator may see; TOOL_NOT_FOUND for a tool it may not. */
export async function visibleVersions(
  ctx: ConsoleContext,
  toolId: string,
): Promise<ToolVersionDetail[]> {
  const versions = await ctx.admin.catalog.versions(toolId);
  if (!versions.some((v) => seesTool(ctx, v.owner))) {
    throw new ToolgateError('TOOL_NOT_FOUND', `no tool ${toolId}`, { toolId });
  }
  return versions.filter((v) => seesTool(ctx, v.owner));
}

/**
 * Whether this operator may change this tool's lifecycle (`tools.manage`: admins, and owners for
 * their teams' tools).
 */
function mayChangeLifecycle(ctx: ConsoleContext, owner: string): boolean {
  return ctx.admin.operators.authority.reaches(ctx.operator, 'tools.manage', owner);
}

export const catalogPage: ConsolePage = {
  path: '/catalog',
  title: 'Catalog',
  nav: 'Catalog',
  action: 'catalog.browse',
  roles: rolesOf('catalog.browse'),
  async render(ctx, _params, query) {
    const filter = {
      ...(query.owner ? { owner: query.owner } : {}),
      ...(query.quarantined === 'yes' ? { quarantined: true } : {}),
    };
    const all = (await ctx.admin.catalog.list(filter)).filter((t) => seesTool(ctx, t.owner));
    const page = memoryPage('console-catalog', all, (t) => [t.id, t.version], query);
    const scope =
      catalogScope(ctx) === null
        ? html``
        : html`<p class="scope">Tools of your teams: ${ctx.operator.teams.join(', ')}</p>`;
    return html`<h1>Catalog</h1>${scope}
<form method="get" action="/console/catalog"><label>Owner team <input name="owner" value="${query.owner ?? ''}"></label> <button>Filter</button></form>
${table(
  ['Tool', 'Version', 'Name', 'Lifecycle', 'Owner', 'Tier', 'Action class', 'Provenance'],
  page.items.map((t) => [
    link(consolePath(['catalog', t.id]), t.id),
    t.version,
    t.name,
    lifecycleText(t),
    t.owner,
    t.access_tier,
    t.action_class,
    t.provenance,
  ]),
)}${pager(['catalog'], { owner: query.owner }, page.next_cursor)}`;
  },
};

function lifecycleForm(ctx: ConsoleContext, v: ToolVersionDetail): Html {
  if (!mayAct(ctx, 'tools.manage') || !mayChangeLifecycle(ctx, v.owner)) return html``;
  return html`<form method="post" action="${consolePath(['catalog', v.id, v.version, 'lifecycle'])}">${csrfField(ctx)}
<select name="to">${TRANSITIONS.map((s) => html`<option value="${s}">${s}</option>`)}</select>
<label>Reason <input name="reason" required></label> <button>Change lifecycle</button></form>`;
}

export const toolPage: ConsolePage = {
  path: '/catalog/:id',
  title: 'Tool',
  action: 'catalog.browse',
  roles: rolesOf('catalog.browse'),
  async render(ctx, params) {
    const versions = await visibleVersions(ctx, params.id ?? '');
    const newest = versions.at(-1);
    return html`<h1>${params.id ?? ''}</h1>
${newest ? html`<p class="description">${newest.description}</p>` : html``}
${versions.map(
  (v) => html`<section class="version"><h2>${v.version} — ${lifecycleText(v)}</h2>
<dl><dt>Owner</dt><dd>${v.owner}</dd><dt>Tier</dt><dd>${v.access_tier}</dd><dt>Action class</dt><dd>${v.action_class}</dd>
<dt>Data access</dt><dd>${v.data_access}</dd><dt>Egress</dt><dd>${v.egress}</dd><dt>Definition hash</dt><dd><code>${v.definition_hash}</code></dd>
<dt>Registered</dt><dd>${v.created_at} by ${v.created_by}</dd>${v.retire_at ? html`<dt>Retires</dt><dd>${v.retire_at}</dd>` : html``}</dl>
${
  v.findings.length > 0
    ? html`<h3>Findings</h3><ul class="findings">${v.findings.map(
        (f) =>
          html`<li><strong>${f.rule}</strong> in <code>${f.field}</code>: ${f.message}<blockquote>${flaggedText(f, fieldText(v.definition, f.field))}</blockquote></li>`,
      )}</ul>`
    : html``
}
${lifecycleForm(ctx, v)}
<details><summary>Definition</summary>${jsonBlock(v.definition)}</details></section>`,
)}`;
  },
};

export const lifecycleAction: ConsoleAction = {
  path: '/catalog/:id/:version/lifecycle',
  action: 'tools.manage',
  roles: rolesOf('tools.manage'),
  async handle(ctx, params, form) {
    await requireAction(ctx, 'tools.manage', 'changing a lifecycle');
    const id = params.id ?? '';
    const version = params.version ?? '';
    const current = await ctx.admin.catalog.get(id, version);
    // Another team's tool is "not found" to an owner, as in the lists: nothing is revealed.
    if (!seesTool(ctx, current.owner)) {
      // The very words of a version that does not exist (CatalogService.get), so none is told apart.
      throw new ToolgateError('TOOL_NOT_FOUND', `no tool ${id}@${version}`, {
        toolId: id,
        version,
      });
    }
    // Seen (as a reader) but not managed (an owner of other teams): refused, audited.
    await ctx.admin.operators.authority.enforceTeam(ctx.operator, 'tools.manage', current.owner, {
      via: 'console',
      what: 'changing a lifecycle',
    });
    const reason = requiredField(form, 'reason');
    const actor = operatorActor(ctx.operator, 'console');
    const to = form.to;
    if (to === 'active') await ctx.admin.catalog.activate(id, version, actor);
    else if (to === 'deprecated') await ctx.admin.catalog.deprecate(id, version, actor, { reason });
    else if (to === 'retired') await ctx.admin.catalog.retire(id, version, actor, { reason });
    else {
      throw new ToolgateError('INPUT_INVALID', 'to must be active, deprecated or retired', {
        problems: [
          { pointer: '/to', message: 'must be active, deprecated or retired', rule: 'enum' },
        ],
      });
    }
    return { redirect: redirectPath(['catalog', id]), flash: `${id}@${version} is now ${to}` };
  },
};
