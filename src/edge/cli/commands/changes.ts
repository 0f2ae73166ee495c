/**
 * @module `toolgate changes`: the four-eyes desk of privileged grants and irreversible tools. The
 * approver is the operator this CLI run authenticated as; no option names one.
 */
import { type Command, Option } from 'commander';
import type { AdminApi } from '../../../api/index.js';
import { refuseStatedApprover, withAdmin } from '../command-kit.js';
import { registerList } from '../list-command.js';

export function registerChanges(program: Command): void {
  const changes = program
    .command('changes')
    .description('privileged grants and irreversible tools waiting for approvers (four eyes)');

  registerList<Awaited<ReturnType<AdminApi['changes']['page']>>['items'][number], object>(
    program,
    changes,
    {
      key: 'changes',
      empty: 'no changes',
      header: ['ID', 'STATUS', 'SUBJECT', 'APPROVALS', 'REQUESTED BY'],
      row: (c) => [
        c.id,
        c.status,
        c.subject,
        `${c.approvers.length}/${c.required}`,
        c.requested_by,
      ],
      action: 'approvals.read',
      statuses: ['pending', 'applied', 'rejected', 'withdrawn'],
      page: (admin, { status, ...paging }) => admin.changes.page(status, paging),
    },
  );

  changes
    .command('approve <id>')
    .description(
      'approve as yourself, proven by your TOTP; applies when enough distinct approvers agree',
    )
    .requiredOption(
      '--totp <code>',
      'your current code (an admin enrols it: toolgate approvers enroll)',
    )
    .addOption(new Option('--approver <id>').hideHelp())
    .action((id: string, opts: { approver?: string; totp: string }) =>
      withAdmin(
        program,
        async (admin, out, operator) => {
          refuseStatedApprover(opts);
          const c = await admin.changes.approve(id, operator, opts.totp, 'cli');
          out.result(
            c,
            () =>
              `${c.id}: ${c.subject}: ${c.status} (${c.approvers.length}/${c.required} approvers)`,
          );
        },
        { action: 'approvals.decide' },
      )(),
    );

  changes
    .command('reject <id>')
    .requiredOption('--reason <text>')
    .action((id: string, opts: { reason: string }) =>
      withAdmin(
        program,
        async (admin, out, operator) => {
          const c = await admin.changes.reject(id, operator, opts.reason, 'cli');
          out.result(c, () => `${c.id} rejected`);
        },
        { action: 'approvals.decide' },
      )(),
    );
}
