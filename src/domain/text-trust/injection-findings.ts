/**
 * @module Instruction-like text in a tool's result, judged by the description scanner's own rules
 * (C3): a result is text a model reads, exactly as a description is, so the same rules apply —
 * except those about what a description may mention (links, sensitive file names), which a
 * legitimate result shows all the time (a directory listing names `.ssh`, a page has links).
 */

import type { Finding } from '../../core/finding.js';
import { type ScanFinding, scanModelText } from '../catalog/index.js';

/** Scanner categories that mean "text aimed at the model", in a result as in a description. */
const INJECTION_CATEGORIES: ReadonlySet<string> = new Set([
  'instruction',
  'hidden-markup',
  'invisible-unicode',
  'secret-access',
  'tool-reference',
]);

/**
 * The scanner reports by field, not by offset: a finding covers the whole string, which is what a
 * redaction then withholds (an instruction is not made harmless by masking a few words of it).
 */
export function findInjection(text: string): Finding[] {
  const found: ScanFinding[] = scanModelText({ text, field: '/result' });
  const out: Finding[] = [];
  for (const f of found) {
    if (!INJECTION_CATEGORIES.has(f.category)) continue;
    out.push({ kind: 'injection', rule: `injection.${f.rule}`, start: 0, end: text.length });
  }
  return out;
}
