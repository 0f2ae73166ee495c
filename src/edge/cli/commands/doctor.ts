/**
 * @module `toolgate doctor`: which sandbox drivers work on this host (no database needed), and
 * whether the one a deployment relies on (`--sandbox`, TOOLGATE_SANDBOX) does: a container's or a
 * unit's health check runs it and fails when that driver cannot run here.
 */

import { type Command, Option } from 'commander';
import { hostDoctor, SANDBOX_DRIVERS } from '../../../api/index.js';
import type { GlobalOptions } from '../command-kit.js';
import { exitCodeOf } from '../exit-codes.js';
import { makeOutput, reportError } from '../output.js';

export function registerDoctor(program: Command): void {
  program
    .command('doctor')
    .description(
      'check which sandbox drivers work on this host (runs `true` in each); exits 5 (unavailable) when the driver --sandbox names does not work',
    )
    .addOption(
      new Option(
        '--sandbox <driver>',
        'the driver this deployment relies on (its command tools ask for it)',
      )
        .env('TOOLGATE_SANDBOX')
        .choices(SANDBOX_DRIVERS),
    )
    .action(async (opts: { sandbox?: string }) => {
      const out = makeOutput(program.opts<GlobalOptions>().json === true);
      try {
        const drivers = await hostDoctor();
        const configured = drivers.find((d) => d.driver === opts.sandbox);
        out.result(
          configured
            ? {
                drivers,
                configured: { driver: configured.driver, available: configured.available },
              }
            : { drivers },
          () =>
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
        if (configured && !configured.available) {
          if (!out.json) {
            process.stderr.write(
              `toolgate: the configured sandbox driver ${configured.driver} does not work here: command tools that ask for it are refused (SANDBOX_UNAVAILABLE)\n`,
            );
          }
          process.exitCode = exitCodeOf('unavailable');
        }
      } catch (err) {
        process.exitCode = reportError(err, out.json);
      }
    });
}
