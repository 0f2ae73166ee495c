/**
 * @module `toolgate approvals`: calls waiting for a human decision: list, show, approve, reject.
 * The approver is the operator this CLI run authenticated as; no option names one.
 */
import { type Command, Option } from 'commander';
import type { AdminApi } from '../../../api/index.js';
import type { CallPreview } from '../../../core/index.js';
import { int, refuseStatedApprover, withAdmin } from '../command-kit.js';
import { registerList } from '../list-command.js';
import { type ScopeFlags, scopeLines, scopeOptions } from '../scope-options.js';

/** The preview's outcome, its text marked untrusted. */
function previewLines(p: CallPreview | undefined): string[] {
  if (p === undefined) return [];
  if (p.status === 'running') return [`preview: ${p.tool} still running`];
  if (p.status !== 'ok') {
    return [
      `preview: none (${p.tool} ${p.status}: ${p.code ?? ''} ${p.rule ?? ''}: ${p.message ?? ''})`,
    ];
  }
  return [
    `preview (untrusted: what ${p.tool}@${p.version ?? '?'} returned, not used for any decision${p.injection ? '; instruction-like text flagged' : ''}${p.truncated ? '; cut at the size bound' : ''}):`,
    p.text ?? '',
  ];
}

export function registerApprovals(program: Command): void {
  const approvals = program.command('approvals').description('calls waiting for a human decision');

  registerList<Awaited<ReturnType<AdminApi['approvals']['page']>>['items'][number], object>(
    program,
    approvals,
    {
      key: 'approvals',
      empty: 'no approvals',
      header: ['ID', 'STATUS', 'AGENT', 'TOOL', 'CLASS', 'CREATED'],
      row: (a) => [
        a.id,
        a.status,
        a.agent_id,
        `${a.tool_id}@${a.tool_version}`,
        a.action_class,
        a.created_at,
      ],
      action: 'approvals.read',
      statuses: ['pending', 'approved', 'rejected', 'consumed', 'expired', 'withdrawn'],
      page: (admin, { status, ...paging }) => admin.approvals.page(status, paging),
    },
  );

  approvals
    .command('show <id>')
    .description('the resolved call the agent wants to make: tool, literal arguments, destination')
    .action((id: string) =>
      withAdmin(
        program,
        async (admin, out) => {
          const a = await admin.approvals.get(id);
          // Every reason the gate recorded, the cost and the preview: the same list the console
          // and the REST view render (core/approval-reasons.ts), escaped by out.result.
          out.result(a, () =>
            [
              `${a.id}  ${a.status}  ${a.tool_id}@${a.tool_version} (${a.action_class})`,
              `agent ${a.agent_id}${a.user_id ? ` on behalf of ${a.user_id}` : ''}, session ${a.session_id}`,
              `destination: ${a.rendered.destination_hosts.join(', ') || '(none)'}`,
              'why approval:',
              ...a.display.reasons.map((line) => `  ${line}`),
              ...(a.display.cost ? [`cost: ${a.display.cost}`] : []),
              `second factor: ${a.second_factor ? 'required' : 'no'}${a.out_of_band ? ' (out of band only)' : ''}`,
              'arguments (as resolved; hidden characters shown as \\u escapes):',
              a.display.arguments,
              ...previewLines(a.rendered.preview),
              ...scopeLines(a.scope),
            ].join('\n'),
          );
        },
        { action: 'approvals.read' },
      )(),
    );

  registerDecisions(program, approvals);

  approvals
    .command('reject <id>')
    .requiredOption('--reason <text>')
    .addOption(new Option('--approver <id>').hideHelp())
    .action((id: string, opts: { reason: string; approver?: string }) =>
      withAdmin(
        program,
        async (admin, out, operator) => {
          refuseStatedApprover(opts);
          const a = await admin.approvals.reject(id, operator, opts.reason, 'cli');
          out.result(a, () => `${a.id} rejected`);
        },
        { action: 'approvals.decide' },
      )(),
    );
}

/** `approvals approve` (one call, or a bounded scope) and `approvals revoke-scope`. */
function registerDecisions(program: Command, approvals: Command): void {
  approvals
    .command('approve <id>')
    .description(
      'approve as yourself: the agent may run exactly this call, once — or, with --scope-calls and --scope-until, the calls of the same tool version and destinations in its run within the bounds',
    )
    .option(
      '--totp <code>',
      'your second factor, for irreversible and permission-changing calls and for every scope',
    )
    .option('--reason <text>')
    .option('--scope-calls <n>', 'approve a scope of up to N calls, this one included', int(2, 100))
    .option('--scope-amount <amount>', 'the most the scope may spend, in major units (12.50)')
    .option('--scope-until <time>', 'when the scope ends: an ISO 8601 time, or 15m, 2h from now')
    .addOption(new Option('--approver <id>').hideHelp())
    .action(
      (id: string, opts: { approver?: string; totp?: string; reason?: string } & ScopeFlags) =>
        withAdmin(
          program,
          async (admin, out, operator) => {
            refuseStatedApprover(opts);
            const scope = scopeOptions(opts, new Date());
            const a = await admin.approvals.approve(id, operator, {
              ...(opts.totp ? { totp: opts.totp } : {}),
              ...(opts.reason ? { reason: opts.reason } : {}),
              ...(scope ? { scope } : {}),
              via: 'cli',
            });
            out.result(a, () =>
              [`${a.id} approved by ${a.decided_by}`, ...scopeLines(a.scope)].join('\n'),
            );
          },
          { action: 'approvals.decide' },
        )(),
    );

  approvals
    .command('revoke-scope <id>')
    .description('end the scope an approval was given with: its next call waits again')
    .requiredOption('--reason <text>')
    .action((id: string, opts: { reason: string }) =>
      withAdmin(
        program,
        async (admin, out, operator) => {
          const a = await admin.approvals.revokeScope(id, operator, opts.reason, 'cli');
          out.result(a, () => `${a.id}: scope revoked`);
        },
        { action: 'approvals.decide' },
      )(),
    );
}
