/**
 * @module What the result scan found in one string of a tool's result: the kind, the rule that
 * matched (a stable id such as `pii.iban` or `secret.aws_access_key`) and where, so that a
 * redaction can mask exactly that span.
 */

/** The three things a result is scanned for; each has its own action per tool. */
export type FindingKind = 'injection' | 'secret' | 'personal_data';

export interface Finding {
  readonly kind: FindingKind;
  readonly rule: string;
  /** UTF-16 offsets into the scanned string; `end` is exclusive. */
  readonly start: number;
  readonly end: number;
}
