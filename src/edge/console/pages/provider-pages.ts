/**
 * @module Providers: the upstream MCP servers and, for one, each tool it listed with the hash it
 * is pinned by, its classification state and any finding. Owners see their teams' providers only.
 * The provider's spec is not shown whole: its environment and headers are no one's reading.
 */
import { rolesOf } from '../../../api/index.js';
import { ToolgateError } from '../../../core/index.js';
import type { ConsolePage } from '../console-page.js';
import { html } from '../html.js';
import { consolePath, jsonBlock, link, memoryPage, pager, seesTool, table } from './page-kit.js';

export const providersPage: ConsolePage = {
  path: '/providers',
  title: 'Providers',
  nav: 'Providers',
  action: 'catalog.browse',
  roles: rolesOf('catalog.browse'),
  async render(ctx, _params, query) {
    const all = (await ctx.admin.providers.list()).filter((p) => seesTool(ctx, p.owner));
    const page = memoryPage('console-providers', all, (p) => [p.name], query);
    return html`<h1>Providers</h1>${table(
      [
        'Provider',
        'Owner',
        'Transport',
        'Isolation',
        'Refreshed',
        'Classified',
        'Unclassified',
        'Quarantined',
        'Removed',
      ],
      page.items.map((p) => [
        link(consolePath(['providers', p.name]), p.name),
        p.owner,
        p.transport,
        p.isolation,
        p.refreshed_at ?? 'never',
        p.tools.classified,
        p.tools.unclassified,
        p.tools.quarantined,
        p.tools.removed,
      ]),
    )}${pager(['providers'], {}, page.next_cursor)}`;
  },
};

export const providerPage: ConsolePage = {
  path: '/providers/:name',
  title: 'Provider',
  action: 'catalog.browse',
  roles: rolesOf('catalog.browse'),
  async render(ctx, params) {
    const name = params.name ?? '';
    const p = await ctx.admin.providers.show(name);
    if (!seesTool(ctx, p.owner)) {
      throw new ToolgateError('PROVIDER_NOT_FOUND', `no provider ${name}`, { provider: name });
    }
    return html`<h1>Provider ${p.name}</h1>
<p>Owner ${p.owner} · ${p.transport} · isolation ${p.isolation} · refreshed ${p.refreshed_at ?? 'never'}</p>
<h2>Pinned tools</h2>${table(
      [
        'Upstream name',
        'Tool',
        'State',
        'Pin hash',
        'Classification',
        'Reason',
        'Description',
        'Findings',
      ],
      p.tools.map((t) => [
        t.name,
        t.tool_version
          ? link(consolePath(['catalog', t.tool_id]), `${t.tool_id}@${t.tool_version}`)
          : t.tool_id,
        t.state,
        html`<code>${t.pin_hash}</code>`,
        t.classification ? jsonBlock(t.classification) : 'none',
        t.reason ?? '',
        t.description ?? '',
        t.findings.map(
          (f) =>
            html`<div><strong>${f.rule}</strong> in <code>${f.field}</code>: <mark>${f.excerpt}</mark></div>`,
        ),
      ]),
    )}`;
  },
};
