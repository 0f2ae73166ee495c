/**
 * @module The audit explorer: records found by agent, user, tool, kind, decision, rule and time,
 * newest first and cursor-paged; one record with its hash, whether that hash recomputes, the
 * latest signed checkpoint, whether the record is under it and whether `verify` passes for the
 * whole log. Arguments are shown as recorded (secret-looking values masked); the raw arguments
 * only to an auditor — nobody else's page even asks for them.
 */
import { hasRole } from '../../operators/index.js';
import type { ConsolePage } from '../console-page.js';
import { html } from '../html.js';
import { consolePath, jsonBlock, link, pageRequest, pager, table } from './page-kit.js';

const READERS = ['admin', 'auditor'] as const;
const FILTERS = ['agent', 'user', 'tool', 'kind', 'decision', 'rule', 'from', 'to'] as const;

export const auditPage: ConsolePage = {
  path: '/audit',
  title: 'Audit explorer',
  nav: 'Audit',
  roles: READERS,
  async render(ctx, _params, query) {
    const filter = Object.fromEntries(
      FILTERS.filter((k) => query[k] !== undefined && query[k] !== '').map((k) => [k, query[k]]),
    );
    const page = await ctx.admin.auditRecords.search(filter, pageRequest(query));
    return html`<h1>Audit explorer</h1>
<form method="get" action="/console/audit" class="filters">${FILTERS.map(
      (k) =>
        html`<label>${k} <input name="${k}" value="${query[k] ?? ''}"${k === 'from' || k === 'to' ? html` placeholder="2026-01-31T00:00:00Z"` : html``}></label> `,
    )}<button>Search</button></form>
${table(
  ['Seq', 'At', 'Kind', 'Agent', 'User', 'Tool', 'Decision', 'Rule', 'Message'],
  page.items.map((r) => [
    link(consolePath(['audit', String(r.seq)]), String(r.seq)),
    r.at,
    r.kind,
    r.agent_id ?? '',
    r.user_id ?? '',
    r.tool_id ? `${r.tool_id}@${r.tool_version ?? ''}` : '',
    r.decision,
    r.rule ?? '',
    r.message ?? '',
  ]),
)}${pager(['audit'], filter, page.next_cursor)}`;
  },
};

export const auditRecordPage: ConsolePage = {
  path: '/audit/:seq',
  title: 'Audit record',
  roles: READERS,
  async render(ctx, params) {
    const seq = Number(params.seq);
    const [record, checkpoint, verify] = await Promise.all([
      ctx.admin.auditRecords.record(seq),
      ctx.admin.audit.latestCheckpoint(),
      ctx.admin.audit.verify(),
    ]);
    const auditor = hasRole(ctx.operator, 'auditor');
    const raw =
      auditor && record.call_id !== null
        ? await ctx.admin.auditRecords.rawArguments(record.call_id)
        : null;
    const fields: [string, string | number | null][] = [
      ['At', record.at],
      ['Kind', record.kind],
      ['Call', record.call_id],
      ['Trace', record.trace_id],
      ['Session', record.session_id],
      ['Run', record.run_id],
      ['Agent', record.agent_id],
      ['User', record.user_id],
      ['Tool', record.tool_id ? `${record.tool_id}@${record.tool_version ?? ''}` : null],
      ['Decision', record.decision],
      ['Code', record.code],
      ['Rule', record.rule],
      ['Message', record.message],
      ['Approval', record.approval_id],
      ['Approver', record.approver],
      ['Egress host', record.egress_host],
      ['Bytes out', record.bytes_out],
      ['Duration (ms)', record.duration_ms],
      ['Outcome', record.outcome],
      ['Arguments hash', record.args_hash],
    ];
    const covered = checkpoint !== null && seq <= checkpoint.treeSize;
    return html`<h1>Audit record ${seq}</h1>
<dl>${fields.filter(([, v]) => v !== null).map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>
<h2>Arguments (as recorded, secrets masked)</h2>${jsonBlock(record.args_redacted)}
${
  auditor
    ? html`<h2>Raw arguments (auditor)</h2>${raw === null ? html`<p>None kept for this record.</p>` : jsonBlock(raw)}`
    : html``
}
<h2>Details</h2>${jsonBlock(record.details)}
<h2>Integrity</h2>
<dl><dt>Record hash</dt><dd><code>${record.hash}</code></dd>
<dt>Previous hash</dt><dd><code>${record.prev_hash}</code></dd>
<dt>Hash recomputes from the record</dt><dd class="${record.hashRecomputes ? 'ok' : 'bad'}">${record.hashRecomputes ? 'yes' : 'NO'}</dd>
<dt>Latest signed checkpoint</dt><dd>${
      checkpoint
        ? html`tree size ${checkpoint.treeSize}, root <code>${checkpoint.rootHash}</code>, at ${checkpoint.at}; this record is ${covered ? 'covered by it' : 'not yet covered by it'}<pre>${checkpoint.note}</pre>`
        : 'none yet'
    }</dd>
<dt>verify</dt><dd class="${verify.ok ? 'ok' : 'bad'}">${
      verify.ok
        ? `passes: ${verify.records} records, ${verify.checkpoints} checkpoints, ${verify.signedSize} signed`
        : `FAILS: ${verify.firstProblem?.message ?? 'see toolgate audit verify'}`
    }</dd></dl>`;
  },
};
