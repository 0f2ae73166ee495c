/**
 * @module `toolgate runs`: the open runs (optionally of one agent) and an admin's revoke of one,
 * recorded with the operator this CLI run authenticated as.
 */
import type { Command } from 'commander';
import { operatorActor } from '../../operators/index.js';
import { type PageFlags, pageOptions, READERS, withAdmin } from '../command-kit.js';
import { table, withNextCursor } from '../output.js';

export function registerRuns(program: Command): void {
  const runs = program
    .command('runs')
    .description(
      'open runs (the handles 2026-07-28 clients carry; gate sessions) and revoking one',
    );

  pageOptions(runs.command('list').option('--agent <id>', 'only the runs of this agent')).action(
    (opts: { agent?: string } & PageFlags) =>
      withAdmin(
        program,
        async (admin, out) => {
          const { agent, ...paging } = opts;
          const page = await admin.runs.open({
            ...paging,
            ...(agent !== undefined ? { agentId: agent } : {}),
          });
          const list = page.items;
          out.result({ runs: list, next_cursor: page.next_cursor }, () =>
            withNextCursor(
              list.length === 0
                ? 'no open runs'
                : table([
                    ['HANDLE', 'AGENT', 'USER', 'OPENED', 'EXPIRES', 'STATE'],
                    ...list.map((r) => [
                      r.id,
                      r.agent_id,
                      r.user_id ?? '',
                      r.created_at,
                      r.expires_at,
                      r.suspended ? 'suspended' : 'open',
                    ]),
                  ]),
              page.next_cursor,
            ),
          );
        },
        { roles: READERS },
      )(),
  );

  runs
    .command('revoke <handle>')
    .description("end a run at once: its holder's next request is refused with RUN_REVOKED")
    .requiredOption('--reason <text>')
    .action((handle: string, opts: { reason: string }) =>
      withAdmin(program, async (admin, out, operator) => {
        await admin.runs.revokeBy(handle, operatorActor(operator, 'cli'), opts.reason);
        out.result({ run: handle, revoked: true }, () => `${handle} revoked`);
      })(),
    );
}
