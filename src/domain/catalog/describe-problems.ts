/** @module The one-line summary a refusal with a list of problems carries as its message. */
import type { Problem } from '../../core/index.js';

export function describeProblems(what: string, problems: readonly Problem[]): string {
  const n = problems.length;
  const first = problems[0];
  const head = first ? `${first.pointer || '(document)'} ${first.message}` : '';
  return `${what} refused: ${n} problem${n === 1 ? '' : 's'}${head ? ` (first: ${head})` : ''}`;
}
