/**
 * @module The trust label every allowed result carries (in MCP `_meta["io.toolgate/trust"]`, in a
 * REST answer's `trust`): where the text came from and what the scan found in it, so the agent's
 * host can keep untrusted text away from instructions, and the audit record says the same.
 */

import type { FindingKind } from '../../core/finding.js';
import type { DataAccess, ToolDefinition } from '../catalog/index.js';

/** The `_meta` key of the label on MCP results. */
export const TRUST_META_KEY = 'io.toolgate/trust';

export interface LabelledFinding {
  readonly kind: FindingKind;
  readonly rule: string;
  /** JSON pointer into the result as the tool returned it (before any masking). */
  readonly pointer: string;
  /** What was done about it: kept and labelled, masked (redact), or the result withheld (block). */
  readonly action: 'label' | 'redact' | 'block';
}

export interface TrustLabel {
  readonly source: 'trusted' | 'untrusted';
  readonly provenance: ToolDefinition['provenance'];
  readonly data_access: DataAccess;
  /** True when instruction-like text was found (kept, masked or blocked). */
  readonly injection: boolean;
  /** At most MAX_LABELLED_FINDINGS, in the order found; `truncated` says there were more. */
  readonly findings: readonly LabelledFinding[];
  readonly truncated?: true;
}

export const MAX_LABELLED_FINDINGS = 32;

/**
 * True when the result is text the run must treat as untrusted: its source is declared (or
 * derived) untrusted, or instruction-like text was found in it anyway — a trusted source that
 * returns an instruction has been written to by someone else (a compromised record, a pasted
 * email), and what it says must not steer the run any less for the tool's declaration.
 */
export function carriesUntrustedText(label: TrustLabel): boolean {
  return label.source === 'untrusted' || label.injection;
}
