/** @module One problem found in an input, located by a JSON pointer (RFC 6901). */

export interface Problem {
  /** JSON pointer into the offending document, `''` for the whole document. */
  readonly pointer: string;
  readonly message: string;
  /** Which check produced it, e.g. `schema.required`, `semver`, `breaking.property_removed`. */
  readonly rule: string;
}

export function problem(pointer: string, message: string, rule: string): Problem {
  return { pointer, message, rule };
}

/** Escapes one reference token as RFC 6901 requires (`~` → `~0`, `/` → `~1`). */
export function pointerToken(token: string | number): string {
  return String(token).replaceAll('~', '~0').replaceAll('/', '~1');
}

export function joinPointer(base: string, ...tokens: (string | number)[]): string {
  return base + tokens.map((t) => `/${pointerToken(t)}`).join('');
}

export function prefixProblems(prefix: string, problems: readonly Problem[]): Problem[] {
  return problems.map((p) => ({ ...p, pointer: prefix + p.pointer }));
}
