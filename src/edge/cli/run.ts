/**
 * @module The `toolgate` command (C18), once main.ts has checked the runtime: runs the program of program.ts (its global options and
 * each command group of src/edge/cli/commands/) on the process's arguments. Every command goes
 * through the same services as REST; `--json` prints machine-readable output, and a refusal exits
 * with its class's code (exit-codes.ts) and `{ error: {code,…} }`.
 */
import { reportError } from './output.js';
import { buildProgram } from './program.js';
import { runProgram } from './run-program.js';

// A rejection or exception no command awaited (a stray timer, a stream's error event) is a bug,
// reported as one line like any other, never as Node's stack dump.
const lastResort = (err: unknown): void => {
  process.exitCode = reportError(err, process.argv.includes('--json'));
  process.exit();
};
process.on('unhandledRejection', lastResort);
process.on('uncaughtException', lastResort);

await runProgram(buildProgram(), process.argv);
