/**
 * @module The `toolgate` command (C18), once main.ts has checked the runtime: runs the program of program.ts (its global options and
 * each command group of src/edge/cli/commands/) on the process's arguments. Every command goes
 * through the same services as REST; `--json` prints machine-readable output, and refusals exit 1
 * with `{ error: {code,…} }`.
 */
import type { Command } from 'commander';
import { ToolgateError } from '../../core/index.js';
import { jsonText, reportError } from './output.js';
import { buildProgram } from './program.js';
import { configFileOf, fillFromSettings, readSettingsFile } from './settings-file.js';

const program = buildProgram();

/**
 * The settings file (--config or TOOLGATE_CONFIG) fills the environment before the command line
 * is parsed, so that each option's variable, and the flag over it, wins over the file.
 */
function loadSettings(): boolean {
  const file = configFileOf(process.argv.slice(2), process.env);
  if (file === null) return true;
  const { env, problems } = readSettingsFile(file);
  if (problems.length > 0) {
    process.exitCode = reportError(
      new ToolgateError(
        'INPUT_INVALID',
        `--config ${file}: not a valid settings file (toolgate config check ${file} lists every problem)`,
        { problems },
      ),
      process.argv.includes('--json'),
    );
    return false;
  }
  fillFromSettings(process.env, env);
  return true;
}

// Usage errors (unknown option, bad number, missing --reason) are refusals like any other: with
// --json they are printed as { error: { code: 'INPUT_INVALID', … } }.
const wantsJson = process.argv.includes('--json');
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
  if (loadSettings()) await program.parseAsync(process.argv);
} catch (err) {
  const code = (err as { code?: string }).code ?? '';
  if (
    code === 'commander.helpDisplayed' ||
    code === 'commander.version' ||
    code === 'commander.help'
  ) {
    process.exitCode = 0;
  } else if (code.startsWith('commander.')) {
    const message = err instanceof Error ? err.message.replace(/^error: /, '') : String(err);
    if (wantsJson) {
      process.stdout.write(
        `${jsonText({ error: { code: 'INPUT_INVALID', message, details: { problems: [] } } })}\n`,
      );
    }
    process.exitCode = 1;
  } else {
    process.exitCode = reportError(err, wantsJson);
  }
}
