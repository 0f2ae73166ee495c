/**
 * @module Alerts the detectors raised (audit records of kind `alert`), newest first; and the
 * governance reports, each downloadable as JSON, CSV or Markdown for a period. A download is a
 * GET that changes nothing; its file name is built from the report's own name, never from input.
 */
import { rolesOf } from '../../../api/index.js';
import { ToolgateError } from '../../../core/index.js';
import type { ConsoleDownload, ConsolePage } from '../console-page.js';
import { html } from '../html.js';
import { consolePath, link, pageRequest, pager, table } from './page-kit.js';

const FORMATS = ['csv', 'json', 'md'] as const;

function detailOf(details: unknown, key: string): unknown {
  return typeof details === 'object' && details !== null
    ? (details as Record<string, unknown>)[key]
    : undefined;
}

export const alertsPage: ConsolePage = {
  path: '/alerts',
  title: 'Alerts',
  nav: 'Alerts',
  action: 'state.read',
  roles: rolesOf('state.read'),
  async render(ctx, _params, query) {
    const page = await ctx.admin.auditRecords.search({ kind: 'alert' }, pageRequest(query));
    return html`<h1>Alerts</h1>${table(
      ['Record', 'At', 'Detector', 'Message', 'Agent', 'User', 'Session', 'Tool', 'Suspended'],
      page.items.map((r) => [
        link(consolePath(['audit', String(r.seq)]), String(r.seq)),
        r.at,
        String(detailOf(r.details, 'detector') ?? r.rule ?? ''),
        r.message ?? '',
        r.agent_id ?? '',
        r.user_id ?? '',
        r.session_id ?? '',
        r.tool_id ?? '',
        detailOf(r.details, 'suspended') === true ? 'yes' : 'no',
      ]),
    )}${pager(['alerts'], {}, page.next_cursor)}`;
  },
};

export const reportsPage: ConsolePage = {
  path: '/reports',
  title: 'Governance reports',
  nav: 'Reports',
  action: 'state.read',
  roles: rolesOf('state.read'),
  async render(ctx) {
    return html`<h1>Governance reports</h1>
${table(
  ['Report', 'Download'],
  ctx.admin.reports
    .names()
    .map((name) => [
      name,
      FORMATS.map(
        (f) => html`${link(consolePath(['reports', name, 'download'], { format: f }), f)} `,
      ),
    ]),
)}
<h2>For a period</h2>
<p>Reports over the audit log (invocations, deprecation impact) take a period; the default is the last 30 days.</p>
<form method="get" action="/console/reports/invocations/download"><label>From <input name="from" placeholder="2026-01-01"></label>
<label>To <input name="to" placeholder="2026-02-01"></label>
<select name="format">${FORMATS.map((f) => html`<option value="${f}">${f}</option>`)}</select> <button>Download invocations</button></form>`;
  },
};

export const reportDownload: ConsoleDownload = {
  path: '/reports/:name/download',
  action: 'state.read',
  roles: rolesOf('state.read'),
  async download(ctx, params, query) {
    const name = params.name ?? '';
    // The name goes into a file name: only a known report's own name does.
    if (!ctx.admin.reports.names().includes(name)) {
      throw new ToolgateError('NOT_FOUND', `no report ${name}`, {});
    }
    const format = query.format ?? 'csv';
    const rendered = await ctx.admin.reports.render({
      name,
      format,
      ...(query.from ? { from: query.from } : {}),
      ...(query.to ? { to: query.to } : {}),
    });
    return {
      filename: `${name}.${format}`,
      contentType: rendered.contentType,
      body: rendered.body,
    };
  },
};
