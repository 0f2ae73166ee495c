/**
 * @module The audit explorer: records found by agent, user, tool, kind, decision, rule and time,
 * newest first and cursor-paged; one record with its hash, whether that hash recomputes, the
 * latest signed checkpoint and whether the record is provably under it, and — on request, as it
 * reads every record — whether `verify` passes for the whole log. Arguments are shown as recorded
 * (secrets masked, values as keyed hashes); the raw arguments only to an auditor who asks for them
 * — the read from the classified store is itself recorded; nobody else's page even offers it.
 */

import { operatorActor, rolesOf } from '../../../api/index.js';
import { ToolgateError } from '../../../core/index.js';
import type { VerifyReport } from '../../../records/audit/index.js';
import type { ConsolePage } from '../console-page.js';
import { type Html, html } from '../html.js';
import { consolePath, jsonBlock, link, pageRequest, pager, table } from './page-kit.js';
import { type RecordProof, recordProof } from './record-proof.js';

const FILTERS = ['agent', 'user', 'tool', 'kind', 'decision', 'rule', 'from', 'to'] as const;

export const auditPage: ConsolePage = {
  path: '/audit',
  title: 'Audit explorer',
  nav: 'Audit',
  action: 'state.read',
  roles: rolesOf('state.read'),
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
  ['Seq', 'At', 'Kind', 'Actor', 'Agent', 'User', 'Tool', 'Decision', 'Rule', 'Message'],
  page.items.map((r) => [
    link(consolePath(['audit', String(r.seq)]), String(r.seq)),
    r.at,
    r.kind,
    r.actor ? `${r.actor}${r.via ? ` via ${r.via}` : ''}` : '',
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

function proofText(proof: RecordProof): Html {
  switch (proof.state) {
    case 'no-checkpoint':
      return html`<dd class="bad">no signed checkpoint yet</dd>`;
    case 'after-checkpoint':
      return html`<dd>after the latest checkpoint (tree size ${proof.checkpoint.treeSize}): chained, not yet signed</dd>`;
    case 'proven':
    case 'unproven':
      return html`<dd class="${proof.state === 'proven' ? 'ok' : 'bad'}">signature ${proof.signatureOk ? 'valid' : 'INVALID'}; inclusion proof from this record's hash to the signed root ${proof.inclusionOk ? 'checks' : 'FAILS'}</dd>`;
  }
}

function verifyText(report: VerifyReport | null, seq: number): Html {
  if (report === null) {
    return html`<dd>${link(consolePath(['audit', String(seq)], { verify: 'log' }), 'Run verify over the whole log')}</dd>`;
  }
  return report.ok
    ? html`<dd class="ok">passes: ${report.records} records, ${report.checkpoints} checkpoints, ${report.signedSize} signed</dd>`
    : html`<dd class="bad">FAILS: ${report.firstProblem?.message ?? 'see toolgate audit verify'}</dd>`;
}

export const auditRecordPage: ConsolePage = {
  path: '/audit/:seq',
  title: 'Audit record',
  action: 'state.read',
  roles: rolesOf('state.read'),
  async render(ctx, params, query) {
    const seq = Number(params.seq);
    const record = await ctx.admin.auditRecords.record(seq);
    // The whole-log verify reads every record: run when asked, not on every view of a record.
    const [proof, verify] = await Promise.all([
      recordProof(ctx.admin, seq, record.hash),
      query.verify === 'log' ? ctx.admin.audit.verify() : Promise.resolve(null),
    ]);
    // The raw arguments are read from the classified store only when the auditor asks: every
    // read there is itself an audit record.
    const auditor = ctx.admin.operators.authority.can(ctx.operator, 'arguments.raw');
    const raw =
      auditor && record.call_id !== null && query.raw === '1'
        ? await ctx.admin.classified
            .read(record.call_id, operatorActor(ctx.operator, 'console'))
            .then((r) => r.args)
            .catch((err: unknown) => {
              if (err instanceof ToolgateError && err.code === 'NOT_FOUND') return null;
              throw err;
            })
        : undefined;
    const fields: [string, string | number | null][] = [
      ['At', record.at],
      ['Kind', record.kind],
      ['Actor', record.actor],
      ['Via', record.via],
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
    const checkpoint = proof.state === 'no-checkpoint' ? null : proof.checkpoint;
    return html`<h1>Audit record ${seq}</h1>
<dl>${fields.filter(([, v]) => v !== null).map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>
<h2>Arguments (as recorded: secrets masked, values as keyed hashes)</h2>${jsonBlock(record.args_redacted)}
${
  !auditor || record.call_id === null
    ? html``
    : raw === undefined
      ? html`<h2>Raw arguments (auditor)</h2><p>${link(consolePath(['audit', String(seq)], { raw: '1' }), 'Read the raw arguments from the classified store')} (the read is recorded).</p>`
      : html`<h2>Raw arguments (auditor)</h2>${raw === null ? html`<p>None kept for this record (never kept, erased, or past the retention period).</p>` : jsonBlock(raw)}`
}
<h2>Details</h2>${jsonBlock(record.details)}
<h2>Integrity</h2>
<dl><dt>Record hash</dt><dd><code>${record.hash}</code></dd>
<dt>Previous hash</dt><dd><code>${record.prev_hash}</code></dd>
<dt>Hash recomputes from the record</dt><dd class="${record.hashRecomputes ? 'ok' : 'bad'}">${record.hashRecomputes ? 'yes' : 'NO'}</dd>
<dt>Latest signed checkpoint</dt><dd>${
      checkpoint
        ? html`tree size ${checkpoint.treeSize}, root <code>${checkpoint.rootHash}</code>, at ${checkpoint.at}<pre>${checkpoint.note}</pre>`
        : 'none yet'
    }</dd>
<dt>In the signed log</dt>${proofText(proof)}
<dt>verify</dt>${verifyText(verify, seq)}</dl>`;
  },
};
