/**
 * @module The result policy a tool's results are treated by: its definition's `result_policy`
 * with the defaults filled in. A result whose text may come from outside is `untrusted` unless the
 * owner says otherwise; the defaults label instruction-like text and personal data (the model and
 * the audit see the label) and mask credentials (a key in front of a model leaks into any later
 * call it makes).
 */
import type { ResultAction, ToolDefinition } from '../catalog/index.js';

export interface EffectiveResultPolicy {
  readonly source: 'trusted' | 'untrusted';
  readonly injection: ResultAction;
  readonly secrets: ResultAction;
  readonly personal_data: ResultAction;
}

export const DEFAULT_RESULT_ACTIONS = {
  injection: 'label',
  secrets: 'redact',
  personal_data: 'label',
} as const satisfies Omit<EffectiveResultPolicy, 'source'>;

/**
 * Untrusted unless everything says otherwise: an internal tool that reaches nothing outside the
 * sandbox and runs no upstream returns what the organisation wrote. Anything with egress, an http
 * or mcp runtime, or third-party or open-source provenance may return anyone's words.
 */
export function derivedSource(def: ToolDefinition): 'trusted' | 'untrusted' {
  const outside =
    def.provenance !== 'internal' ||
    def.egress.mode !== 'none' ||
    def.runtime.kind === 'http' ||
    def.runtime.kind === 'mcp';
  return outside ? 'untrusted' : 'trusted';
}

const cache = new WeakMap<ToolDefinition, EffectiveResultPolicy>();

/** Definitions are frozen once checked, so the answer is kept per definition object. */
export function resultPolicyOf(def: ToolDefinition): EffectiveResultPolicy {
  let policy = cache.get(def);
  if (!policy) {
    const declared = def.result_policy ?? {};
    policy = {
      source: declared.source ?? derivedSource(def),
      injection: declared.injection ?? DEFAULT_RESULT_ACTIONS.injection,
      secrets: declared.secrets ?? DEFAULT_RESULT_ACTIONS.secrets,
      personal_data: declared.personal_data ?? DEFAULT_RESULT_ACTIONS.personal_data,
    };
    cache.set(def, policy);
  }
  return policy;
}
