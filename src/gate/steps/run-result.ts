/**
 * @module What the execute step hands the result step and the result step hands audit-post: a
 * run's outcome with the fields its audit record needs. Types only, in their own file so that the
 * call's state (step.ts) and the steps that fill it import them without importing each other.
 */
import type { TrustLabel } from '../../domain/text-trust/index.js';
import type { SandboxAudit } from '../../execution/runtimes/index.js';
import type { EgressAuditFields } from '../../execution/sandbox/index.js';
import type { DenyCode } from '../decision.js';

/** What the run came to, before the result checks: the raw output and what to scrub from it. */
export type ExecuteRun =
  | ExecuteFailure
  | {
      readonly ok: true;
      readonly output: unknown;
      readonly bytes: number;
      /** The call's credential values: none may reach the caller. */
      readonly redact: readonly string[];
      readonly extra: Partial<ExecuteExtra>;
    };

/** What a run adds to its audit record beside the decision. */
export interface ExecuteExtra {
  readonly outcome: string;
  readonly sandbox: SandboxAudit;
  readonly egress: EgressAuditFields;
  /** Egress bytes this call charged to the session's budget (persisted after the call). */
  readonly egressSpent: number;
  /** The tool's output held its credential, which was scrubbed. */
  readonly redacted: boolean;
  /** Where the result came from and what its scan found (step `result`). */
  readonly trust: TrustLabel;
}

export type ExecuteResult = (
  | { ok: true; output: unknown; bytes: number }
  | {
      ok: false;
      code: DenyCode;
      rule: string;
      message: string;
      bytes: number;
      /** The tool was never started (withdrawn first, no credential, no runtime): nothing ran. */
      notRun?: true;
    }
) &
  Partial<ExecuteExtra>;

export type ExecuteFailure = Extract<ExecuteResult, { ok: false }>;
