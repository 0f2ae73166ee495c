/**
 * @module Path arguments: a path relative to a root, or an absolute one under a root, whose real
 * location, symlinks followed, stays under that root (C6).
 */
import { lstat, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { pathFormProblem } from './path-forms.js';
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
 * The part of the absolute `raw` below `root` (as configured, or its real path), segment by
 * segment, or undefined when `raw` does not start with that root. `.` and empty segments are
 * skipped first; a `..` is never skipped, so `/srv/x/../ws` is not under `/srv/ws`.
 */
function belowRoot(raw: string, root: string): string | undefined {
  const segments = (p: string) => p.split('/').filter((seg) => seg !== '' && seg !== '.');
  const given = segments(raw);
  const prefix = segments(root);
  if (given.length < prefix.length) return undefined;
  for (let i = 0; i < prefix.length; i++) if (given[i] !== prefix[i]) return undefined;
  return given.slice(prefix.length).join('/') || '.';
}

/**
 * Allows `raw` when its real location is one of `rule.roots` or under it, never leaving it on
 * the way. A relative path is taken from each root in turn; an absolute one must start with a
 * root, spelt as configured or as its real path (the sandbox binds each root at its real path),
 * and the rest is resolved from there exactly as a relative path would be. Nothing outside a
 * root is ever resolved or probed, so a refusal says nothing about what exists there. The first
 * root that contains the path wins; `root` in the result is that entry as configured. The
 * returned `path` is the resolved real path: hand that to the tool, never `raw`.
 *
 * Spellings another layer would read differently (percent-encoding, `~` and `$` expansion,
 * `file:` URLs, look-alike dots and slashes, backslashes) are refused each under its own rule
 * (path-forms.ts), never taken as literal names. Never throws. A symlink swapped after this
 * check is the sandbox's to stop (C9).
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
  const form = pathFormProblem(raw);
  if (form !== undefined) return deny(form.rule, form.message);

  const absolute = path.isAbsolute(raw);
  let refusal: 'outside' | 'unresolvable' | undefined;
  for (const root of rule.roots) {
    const real = await realRoot(root);
    if (real === undefined) continue;
    const relative = absolute ? (belowRoot(raw, root) ?? belowRoot(raw, real)) : raw;
    if (relative === undefined) {
      refusal ??= 'outside';
      continue;
    }
    const resolved = await resolveUnder(real, relative);
    if (resolved.ok) return allow({ path: resolved.path, root });
    if (refusal !== 'unresolvable') refusal = resolved.reason;
  }
  if (refusal === undefined) {
    return deny('path.no_root', 'no usable root directory is configured for this path');
  }
  return deny(
    'path.escape',
    refusal === 'outside'
      ? `path ${excerpt(raw)} leads outside the allowed root${absolute ? 's' : ''}`
      : `path ${excerpt(raw)} goes through a symlink or entry that cannot be resolved safely`,
  );
}
