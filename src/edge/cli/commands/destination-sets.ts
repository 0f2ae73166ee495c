/**
 * @module `toolgate destination-sets`: live allow-lists a tool's `destinations` rules name —
 * create, list, show, add and remove members, refresh a directory set (docs/architecture.md §3
 * step `policy`). Every change is an event and an audit record, recorded with the operator.
 */
import type { Command } from 'commander';
import { operatorActor } from '../../../domain/operators/index.js';
import type { DestinationRuleKind, DestinationSetView } from '../../../domain/policy/index.js';
import { withAdmin } from '../command-kit.js';
import { table } from '../output.js';

function setLine(s: DestinationSetView): string {
  return `${s.name} (${s.kind}, ${s.source}${s.directory ? ` ${s.directory.tool}@${s.directory.version}` : ''}): ${s.members} member(s)`;
}

interface CreateOptions {
  kind: DestinationRuleKind;
  description?: string;
  directoryTool?: string;
  directoryVersion?: string;
  members?: string;
  refreshSeconds?: string;
  missSeconds?: string;
}

export function registerDestinationSets(program: Command): void {
  const sets = program
    .command('destination-sets')
    .description('live destination allow-lists (recipients, accounts, channels) tools may name');

  sets
    .command('create <name>')
    .description('create a set; with --directory-tool its members come from that read tool')
    .requiredOption('--kind <kind>', 'email, url, host, account, phone or chat')
    .option('--description <text>', 'what the set is for')
    .option('--directory-tool <id>', 'a registered read tool that lists the members')
    .option('--directory-version <version>', "the directory tool's version")
    .option('--members <pointer>', "JSON pointer to the member array in the tool's result", '')
    .option('--refresh-seconds <n>', 'refresh when the members are older than this (default 300)')
    .option('--miss-seconds <n>', 'on a miss, refresh at most once per this long (default 10)')
    .action((name: string, opts: CreateOptions) =>
      withAdmin(program, async (admin, out, operator) => {
        const directory =
          opts.directoryTool === undefined
            ? undefined
            : {
                tool: opts.directoryTool,
                version: opts.directoryVersion ?? '',
                members: opts.members ?? '',
                ...(opts.refreshSeconds ? { refresh_seconds: Number(opts.refreshSeconds) } : {}),
                ...(opts.missSeconds ? { miss_seconds: Number(opts.missSeconds) } : {}),
              };
        const set = await admin.destinationSets.create(
          {
            name,
            kind: opts.kind,
            ...(opts.description ? { description: opts.description } : {}),
            ...(directory ? { directory } : {}),
          },
          operatorActor(operator, 'cli'),
        );
        out.result({ set }, () => `created ${setLine(set)}`);
      })(),
    );

  sets
    .command('list')
    .description('list the sets')
    .action(() =>
      withAdmin(
        program,
        async (admin, out) => {
          const list = await admin.destinationSets.list();
          out.result({ sets: list }, () =>
            list.length === 0
              ? 'no destination sets'
              : table([
                  ['NAME', 'KIND', 'SOURCE', 'MEMBERS', 'REFRESHED'],
                  ...list.map((s) => [
                    s.name,
                    s.kind,
                    s.source,
                    String(s.members),
                    s.refreshed_at ?? '-',
                  ]),
                ]),
          );
        },
        { action: 'state.read' },
      )(),
    );

  sets
    .command('show <name>')
    .description('show a set and its members')
    .action((name: string) =>
      withAdmin(
        program,
        async (admin, out) => {
          const set = await admin.destinationSets.get(name);
          const members = await admin.destinationSets.members(name);
          out.result({ set, members }, () => [setLine(set), ...members].join('\n'));
        },
        { action: 'state.read' },
      )(),
    );

  sets
    .command('add <name> <values...>')
    .description('add members to an admin-managed set (normalised for its kind)')
    .action((name: string, values: string[]) =>
      withAdmin(program, async (admin, out, operator) => {
        const r = await admin.destinationSets.add(name, values, operatorActor(operator, 'cli'));
        out.result(r, () => `added ${r.added.length} member(s) to ${name}`);
      })(),
    );

  sets
    .command('remove <name> <values...>')
    .description('remove members from an admin-managed set')
    .action((name: string, values: string[]) =>
      withAdmin(program, async (admin, out, operator) => {
        const r = await admin.destinationSets.remove(name, values, operatorActor(operator, 'cli'));
        out.result(r, () => `removed ${r.removed.length} member(s) from ${name}`);
      })(),
    );

  sets
    .command('refresh <name>')
    .description("ask a directory set's tool now and store its answer")
    .action((name: string) =>
      withAdmin(program, async (admin, out, operator) => {
        const r = await admin.destinationSets.refresh(name, operatorActor(operator, 'cli'));
        out.result(r, () => `${name}: ${r.added.length} added, ${r.removed.length} removed`);
      })(),
    );
}
