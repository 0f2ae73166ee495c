/**
 * @module The static code guard's one entry: a code argument, the language its schema marks
 * (`"x-toolgate-code"`), and the verdict, before any sandbox starts (C9). The size is capped
 * before parsing, so a call's cost is bounded by MAX_CODE_CHARS and PARSE_TIMEOUT_MS.
 */
import { deny, typeName } from '../policy-verdict.js';
import { type CodeLanguage, type CodeVerdict, MAX_CODE_CHARS } from './code-verdict.js';
import { checkJavaScript } from './javascript-guard.js';
import { checkPython, type PythonGuardOptions } from './python-guard.js';

/**
 * Rules that say the code could not be checked at all (rather than what it does): the gate
 * answers them with CODE_UNCHECKABLE, every other `code.*` rule with CODE_REFUSED.
 */
export const UNCHECKABLE_CODE_RULES: ReadonlySet<string> = new Set([
  'code.type',
  'code.too_large',
  'code.syntax',
  'code.timeout',
  'code.parser_unavailable',
]);

/** Checks one code argument; never rejects. */
export async function checkCode(
  raw: unknown,
  language: CodeLanguage,
  options: PythonGuardOptions = {},
): Promise<CodeVerdict> {
  if (typeof raw !== 'string')
    return deny('code.type', `code must be a string, not ${typeName(raw)}`);
  if (raw.length > MAX_CODE_CHARS) {
    return deny(
      'code.too_large',
      `code is ${raw.length} characters; at most ${MAX_CODE_CHARS} are checked`,
    );
  }
  // A lone surrogate would reach the Python parser as U+FFFD: what is checked must be exactly
  // what runs, so code that is not well-formed UTF-16 is not checked at all.
  if (hasLoneSurrogate(raw)) {
    return deny('code.syntax', 'code holds a lone surrogate (not well-formed Unicode)');
  }
  return language === 'javascript' ? checkJavaScript(raw) : checkPython(raw, options);
}

function hasLoneSurrogate(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i += 1;
      else return true;
    } else if (unit >= 0xdc00 && unit <= 0xdfff) {
      return true;
    }
  }
  return false;
}
