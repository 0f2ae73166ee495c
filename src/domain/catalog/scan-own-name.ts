/**
 * @module The speaker's own name in the poisoning scan (description-scan.ts): a capture that
 * names the tool itself is never a reference to another tool. Every comparison is noted, since
 * it is the only way the name reaches a verdict: the scan memo (tool-text-scan.ts) keys on it.
 */

/** Canonical spelling for comparing names: lower case, separators dropped. */
export function nameKey(name: string): string {
  return name
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[_.:/-]+/g, '');
}

function lastSegment(name: string): string {
  const parts = name.split(/[.:/]+/);
  return parts.at(-1) ?? name;
}

/** The name keys a speaker goes by: its whole name and its last segment (`crm.lookup` → lookup). */
export function ownKeysOf(own: string): ReadonlySet<string> {
  return new Set([nameKey(own), nameKey(lastSegment(own))]);
}

/** One field's comparisons of captures with the speaker's own name keys. */
export class OwnNameCheck {
  readonly keys: ReadonlySet<string>;
  /** Every name key a capture was compared under. */
  readonly checked: string[] = [];
  /** Whether one of them was the speaker's own. */
  matched = false;

  constructor(own: string) {
    this.keys = ownKeysOf(own);
  }

  /** Whether `capture` names the speaker itself. */
  names(capture: string): boolean {
    const key = nameKey(capture);
    this.checked.push(key);
    const own = this.keys.has(key);
    if (own) this.matched = true;
    return own;
  }
}
