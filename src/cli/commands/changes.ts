/**
 * @module `toolgate changes`: the four-eyes desk of privileged grants and irreversible tools.
 */
import { type Command, Option } from 'commander';
import { operatorActor } from '../../operators/index.js';
import { APPROVAL_READERS, type PageFlags, pageOptions, withAdmin } from '../command-kit.js';
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
      "one approver's approval, proven by their TOTP; applies when enough distinct approvers agree",
    )
    .requiredOption('--approver <id>', 'an enrolled approver (toolgate approvers enroll)')
    .requiredOption('--totp <code>', "the approver's current code")
    .action((id: string, opts: { approver: string; totp: string }) =>
      withAdmin(program, async (admin, out) => {
        const c = await admin.changes.approve(id, opts.approver, opts.totp);
        out.result(
          c,
          () =>
            `${c.id}: ${c.subject}: ${c.status} (${c.approvers.length}/${c.required} approvers)`,
        );
      })(),
    );

  changes
    .command('reject <id>')
    .requiredOption('--reason <text>')
    .action((id: string, opts: { reason: string }) =>
      withAdmin(program, async (admin, out, operator) => {
        const c = await admin.changes.reject(id, operatorActor(operator, 'cli'), opts.reason);
        out.result(c, () => `${c.id} rejected`);
      })(),
    );
}
