/**
 * @module How a caller names a tool and, optionally, a major version of it (C2, docs/architecture.md
 * §3 step `resolve`): `name` or `id`, with `@<major>` to pin a major (`add_label@1`). Tool names and ids
 * never hold `@`, so the suffix is unambiguous. Pure: parse, then compare exactly.
 */
import semver from 'semver';

/** The largest major a pin may name; larger is refused as malformed, never rounded. */
export const MAX_PINNED_MAJOR = 999_999_999;

const MAJOR = /^(0|[1-9][0-9]{0,8})$/;

/** A tool reference split into the name (or id) and the pinned major, if any. */
export interface ToolRef {
  readonly name: string;
  /** null: no pin, the session's default version. */
  readonly major: number | null;
}

/**
 * `add_label` → no pin; `add_label@1` → major 1. A suffix that is not a decimal major (`@1.2.0`,
 * `@v1`, `@`) is malformed: `null`, so the caller is told the pin is invalid rather than that a
 * tool of that odd name does not exist.
 */
export function parseToolRef(ref: string): ToolRef | null {
  const at = ref.indexOf('@');
  if (at < 0) return { name: ref, major: null };
  const major = parseMajor(ref.slice(at + 1));
  return major === null || at === 0 ? null : { name: ref.slice(0, at), major };
}

/**
 * A major as a front receives it: a non-negative integer, or its decimal spelling (`"1"`). Anything
 * else (`"v1"`, `1.5`, `"01"`, a list) is null.
 */
export function parseMajor(value: unknown): number | null {
  if (typeof value === 'number') {
    return Number.isSafeInteger(value) && value >= 0 && value <= MAX_PINNED_MAJOR ? value : null;
  }
  if (typeof value === 'string' && MAJOR.test(value)) return Number(value);
  return null;
}

/** The major of a stored (valid SemVer) version. */
export function majorOf(version: string): number {
  return semver.major(version);
}
