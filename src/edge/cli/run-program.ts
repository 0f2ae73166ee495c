/**
 * @module Runs the `toolgate` program on a command line and settles its exit code: commander's own
 * errors become usage errors (JSON with --json), help and version exit 0, and anything a command
 * throws is reported by its class (exit-codes.ts). run.ts runs it on the process's arguments.
 */
import type { Command } from 'commander';
import { exitCodeOf } from './exit-codes.js';
import { printErrorBody, reportError } from './output.js';

/**
 * Parses `argv` (as process.argv: node, script, then the arguments) and runs the command; resolves
 * to the exit code, which is also left in process.exitCode. Never rejects.
 */
export async function runProgram(program: Command, argv: readonly string[]): Promise<number> {
  // Usage errors (unknown option, bad number, missing --reason) are refusals like any other: with
  // --json they are printed as { error: { code: 'INPUT_INVALID', … } }.
  const wantsJson = argv.includes('--json');
  const configure = (command: Command): void => {
    command.exitOverride();
    command.configureOutput({
      writeErr: (text) => {
        if (!wantsJson) process.stderr.write(text);
      },
    });
    for (const sub of command.commands) configure(sub);
  };
  configure(program);
  try {
    await program.parseAsync(argv);
  } catch (err) {
    const { code = '', exitCode = 1 } = err as { code?: string; exitCode?: number };
    if (
      code === 'commander.helpDisplayed' ||
      code === 'commander.version' ||
      (code === 'commander.help' && exitCode === 0)
    ) {
      process.exitCode = exitCodeOf('ok');
    } else if (code.startsWith('commander.')) {
      // commander has printed its own message (and the help) unless --json asked for JSON only. A
      // group named without its command (`toolgate tools`) is shown its help: a usage error too.
      const message =
        code === 'commander.help'
          ? 'a command is missing: --help lists the commands'
          : err instanceof Error
            ? err.message.replace(/^error: /, '')
            : String(err);
      if (wantsJson) {
        printErrorBody({ code: 'INPUT_INVALID', message, details: { problems: [] } }, true);
      }
      process.exitCode = exitCodeOf('usage');
    } else {
      process.exitCode = reportError(err, wantsJson);
    }
  }
  return Number(process.exitCode ?? 0);
}
