/**
 * @module A provider's writable workspace must not hold its program (docs/architecture.md §4,
 * "Launch binding"). The launch hash a review covers names the program by its paths, not its
 * bytes; a workspace the upstream may write that contains one of those paths — an argv file, a
 * file a variable names (NODE_OPTIONS, PYTHONPATH), a read-only bind — would let a call rewrite
 * the reviewed program, and the next process would run the new code under the old review (attack
 * round 28, F1). Compared by whole path segments in both views (host source, sandbox target), on
 * real paths where they exist (a symlink into the workspace is the workspace).
 */
import { realpathSync } from 'node:fs';
import { posix } from 'node:path';
import { joinPointer, type Problem, problem } from '../../core/index.js';

interface Bind {
  readonly source: string;
  readonly target?: string;
}

export interface LaunchPaths {
  readonly command?: readonly string[];
  readonly binds?: readonly Bind[];
  readonly workspace?: Bind;
  readonly env?: Readonly<Record<string, string>>;
}

const RULE = 'provider.workspace_overlap';

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return posix.resolve(path);
  }
}

function inside(child: string, parent: string): boolean {
  return child === parent || child.startsWith(parent.endsWith('/') ? parent : `${parent}/`);
}

/** Absolute paths a value names: itself, or after `=`, or in a `:`-separated list or words. */
export function pathsNamedIn(value: string): string[] {
  return value
    .split(/[\s=:,]+/)
    .filter((part) => part.startsWith('/'))
    .map((part) => posix.normalize(part));
}

/** Interpreters whose first non-option argument is the program they run. */
const INTERPRETERS = new Set([
  'node',
  'nodejs',
  'deno',
  'bun',
  'python',
  'python3',
  'ruby',
  'perl',
  'php',
  'sh',
  'bash',
  'dash',
  'zsh',
  'java',
  'uv',
  'uvx',
  'npx',
]);

/** Variables that make a program load code from where they point. */
const LOADER_VARIABLES = new Set([
  'PATH',
  'NODE_OPTIONS',
  'NODE_PATH',
  'PYTHONPATH',
  'PYTHONSTARTUP',
  'PYTHONHOME',
  'LD_PRELOAD',
  'LD_LIBRARY_PATH',
  'PERL5LIB',
  'PERL5OPT',
  'RUBYLIB',
  'RUBYOPT',
  'GEM_PATH',
  'GEM_HOME',
  'CLASSPATH',
  'JAVA_TOOL_OPTIONS',
  'BASH_ENV',
  'ENV',
]);

/** Indexes of argv that name the program: argv[0], and an interpreter's first operand. */
function programIndexes(argv: readonly string[]): Set<number> {
  const out = new Set<number>([0]);
  const first = argv[0] ?? '';
  if (INTERPRETERS.has(posix.basename(first).replace(/[0-9.]+$/, '') || posix.basename(first))) {
    const operand = argv.findIndex((a, i) => i > 0 && !a.startsWith('-'));
    if (operand > 0) out.add(operand);
  }
  return out;
}

/**
 * Problems for a stdio provider whose workspace holds, or lies in, what runs its program: the
 * program itself (or an interpreter's script) at or inside it; any other argument or variable
 * naming a file strictly inside it (a module, a config it loads); a loader variable (PATH,
 * NODE_OPTIONS, PYTHONPATH…) at or inside it; a read-only bind overlapping it either way. An
 * argument naming the workspace folder itself (a folder to serve) is its data, not its program.
 */
export function workspaceOverlapProblems(spec: LaunchPaths): Problem[] {
  const ws = spec.workspace;
  if (!ws) return [];
  const views = [...new Set([posix.normalize(ws.source), real(ws.source)])];
  const wsTarget = posix.normalize(ws.target ?? ws.source);
  const roots = [...views, wsTarget];
  const within = (path: string, orAt: boolean): boolean =>
    [posix.normalize(path), real(path)].some((c) =>
      roots.some((r) => (orAt ? inside(c, r) : c !== r && inside(c, r))),
    );
  const problems: Problem[] = [];
  const argv = spec.command ?? [];
  const program = programIndexes(argv);
  argv.forEach((arg, i) => {
    if (pathsNamedIn(arg).some((p) => within(p, program.has(i)))) {
      problems.push(
        problem(
          joinPointer('/command', i),
          'names a path in the writable workspace: the upstream could rewrite its own program',
          RULE,
        ),
      );
    }
  });
  for (const [name, value] of Object.entries(spec.env ?? {})) {
    const loader = LOADER_VARIABLES.has(name.toUpperCase());
    if (pathsNamedIn(value).some((p) => within(p, loader))) {
      problems.push(
        problem(
          joinPointer('/env', name),
          'names a path in the writable workspace: the upstream could rewrite what it loads',
          RULE,
        ),
      );
    }
  }
  (spec.binds ?? []).forEach((b, i) => {
    const source = [posix.normalize(b.source), real(b.source)];
    const target = posix.normalize(b.target ?? b.source);
    const overlaps =
      source.some((s) => views.some((v) => inside(s, v) || inside(v, s))) ||
      inside(target, wsTarget) ||
      inside(wsTarget, target);
    if (overlaps) {
      problems.push(
        problem(
          joinPointer('/binds', i, 'source'),
          'overlaps the writable workspace: the upstream could rewrite what is bound read-only',
          RULE,
        ),
      );
    }
  });
  return problems;
}
