/**
 * @module A scanner finding shown in the text it was found in: the field's text split around the
 * flagged span, the span wrapped in `<mark>`, all of it escaped. Findings carry no offsets, only
 * the excerpt the scanner cut around the match, so the span is where that excerpt occurs in the
 * field's text; when it does not occur there (hidden text decoded, invisible characters spelled
 * out), the excerpt itself is the flagged text.
 */
import type { ScanFinding, ToolDefinition } from '../../../domain/catalog/index.js';
import { type Html, html } from '../html.js';

/** The text at a finding's JSON pointer: a string there, or the object key it ends with. */
export function fieldText(definition: ToolDefinition, pointer: string): string | null {
  if (!pointer.startsWith('/')) return null;
  const tokens = pointer
    .slice(1)
    .split('/')
    .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
  let node: unknown = definition;
  for (const token of tokens) {
    if (typeof node !== 'object' || node === null) return null;
    if (!Object.hasOwn(node, token)) return null;
    node = (node as Record<string, unknown>)[token];
  }
  if (typeof node === 'string') return node;
  // A finding on a property name points at the key; its text is the key itself.
  return tokens.at(-1) ?? null;
}

/** The excerpt without the scanner's decoration: a `[label] ` prefix and `…` at either end. */
function excerptCore(excerpt: string): string {
  let core = excerpt.replace(/^\[[^\]]*\] /, '');
  if (core.startsWith('…')) core = core.slice(1);
  if (core.endsWith('…')) core = core.slice(0, -1);
  return core;
}

/** The flagged text of one finding, the flagged span marked. */
export function flaggedText(finding: ScanFinding, text: string | null): Html {
  const core = excerptCore(finding.excerpt);
  const at = text !== null && core !== '' ? text.indexOf(core) : -1;
  if (text === null || at < 0) return html`<mark>${finding.excerpt}</mark>`;
  return html`${text.slice(0, at)}<mark>${core}</mark>${text.slice(at + core.length)}`;
}
