/**
 * @module The `toolgate` command (C18), once main.ts has checked the runtime: runs the program of program.ts (its global options and
 * each command group of src/edge/cli/commands/) on the process's arguments. Every command goes
 * through the same services as REST; `--json` prints machine-readable output, and a refusal exits
 * with its class's code (exit-codes.ts) and `{ error: {code,…} }`.
 */
import { ToolgateError } from '../../core/index.js';
import { reportError } from './output.js';
import { buildProgram } from './program.js';
import { runProgram } from './run-program.js';
import { configFileOf, fillFromSettings, readSettingsFile } from './settings-file.js';

// A rejection or exception no command awaited (a stray timer, a stream's error event) is a bug,
// reported as one line like any other, never as Node's stack dump.
const lastResort = (err: unknown): void => {
  process.exitCode = reportError(err, process.argv.includes('--json'));
  process.exit();
};
process.on('unhandledRejection', lastResort);
process.on('uncaughtException', lastResort);

/**
 * The settings file (--config or TOOLGATE_CONFIG) fills the environment before the command line
 * is parsed, so that each option's variable, and the flag over it, wins over the file. A bad file
 * refuses the command (a usage error) before anything opens.
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

if (loadSettings()) await runProgram(buildProgram(), process.argv);
