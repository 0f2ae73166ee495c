/**
 * @module What the static code guard answers for one code argument: allowed, or the rule that
 * refused it with where in the code (C9, before any sandbox starts).
 */
import { deny, excerpt, type PolicyVerdict } from '../policy-verdict.js';

export type CodeLanguage = 'javascript' | 'python';

export const CODE_LANGUAGES: readonly CodeLanguage[] = ['javascript', 'python'];

/** Longest code argument the guard parses; longer code is refused unparsed (`code.too_large`). */
export const MAX_CODE_CHARS = 65_536;

/** How long one parse may take (the Python parser runs in a child process); past it: refused. */
export const PARSE_TIMEOUT_MS = 5_000;

/** The verdict of one code argument; on success, the language it was checked as. */
export type CodeVerdict = PolicyVerdict<{ readonly language: CodeLanguage }>;

/** A refusal naming the rule, the construct (quoted safely) and its line. */
export function refuseCode(rule: string, what: string, line: number | undefined): CodeVerdict {
  const where = line === undefined ? '' : ` (line ${line})`;
  return deny(rule, `code ${what}${where}`);
}

export { excerpt };
