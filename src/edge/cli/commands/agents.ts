/**
 * @module `toolgate agents`: agents and their API keys.
 */
import { type Command, Option } from 'commander';
import { pageOf } from '../../../core/index.js';
import { operatorActor } from '../../../domain/operators/index.js';
import { type PageFlags, pageOptions, withAdmin } from '../command-kit.js';
import { table, withNextCursor } from '../output.js';

export function registerAgents(program: Command): void {
  const agents = program.command('agents').description('agents, their API keys and grants');

  pageOptions(agents.command('list')).action((opts: PageFlags) =>
    withAdmin(
      program,
      async (admin, out) => {
        const page = pageOf('agents', await admin.agents.list(), (a) => [a.id], 'asc', opts);
        const list = page.items;
        out.result({ agents: list, next_cursor: page.next_cursor }, () =>
          withNextCursor(
            list.length === 0
              ? 'no agents'
              : table([
                  ['ID', 'OWNER', 'TIER', 'ENABLED', 'CAPABILITIES'],
                  ...list.map((a) => [
                    a.id,
                    a.owner,
                    a.tier,
                    String(a.enabled),
                    a.capabilities.join(','),
                  ]),
                ]),
            page.next_cursor,
          ),
        );
      },
      { action: 'state.read' },
    )(),
  );

  agents
    .command('create <id>')
    .description('create an agent (if new) and print a new API key for it, once')
    .option('--owner <team>', 'owning team', 'unassigned')
    .addOption(
      new Option('--tier <tier>', 'highest tool tier it may be offered').choices([
        'public',
        'restricted',
        'privileged',
      ]),
    )
    .action((id: string, opts: { owner: string; tier?: 'public' | 'restricted' | 'privileged' }) =>
      withAdmin(program, async (admin, out, operator) => {
        const exists = (await admin.agents.list()).some((a) => a.id === id);
        if (!exists) {
          await admin.config.apply(
            [
              {
                kind: 'Agent',
                spec: { id, owner: opts.owner, ...(opts.tier ? { tier: opts.tier } : {}) },
              },
            ],
            operatorActor(operator, 'cli'),
            { set: null },
          );
        }
        const issued = await admin.keys.issue(id, operatorActor(operator, 'cli'));
        out.result(
          { agent_id: id, created: !exists, key_id: issued.keyId, api_key: issued.apiKey },
          () =>
            [
              `${exists ? 'agent' : 'created agent'} ${id}`,
              `API key (shown once, store it now): ${issued.apiKey}`,
            ].join('\n'),
        );
      })(),
    );

  agents
    .command('revoke-key <keyId>')
    .description('revoke an API key')
    .action((keyId: string) =>
      withAdmin(program, async (admin, out, operator) => {
        await admin.keys.revoke(keyId, operatorActor(operator, 'cli'));
        out.result({ revoked: keyId }, () => `key ${keyId} revoked`);
      })(),
    );
}
