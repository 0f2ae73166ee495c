/**
 * @module `toolgate channels`: owner teams' notification channels (add, list, remove). Admins
 * manage every team's; an operator who is only an `owner` manages their own teams'. A channel's
 * URL is shown by its origin only.
 */
import type { Command } from 'commander';
import { operatorActor } from '../../../api/index.js';
import { withAdmin } from '../command-kit.js';
import { table } from '../output.js';

export function registerChannels(program: Command): void {
  const channels = program
    .command('channels')
    .description('owner teams’ notification channels (webhooks with a Slack-compatible payload)');
  channels
    .command('add')
    .description('add a webhook channel for a team (loopback or https)')
    .requiredOption('--team <team>', 'the owner team (a tool definition’s owner)')
    .requiredOption('--url <url>', 'the webhook URL (never shown again)')
    .action((opts: { team: string; url: string }) =>
      withAdmin(
        program,
        async (admin, out, op) => {
          const c = await admin.ownerChannels.add(
            { team: opts.team, url: opts.url },
            operatorActor(op, 'cli'),
            admin.operators.authority.teamScope(op, 'tools.manage'),
          );
          out.result(c, () => `added ${c.id} for ${c.team} (${c.url_hint})`);
        },
        { action: 'tools.manage' },
      )(),
    );
  channels
    .command('list')
    .option('--team <team>', 'one team only')
    .action((opts: { team?: string }) =>
      withAdmin(
        program,
        async (admin, out, op) => {
          const list = await admin.ownerChannels.list(
            opts.team !== undefined ? { team: opts.team } : {},
            admin.operators.authority.teamScope(op, 'tools.read'),
          );
          out.result({ channels: list }, () =>
            table(list.map((c) => [c.id, c.team, c.name ?? '-', c.kind, c.url_hint, c.created_at])),
          );
        },
        { action: 'tools.read' },
      )(),
    );
  channels.command('remove <id>').action((id: string) =>
    withAdmin(
      program,
      async (admin, out, op) => {
        await admin.ownerChannels.remove(
          id,
          operatorActor(op, 'cli'),
          admin.operators.authority.teamScope(op, 'tools.manage'),
        );
        out.result({ removed: id }, () => `removed ${id}`);
      },
      { action: 'tools.manage' },
    )(),
  );
}
