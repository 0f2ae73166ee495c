/** @module Path arguments: relative paths whose real location, symlinks followed, stays under a root (C6). */
import { lstat, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { PolicyVerdict } from './policy-verdict.js';
import { allow, deny, excerpt, typeName } from './policy-verdict.js';

export interface PathRule {
  /** Absolute directories. A root that is relative or does not exist is skipped, never guessed at. */
  readonly roots: readonly string[];
}

export const MAX_PATH_LENGTH = 1024;

/** Why a path under one root was refused, so the message can say which it was. */
type Resolution =
  | { readonly ok: true; readonly path: string }
  | { readonly ok: false; readonly reason: 'outside' | 'unresolvable' };

function isNodeError(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && 'code' in error;
}

function isMissing(error: unknown): boolean {
  return isNodeError(error) && (error.code === 'ENOENT' || error.code === 'ENOTDIR');
}

/** True when `target` is `root` or lies under it; a sibling such as `/srv/ws-evil` is not. */
function isInside(root: string, target: string): boolean {
  const relative = path.relative(root, target);
  if (relative === '') return true;
  if (path.isAbsolute(relative)) return false;
  return relative !== '..' && !relative.startsWith(`..${path.sep}`);
}

/**
 * Walks `relative` one segment at a time from the real `root`, as the kernel would: each
 * existing segment is replaced by its real path, so `..` after a symlink climbs from where the
 * link points, not from where it sits. From the first missing segment on, names are kept as
 * written (the target of a write may not exist yet), a later `..` cancelling the last of them.
 *
 * The walk must stay inside the root at every step, not only at the end: `../ws/x` is refused
 * even though it lands back inside, so nothing outside the root is ever probed through it. A
 * segment that exists but cannot be resolved (a dangling or looping symlink, no permission)
 * refuses the path: writing through a dangling link would create its target wherever it points.
 */
async function resolveUnder(root: string, relative: string): Promise<Resolution> {
  let real = root;
  const missing: string[] = [];
  for (const segment of relative.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (missing.length > 0) {
      if (segment === '..') missing.pop();
      else missing.push(segment);
      continue;
    }
    if (segment === '..') {
      real = path.dirname(real);
    } else {
      const candidate = path.join(real, segment);
      try {
        real = await realpath(candidate);
      } catch (error) {
        if (!isMissing(error) || (await exists(candidate))) {
          return { ok: false, reason: 'unresolvable' };
        }
        missing.push(segment);
      }
    }
    if (!isInside(root, real)) return { ok: false, reason: 'outside' };
  }
  return { ok: true, path: path.join(real, ...missing) };
}

/** True if anything, a dangling symlink included, sits at `candidate`; unknown errors count as yes. */
async function exists(candidate: string): Promise<boolean> {
  try {
    await lstat(candidate);
    return true;
  } catch (error) {
    return !isMissing(error);
  }
}

/** The real path of a configured root, or undefined if it is relative, missing or not a directory. */
async function realRoot(root: string): Promise<string | undefined> {
  if (!path.isAbsolute(root)) return undefined;
  try {
    const real = await realpath(root);
    return (await stat(real)).isDirectory() ? real : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Allows `raw`, a path relative to one of `rule.roots`, when its real location is that root or
 * under it, never leaving it on the way. Roots are tried in order and the first that contains the path wins; `root` in the
 * result is that entry as configured. The returned `path` is the resolved real path: hand that to
 * the tool, never `raw`. No decoding of any kind is applied (`%2e%2e` is a file name). Never
 * throws. A symlink swapped after this check is the sandbox's to stop (C9).
 */
export async function checkPath(
  raw: unknown,
  rule: PathRule,
): Promise<PolicyVerdict<{ path: string; root: string }>> {
  if (typeof raw !== 'string') {
    return deny('path.type', `a path must be a string, not ${typeName(raw)}`);
  }
  if (raw === '') return deny('path.empty', 'path is empty; use "." for the root itself');
  if (raw.includes('\0')) return deny('path.nul', 'path contains a NUL byte');
  if (raw.length > MAX_PATH_LENGTH) {
    return deny(
      'path.too_long',
      `path is ${raw.length} characters; at most ${MAX_PATH_LENGTH} are allowed`,
    );
  }
  if (path.isAbsolute(raw)) {
    return deny('path.absolute', `path ${excerpt(raw)} is absolute; give it relative to a root`);
  }
  // A shell, or a tool that calls one, would expand `~` and `~user` to a home directory.
  if (raw.startsWith('~')) {
    return deny(
      'path.absolute',
      `path ${excerpt(raw)} starts with "~", which names a home directory`,
    );
  }
  const syntax = syntaxProblem(raw);
  if (syntax !== undefined) return deny('path.syntax', `path ${excerpt(raw)} ${syntax}`);

  let refusal: 'outside' | 'unresolvable' | undefined;
  for (const root of rule.roots) {
    const real = await realRoot(root);
    if (real === undefined) continue;
    const resolved = await resolveUnder(real, raw);
    if (resolved.ok) return allow({ path: resolved.path, root });
    if (refusal !== 'unresolvable') refusal = resolved.reason;
  }
  if (refusal === undefined) {
    return deny('path.no_root', 'no usable root directory is configured for this path');
  }
  return deny(
    'path.escape',
    refusal === 'outside'
      ? `path ${excerpt(raw)} leads outside the allowed root`
      : `path ${excerpt(raw)} goes through a symlink or entry that cannot be resolved safely`,
  );
}

/**
 * Backslashes are Windows separators to some tools and escapes to others; control characters
 * hide in logs and review screens. Both are refused rather than interpreted.
 */
function syntaxProblem(raw: string): string | undefined {
  for (const ch of raw) {
    const cp = ch.codePointAt(0) ?? 0;
    if (ch === '\\') return 'contains a backslash';
    if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) return 'contains a control character';
  }
  return undefined;
}
