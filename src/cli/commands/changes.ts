/**
 * @module `toolgate changes`: the four-eyes desk of privileged grants and irreversible tools. The
 * approver is the operator this CLI run authenticated as; no option names one.
 */
import { type Command, Option } from 'commander';
import {
  APPROVAL_READERS,
  APPROVERS,
  type PageFlags,
  pageOptions,
  refuseStatedApprover,
  withAdmin,
} from '../command-kit.js';
import { table, withNextCursor } from '../output.js';

export function registerChanges(program: Command): void {
  const changes = program
    .command('changes')
    .description('privileged grants and irreversible tools waiting for approvers (four eyes)');

  pageOptions(
    changes
      .command('list')
      .addOption(new Option('--status <status>').choices(['pending', 'applied', 'rejected'])),
  ).action((opts: { status?: string } & PageFlags) =>
    withAdmin(
      program,
      async (admin, out) => {
        const page = await admin.changes.page(opts.status, opts);
        const list = page.items;
        out.result({ changes: list, next_cursor: page.next_cursor }, () =>
          withNextCursor(
            list.length === 0
              ? 'no changes'
              : table([
                  ['ID', 'STATUS', 'SUBJECT', 'APPROVALS', 'REQUESTED BY'],
                  ...list.map((c) => [
                    c.id,
                    c.status,
                    c.subject,
                    `${c.approvers.length}/${c.required}`,
                    c.requested_by,
                  ]),
                ]),
            page.next_cursor,
          ),
        );
      },
      { roles: APPROVAL_READERS },
    )(),
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
        { roles: APPROVERS },
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
        { roles: APPROVERS },
      )(),
    );
}
