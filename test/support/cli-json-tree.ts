/**
 * @module Child script of test/cli/exit-codes.test.ts: runs every command of the `toolgate` program
 * (the real program and runner, in this one process) with the global `--json`, against a file that
 * is no database, and prints what each wrote as one JSON array. Run as its own process: it takes
 * over stdout and stderr while the commands run.
 *
 * Arguments: the folder to work in (its `not-a-db` and `data` are used).
 */
import { join } from 'node:path';
import type { Command, Option } from 'commander';
import { buildProgram } from '../../src/edge/cli/program.js';
import { runProgram } from '../../src/edge/cli/run-program.js';

export interface TreeRun {
  readonly command: string;
  readonly args: readonly string[];
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

/** The words of every command that has an action (leaves and groups that run something). */
function commandsOf(command: Command, words: readonly string[] = []): string[][] {
  const out: string[][] = [];
  for (const sub of command.commands) {
    if (sub.name() === 'help') continue;
    const path = [...words, sub.name()];
    // commander keeps the action as a private field; a group without one only shows its help.
    if ((sub as unknown as { _actionHandler: unknown })._actionHandler) out.push(path);
    out.push(...commandsOf(sub, path));
  }
  return out;
}

function find(program: Command, words: readonly string[]): Command {
  let c = program;
  for (const w of words) {
    const next = c.commands.find((s) => s.name() === w);
    if (!next) throw new Error(`no command ${words.join(' ')}`);
    c = next;
  }
  return c;
}

/** A value an option or argument takes: its first choice, else a plain word. */
function placeholder(choices: readonly string[] | undefined): string {
  return choices?.[0] ?? 'x';
}

/** Arguments that get past commander to the command's action (required ones filled in). */
function argsFor(command: Command): string[] {
  const args: string[] = [];
  for (const arg of command.registeredArguments) {
    if (arg.required) args.push(placeholder(arg.argChoices));
  }
  for (const opt of command.options as readonly Option[]) {
    if (opt.mandatory && opt.defaultValue === undefined) {
      args.push(opt.long ?? '', placeholder(opt.argChoices));
    }
  }
  return args;
}

const dir = process.argv[2] ?? '.';
const runs: TreeRun[] = [];
const realOut = process.stdout.write.bind(process.stdout);
const realErr = process.stderr.write.bind(process.stderr);
for (const words of commandsOf(buildProgram())) {
  // A fresh program each time: commander keeps what it parsed.
  const program = buildProgram();
  const args = [
    '--json',
    '--db',
    `sqlite:${join(dir, 'not-a-db')}`,
    '--data-dir',
    join(dir, 'data'),
    ...words,
    ...argsFor(find(program, words)),
  ];
  let stdout = '';
  let stderr = '';
  process.stdout.write = ((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  }) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  }) as typeof process.stderr.write;
  let code: number;
  const started = Date.now();
  try {
    code = await runProgram(program, ['node', 'toolgate', ...args]);
  } finally {
    process.stdout.write = realOut;
    process.stderr.write = realErr;
  }
  process.exitCode = 0;
  runs.push({ command: words.join(' '), args, code, stdout, stderr, ms: Date.now() - started });
}
realOut(`${JSON.stringify(runs)}\n`);
// `serve` and `mcp` may leave handles (signal handlers, stdin) behind: the walk is done.
process.exit(0);
