/**
 * @module Host paths no sandbox may ever see: toolgate's data folder (keys, tokens, master key)
 * and the SQLite database with its -wal/-shm files. A tool's argv files, its path roots and a
 * provider's binds and workspace are bound into the sandbox; one that is inside a protected path,
 * or holds one, would hand the tool the gateway's own secrets. Compared on real paths (symlinks
 * and `..` resolved) by whole path segments, and files also by device and inode (a hard link).
 */
import { realpathSync, statSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { joinPointer, type Problem, problem } from '../../core/index.js';
import type { ToolDefinition } from '../../domain/catalog/index.js';

/** A path with symlinks and `..` resolved; its absolute spelling when it does not exist. */
export function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    // Not there (yet): compare the absolute spelling; a later call sees the real one.
    return resolve(path);
  }
}

/** Whether `child` is `parent` or lies in it, by whole path segments. */
export function pathInside(child: string, parent: string): boolean {
  return child === parent || child.startsWith(parent.endsWith(sep) ? parent : `${parent}${sep}`);
}

function fileId(path: string): string | null {
  try {
    const st = statSync(path);
    return st.isFile() ? `${st.dev}:${st.ino}` : null;
  } catch {
    return null;
  }
}

export class ProtectedPaths {
  readonly #paths = new Set<string>();

  /** Adds host paths (folders or files); relative ones against the current directory. */
  add(paths: readonly string[]): void {
    for (const p of paths) if (p !== '' && p !== ':memory:') this.#paths.add(resolve(p));
  }

  get size(): number {
    return this.#paths.size;
  }

  /**
   * The protected path a bind of `source` would expose — it lies inside it, contains it (a
   * folder only: `holds`), or is the same file under another name — or null when `source` is
   * clear. An argv entry is not bound as a folder, so it is checked with `holds: false` (an
   * upstream server told to serve `/` still sees only its binds). Never throws.
   */
  exposedBy(source: string, holds = true): string | null {
    if (this.#paths.size === 0) return null;
    const s = realPath(source);
    const sId = fileId(s);
    for (const p of this.#paths) {
      const r = realPath(p);
      if (pathInside(s, r) || (holds && pathInside(r, s))) return p;
      if (sId !== null && sId === fileId(r)) return p;
    }
    return null;
  }

  /** The first protected path a run would expose through its argv, binds or writable binds. */
  exposedByRun(spec: {
    readonly argv: readonly string[];
    readonly binds?: readonly { readonly source: string }[];
    readonly writableBinds?: readonly { readonly source: string }[];
  }): string | null {
    for (const arg of spec.argv) {
      const hit = arg.startsWith('/') ? this.exposedBy(arg, false) : null;
      if (hit !== null) return hit;
    }
    for (const b of [...(spec.binds ?? []), ...(spec.writableBinds ?? [])]) {
      const hit = this.exposedBy(b.source);
      if (hit !== null) return hit;
    }
    return null;
  }
}

const REFUSED =
  "lies inside toolgate's data folder or database (or holds it); no sandbox may see it";

/** Problems for a command tool whose argv files or path roots expose a protected path. */
export function definitionPathProblems(guard: ProtectedPaths, def: ToolDefinition): Problem[] {
  if (guard.size === 0) return [];
  const problems: Problem[] = [];
  if (def.runtime.kind === 'command') {
    def.runtime.argv.forEach((arg, i) => {
      if (arg.startsWith('/') && guard.exposedBy(arg, false) !== null) {
        problems.push(problem(joinPointer('/runtime/argv', i), REFUSED, 'sandbox.data_folder'));
      }
    });
  }
  (def.arguments_policy.path_roots ?? []).forEach((root, i) => {
    if (guard.exposedBy(root) !== null) {
      problems.push(
        problem(joinPointer('/arguments_policy/path_roots', i), REFUSED, 'sandbox.data_folder'),
      );
    }
  });
  return problems;
}

/** Problems for an MCP provider whose command, binds or workspace expose a protected path. */
export function providerPathProblems(
  guard: ProtectedPaths,
  spec: {
    readonly command?: readonly string[];
    readonly binds?: readonly { readonly source: string }[];
    readonly workspace?: { readonly source: string };
  },
): Problem[] {
  if (guard.size === 0) return [];
  const problems: Problem[] = [];
  (spec.command ?? []).forEach((arg, i) => {
    if (arg.startsWith('/') && guard.exposedBy(arg, false) !== null) {
      problems.push(problem(joinPointer('/command', i), REFUSED, 'sandbox.data_folder'));
    }
  });
  (spec.binds ?? []).forEach((b, i) => {
    if (guard.exposedBy(b.source) !== null) {
      problems.push(problem(joinPointer('/binds', i, 'source'), REFUSED, 'sandbox.data_folder'));
    }
  });
  if (spec.workspace && guard.exposedBy(spec.workspace.source) !== null) {
    problems.push(problem('/workspace/source', REFUSED, 'sandbox.data_folder'));
  }
  return problems;
}
