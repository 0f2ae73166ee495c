/**
 * @module The gate: the one pipeline every call goes through, and what it answers.
 * Anything exported here is public API.
 */
export type { AuditKind, AuditRecord } from './audit-writer.js';
export { AuditWriter } from './audit-writer.js';
export type {
  BoundApproval,
  CallContext,
  CallOptions,
  EntryRef,
  InProcessCall,
} from './call-context.js';
export { callContextOf, isEntryRef } from './call-context.js';
export type { CallProgress } from './call-progress.js';
export type {
  CallSpan,
  CallTracer,
  ChildSpan,
  TracedTool,
  TracedVerdict,
} from './call-tracer.js';
export { TRACED_STEPS } from './call-tracer.js';
export type {
  Allowed,
  Denied,
  DenyCode,
  DeprecationNotice,
  GateDecision,
  PendingApproval,
  RenderedCall,
} from './decision.js';
export type { GateDependencies } from './gate.js';
export { Gate } from './gate.js';
export { attemptedName, MASK, redactArguments } from './redaction.js';
export type { AfterInjection } from './steps/after-injection.js';
export {
  AFTER_INJECTION_RULE,
  DEFAULT_AFTER_INJECTION,
  resolveAfterInjection,
} from './steps/after-injection.js';
export { GATE_STEPS } from './steps/pipeline.js';
export type { Step } from './steps/step.js';
