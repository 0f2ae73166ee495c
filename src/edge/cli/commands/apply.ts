/**
 * @module `toolgate apply -f`: a configuration file (Tool, Agent, Grant, Provider…) in one transaction,
 * applied as the operator the CLI acts as.
 */

import type { Command } from 'commander';
import { operatorActor } from '../../../domain/operators/index.js';
import { MAX_CONFIG_BYTES } from '../../../operations/config/index.js';
import { readInput, withAdmin } from '../command-kit.js';

export function registerApply(program: Command): void {
  program
    .command('apply')
    .description(
      'apply a configuration file (YAML or JSON: Tool, Agent, User, Grant, Policy, Provider, DestinationSet, OwnerChannel, Operator) in one transaction',
    )
    .requiredOption('-f, --file <path>', 'file to apply, - for stdin')
    .option('--dry-run', 'print what would change and write nothing')
    .option(
      '--prune',
      'also revoke, disable, withdraw or delete what this set declared before and the file no longer declares (admins only)',
    )
    .option('--set <name>', 'the named configuration set the file declares', 'default')
    .action((opts: { file: string; dryRun?: boolean; prune?: boolean; set: string }) =>
      withAdmin(program, async (admin, out, operator) => {
        const result = await admin.config.applyText(
          readInput(opts.file, '-f', MAX_CONFIG_BYTES),
          operatorActor(operator, 'cli'),
          {
            dryRun: opts.dryRun === true,
            prune: opts.prune === true,
            set: opts.set,
            // Operator documents are applied as this person; a channel's `url_env` is read from
            // the environment of this process, the applier's own.
            operator,
            env: process.env,
          },
        );
        out.result(result, () => {
          const mark = {
            create: '+',
            update: '~',
            unchanged: '=',
            prune: '-',
            drift: '!',
          } as const;
          const lines = result.changes.map((c) => `${mark[c.action]} ${c.subject}: ${c.summary}`);
          const n = result.changes.filter(
            (c) => c.action !== 'unchanged' && c.action !== 'drift',
          ).length;
          const drift = result.changes.filter((c) => c.action === 'drift');
          const prunable = drift.filter((c) => c.prunable === true).length;
          const kept = drift.length - prunable;
          lines.push(
            result.dryRun
              ? `dry run: ${n} change(s) would be applied, nothing written`
              : `${n} change(s) applied`,
          );
          if (prunable > 0) {
            lines.push(
              `${prunable} object(s) no longer declared and kept: apply with --prune to remove them`,
            );
          }
          if (kept > 0) {
            lines.push(
              `${kept} object(s) no longer declared and kept by a rule or another set, with or without --prune (each line says why)`,
            );
          }
          return lines.join('\n');
        });
      })(),
    );
}
