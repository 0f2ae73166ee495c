/**
 * @module Who may call what: agents with their tier, owner and capabilities; every grant with who
 * made it; users and their permissions; and the access-control matrix (the governance report,
 * which uses the gate's own permitted-set logic) as a grid of agents × tools.
 */
import { rolesOf } from '../../../api/index.js';
import type { ConsolePage } from '../console-page.js';
import { html } from '../html.js';
import { memoryPage, pager, table } from './page-kit.js';

export const agentsPage: ConsolePage = {
  path: '/agents',
  title: 'Agents and grants',
  nav: 'Agents',
  action: 'state.read',
  roles: rolesOf('state.read'),
  async render(ctx, _params, query) {
    const [agents, grants] = await Promise.all([
      ctx.admin.agents.list(),
      ctx.admin.agents.grants(),
    ]);
    const page = memoryPage('console-agents', agents, (a) => [a.id], query);
    return html`<h1>Agents</h1>${table(
      ['Agent', 'Name', 'Owner', 'Tier', 'Enabled', 'Capabilities', 'Description'],
      page.items.map((a) => [
        a.id,
        a.display_name,
        a.owner,
        a.tier,
        a.enabled ? 'yes' : 'no',
        a.capabilities.join(', '),
        a.description,
      ]),
    )}${pager(['agents'], {}, page.next_cursor)}
<h2>Grants</h2>${table(
      ['Agent', 'Capability', 'Granted', 'By'],
      grants.map((g) => [g.agent_id, g.capability, g.created_at, g.created_by]),
    )}`;
  },
};

export const usersPage: ConsolePage = {
  path: '/users',
  title: 'Users',
  nav: 'Users',
  action: 'state.read',
  roles: rolesOf('state.read'),
  async render(ctx, _params, query) {
    const page = memoryPage('console-users', await ctx.admin.users.list(), (u) => [u.id], query);
    return html`<h1>Users</h1>${table(
      ['User', 'Name', 'Enabled', 'Permissions'],
      page.items.map((u) => [
        u.id,
        u.display_name,
        u.enabled ? 'yes' : 'no',
        u.permissions.join(', '),
      ]),
    )}${pager(['users'], {}, page.next_cursor)}`;
  },
};

export const accessMatrixPage: ConsolePage = {
  path: '/access-matrix',
  title: 'Access-control matrix',
  nav: 'Access matrix',
  action: 'state.read',
  roles: rolesOf('state.read'),
  async render(ctx) {
    const report = await ctx.admin.reports.build({ name: 'access-matrix' });
    const agents = [...new Set(report.rows.map((r) => String(r.agent)))];
    const tools = [...new Set(report.rows.map((r) => String(r.tool)))];
    const cell = new Map(report.rows.map((r) => [`${r.agent}\u0000${r.tool}`, r]));
    return html`<h1>Access-control matrix</h1>
<p>Generated ${report.generated_at}. ${report.notes.join(' ')}</p>
<table class="matrix"><thead><tr><th>Agent \\ tool</th>${tools.map((t) => html`<th>${t}</th>`)}</tr></thead><tbody>${agents.map(
      (a) =>
        html`<tr><th>${a}</th>${tools.map((t) => {
          const r = cell.get(`${a}\u0000${t}`);
          const reason = r ? String(r.reason ?? '') : '';
          return r?.allowed === true
            ? html`<td class="allowed" title="${reason}">allowed</td>`
            : html`<td class="denied" title="${reason}">—</td>`;
        })}</tr>`,
    )}</tbody></table>`;
  },
};
