/**
 * @module The flagged text a reviewer is shown (docs/architecture.md §3, step `approval`): when the
 * result scan finds instruction-like text in a result, `audit-post` keeps where (call, tool, time),
 * the rules and a bounded excerpt of the flagged string; when a later call waits under the
 * after-injection rule, the `approval` step reads those of its run and principal back. Only a
 * reviewer reads them: no decision does.
 */
import type { FlaggedText } from '../../core/index.js';
import { MAX_FLAGGED_EXCERPT } from '../../domain/sessions/index.js';
import { literalScopes } from './provenance.js';
import type { CallState } from './step.js';

/** The value at an RFC 6901 pointer (own properties only), or undefined. */
function at(document: unknown, pointer: string): unknown {
  if (pointer === '') return document;
  if (!pointer.startsWith('/')) return undefined;
  let node = document;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, token)) return undefined;
    node = (node as Record<string, unknown>)[token];
  }
  return node;
}

/** Keeps what the scan flagged in this call's result (after a flagged result only). */
export function recordFlaggedText(s: CallState, output: unknown): Promise<void> {
  const trust = s.result.ok ? s.result.trust : undefined;
  const found = (trust?.findings ?? []).filter((f) => f.kind === 'injection');
  const first = found[0];
  const value = first ? at(output, first.pointer) : undefined;
  const excerpt =
    typeof value === 'string'
      ? value.length > MAX_FLAGGED_EXCERPT
        ? `${value.slice(0, MAX_FLAGGED_EXCERPT - 1)}…`
        : value
      : null;
  return s.deps.sessions.recordInjectionText({
    tool_id: s.detail.id,
    call_id: s.callId,
    at: s.now.toISOString(),
    rules: [...new Set(found.map((f) => f.rule))],
    excerpt,
  });
}

/** The flagged texts that reached this call's run or principal, for its reviewer. */
export async function flaggedTextsOf(s: CallState): Promise<readonly FlaggedText[]> {
  return s.deps.sessions.flaggedResults(literalScopes(s));
}
