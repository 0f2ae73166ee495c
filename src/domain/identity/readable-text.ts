/**
 * @module The text of an agent or a user that a person reads beside its id: a display name on one
 * line (the operator display-name rule, isPrintableName) and a description over several lines
 * (isPrintableText). Checked when a spec is applied, before anything is written (attack round 14,
 * Q3): the console's Agents and Users pages and every listing show them as stored.
 */
import {
  isPrintableName,
  isPrintableText,
  type Problem,
  problem,
  ToolgateError,
} from '../../core/index.js';

/** A display name, when given, that is not printable: one problem at `pointer`. */
export function displayNameProblems(name: unknown, pointer: string): Problem[] {
  if (typeof name !== 'string' || isPrintableName(name)) return [];
  return [
    problem(
      pointer,
      'a display name of printable characters (no bidi controls, zero-width or blank-rendering characters, no control characters or white space at either end)',
      'name.printable',
    ),
  ];
}

/** Free text, when given, holding a character other than printable ones, newline and tab. */
export function descriptionProblems(text: unknown, pointer: string): Problem[] {
  if (typeof text !== 'string' || isPrintableText(text)) return [];
  return [
    problem(
      pointer,
      'printable text: lines and tabs, but no bidi controls, zero-width, invisible or other control characters',
      'text.printable',
    ),
  ];
}

/** Refuses, as INPUT_INVALID, a spec whose readable text has `problems`; never writes. */
export function refuseUnreadable(problems: readonly Problem[]): void {
  if (problems.length === 0) return;
  throw new ToolgateError('INPUT_INVALID', problems[0]?.message ?? 'not printable', {
    problems: [...problems],
  });
}
