/**
 * @module `toolgate apply -f`: a configuration file (Tool, Agent, Grant, Provider…) in one transaction.
 */

import type { Command } from 'commander';
import { operatorActor } from '../../../domain/operators/index.js';
import { MAX_CONFIG_BYTES } from '../../../operations/config/index.js';
import { readInput, withAdmin } from '../command-kit.js';

export function registerApply(program: Command): void {
  program
    .command('apply')
    .description(
      'apply a configuration file (YAML or JSON: Tool, Agent, User, Grant, Policy, Provider) in one transaction',
    )
    .requiredOption('-f, --file <path>', 'file to apply, - for stdin')
    .option('--dry-run', 'print what would change and write nothing')
    .action((opts: { file: string; dryRun?: boolean }) =>
      withAdmin(program, async (admin, out, operator) => {
        const result = await admin.config.applyText(
          readInput(opts.file, '-f', MAX_CONFIG_BYTES),
          operatorActor(operator, 'cli'),
          {
            dryRun: opts.dryRun === true,
          },
        );
        out.result(result, () => {
          const mark = { create: '+', update: '~', unchanged: '=' } as const;
          const lines = result.changes.map((c) => `${mark[c.action]} ${c.subject}: ${c.summary}`);
          const n = result.changes.filter((c) => c.action !== 'unchanged').length;
          lines.push(
            result.dryRun
              ? `dry run: ${n} change(s) would be applied, nothing written`
              : `${n} change(s) applied`,
          );
          return lines.join('\n');
        });
      })(),
    );
}
