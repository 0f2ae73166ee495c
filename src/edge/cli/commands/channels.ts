/**
 * @module `toolgate channels`: owner teams' notification channels (add, list, remove). Admins
 * manage every team's; an operator who is only an `owner` manages their own teams'. A channel's
 * URL is shown by its origin only.
 */
import type { Command } from 'commander';
import { type Operator, operatorActor } from '../../../domain/operators/index.js';
import { withAdmin } from '../command-kit.js';
import { table } from '../output.js';

const MANAGERS = ['admin', 'owner'] as const;
const READERS = ['admin', 'auditor', 'owner'] as const;

/** Every team for an admin or auditor; an owner's own teams otherwise. */
function scopeOf(op: Operator): readonly string[] | null {
  return op.roles.includes('admin') || op.roles.includes('auditor') ? null : op.teams;
}

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
            op.roles.includes('admin') ? null : op.teams,
          );
          out.result(c, () => `added ${c.id} for ${c.team} (${c.url_hint})`);
        },
        { roles: MANAGERS },
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
            scopeOf(op),
          );
          out.result({ channels: list }, () =>
            table(list.map((c) => [c.id, c.team, c.kind, c.url_hint, c.created_at])),
          );
        },
        { roles: READERS },
      )(),
    );
  channels.command('remove <id>').action((id: string) =>
    withAdmin(
      program,
      async (admin, out, op) => {
        await admin.ownerChannels.remove(
          id,
          operatorActor(op, 'cli'),
          op.roles.includes('admin') ? null : op.teams,
        );
        out.result({ removed: id }, () => `removed ${id}`);
      },
      { roles: MANAGERS },
    )(),
  );
}
