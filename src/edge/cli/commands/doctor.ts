/**
 * @module `toolgate doctor`: which sandbox drivers work on this host (no database needed).
 */

import type { Command } from 'commander';
import { hostDoctor } from '../../../api/index.js';
import type { GlobalOptions } from '../command-kit.js';
import { makeOutput, reportError } from '../output.js';

export function registerDoctor(program: Command): void {
  program
    .command('doctor')
    .description('check which sandbox drivers work on this host (runs `true` in each)')
    .action(async () => {
      const out = makeOutput(program.opts<GlobalOptions>().json === true);
      try {
        const drivers = await hostDoctor();
        out.result({ drivers }, () =>
          drivers
            .map((d) =>
              [
                `${d.driver.padEnd(10)} ${d.available ? 'works' : 'MISSING'}  ${d.detail}`,
                ...(d.available ? [] : [`           to fix: ${d.install}`]),
                ...d.notes.map((n) => `           ${n}`),
              ].join('\n'),
            )
            .join('\n'),
        );
      } catch (err) {
        process.exitCode = reportError(err, out.json);
      }
    });
}
