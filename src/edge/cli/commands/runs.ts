/**
 * @module `toolgate runs`: the open runs (optionally of one agent) and an admin's revoke of one,
 * recorded with the operator this CLI run authenticated as.
 */
import type { Command } from 'commander';
import { operatorActor } from '../../../domain/operators/index.js';
import type { LiveSession } from '../../../domain/sessions/index.js';
import { withAdmin } from '../command-kit.js';
import { registerList } from '../list-command.js';

export function registerRuns(program: Command): void {
  const runs = program
    .command('runs')
    .description(
      'open runs (the handles 2026-07-28 clients carry; gate sessions) and revoking one',
    );

  registerList<LiveSession, { agent?: string }>(program, runs, {
    key: 'runs',
    empty: 'no open runs',
    header: ['HANDLE', 'AGENT', 'USER', 'OPENED', 'EXPIRES', 'STATE'],
    row: (r) => [
      r.id,
      r.agent_id,
      r.user_id ?? '',
      r.created_at,
      r.expires_at,
      r.suspended ? 'suspended' : 'open',
    ],
    action: 'state.read',
    options: (command) => command.option('--agent <id>', 'only the runs of this agent'),
    page: (admin, { agent, status: _status, ...paging }) =>
      admin.runs.open({ ...paging, ...(agent !== undefined ? { agentId: agent } : {}) }),
  });

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
