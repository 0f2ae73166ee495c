/**
 * @module A provider's writable workspace must not hold its program (docs/architecture.md §4,
 * "Launch binding"). The launch hash a review covers names the program by its paths, not its
 * bytes; a workspace the upstream may write that contains one of those paths — an argv file, a
 * file a variable names (NODE_OPTIONS, PYTHONPATH), a read-only bind — would let a call rewrite
 * the reviewed program, and the next process would run the new code under the old review (attack
 * rounds 28 and 29, F1). Compared by whole path segments in both views (host source, sandbox
 * target), on real paths where they exist (a symlink into the workspace is the workspace), with
 * every absolute path or file: URL an argument or variable spells anywhere in it. Not a proof that
 * a program loads nothing writable — a reviewer still reads the launch — but every way the
 * launch itself names the workspace as code, and the sandbox's HOME, are closed.
 */
import { posix } from 'node:path';
import { joinPointer, type Problem, problem } from '../../core/index.js';
import { pathInside, realPath } from '../sandbox/index.js';

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

/** An absolute path, or a file: URL, anywhere in a value (after `=`, in a list, in code). */
const NAMED_PATH = /(?:file:\/\/)?\/[^\s"'`()<>,;:=|&]*/gu;

function decoded(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/** Absolute paths a value names, anywhere in it: file: URLs decoded, each normalized. */
export function pathsNamedIn(value: string): string[] {
  return [...value.matchAll(NAMED_PATH)].map((m) => {
    const text = m[0];
    return posix.normalize(text.startsWith('file://') ? decoded(text.slice(7)) : text);
  });
}

/** Where the sandbox runs a program: its working folder, HOME and TMPDIR. */
const SANDBOX_HOME = '/tmp';

/** Flags that hand an interpreter code in the argument itself. */
const INLINE_CODE = /^(?:-[ceEpx]|--eval|--print|--command|-[a-z]*[ce])(?:=|$)/u;

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
  const views = [...new Set([posix.normalize(ws.source), realPath(ws.source)])];
  const wsTarget = posix.normalize(ws.target ?? ws.source);
  const roots = [...views, wsTarget];
  const within = (path: string, orAt: boolean): boolean =>
    [posix.normalize(path), realPath(path)].some((c) =>
      roots.some((r) => (orAt ? pathInside(c, r) : c !== r && pathInside(c, r))),
    );
  const problems: Problem[] = [];
  const overlap = (pointer: string, message: string) =>
    problems.push(problem(pointer, message, RULE));
  // The sandbox's working folder, HOME and TMPDIR: what a program reads from there unasked
  // (~/.local site-packages, relative paths, rc files) must not be the upstream's to write.
  const underHome = wsTarget.startsWith(`${SANDBOX_HOME}/`)
    ? wsTarget.slice(SANDBOX_HOME.length + 1)
    : null;
  if (pathInside(SANDBOX_HOME, wsTarget) || underHome?.startsWith('.')) {
    overlap(
      '/workspace/target',
      `must not be at or above ${SANDBOX_HOME}, the sandbox's working folder and HOME, nor one of its dot folders (.local, .config…)`,
    );
  }
  const argv = spec.command ?? [];
  const program = programIndexes(argv);
  // Code given in an argument may load anything it names: then any path into the workspace is.
  const inlineCode = argv.some((a, i) => i > 0 && INLINE_CODE.test(a));
  argv.forEach((arg, i) => {
    if (pathsNamedIn(arg).some((p) => within(p, inlineCode || program.has(i)))) {
      overlap(
        joinPointer('/command', i),
        'names a path in the writable workspace: the upstream could rewrite its own program',
      );
    }
  });
  // A variable may be read by whatever the program loads (HOME, PYTHONUSERBASE, XDG_*, a
  // loader's search path): none may point into the workspace, nor at it.
  for (const [name, value] of Object.entries(spec.env ?? {})) {
    if (pathsNamedIn(value).some((p) => within(p, true))) {
      overlap(
        joinPointer('/env', name),
        'names a path in the writable workspace: the upstream could rewrite what it loads',
      );
    }
  }
  (spec.binds ?? []).forEach((b, i) => {
    const source = [posix.normalize(b.source), realPath(b.source)];
    const target = posix.normalize(b.target ?? b.source);
    const overlaps =
      source.some((s) => views.some((v) => pathInside(s, v) || pathInside(v, s))) ||
      pathInside(target, wsTarget) ||
      pathInside(wsTarget, target);
    if (overlaps) {
      overlap(
        joinPointer('/binds', i, 'source'),
        'overlaps the writable workspace: the upstream could rewrite what is bound read-only',
      );
    }
  });
  return problems;
}
