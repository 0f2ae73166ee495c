/**
 * @module `toolgate grants`: capability grants of agents.
 */

import type { Command } from 'commander';
import { pageOf } from '../../../core/index.js';
import { operatorActor } from '../../../domain/operators/index.js';
import { type PageFlags, pageOptions, withAdmin } from '../command-kit.js';
import { table, withNextCursor } from '../output.js';

export function registerGrants(program: Command): void {
  const grants = program.command('grants').description('capability grants (admin only)');

  pageOptions(grants.command('list')).action((opts: PageFlags) =>
    withAdmin(
      program,
      async (admin, out) => {
        const all = await admin.agents.grants();
        const page = pageOf('grants', all, (g) => [g.agent_id, g.capability], 'asc', opts);
        const list = page.items;
        out.result({ grants: list, next_cursor: page.next_cursor }, () =>
          withNextCursor(
            list.length === 0
              ? 'no grants'
              : table([
                  ['AGENT', 'CAPABILITY', 'BY', 'AT'],
                  ...list.map((g) => [g.agent_id, g.capability, g.created_by, g.created_at]),
                ]),
            page.next_cursor,
          ),
        );
      },
      { action: 'state.read' },
    )(),
  );

  grants
    .command('add <agent> <capabilities...>')
    .description('grant capabilities to an agent')
    .action((agent: string, capabilities: string[]) =>
      withAdmin(program, async (admin, out, operator) => {
        const result = await admin.config.apply(
          [{ kind: 'Grant', spec: { agent, capabilities } }],
          operatorActor(operator, 'cli'),
          { set: null },
        );
        out.result(result, () => result.changes.map((c) => c.summary).join('\n'));
      })(),
    );

  grants
    .command('remove <agent> <capabilities...>')
    .description('revoke capabilities of an agent')
    .action((agent: string, capabilities: string[]) =>
      withAdmin(program, async (admin, out, operator) => {
        const revoked = await admin.agents.revoke(
          agent,
          capabilities,
          operatorActor(operator, 'cli'),
        );
        out.result({ revoked }, () =>
          revoked.length > 0 ? `revoked ${revoked.join(', ')}` : 'nothing to revoke',
        );
      })(),
    );
}
