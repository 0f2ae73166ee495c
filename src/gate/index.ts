/**
 * @module The gate: sessions, the permitted set, and the one pipeline every call goes through.
 * Anything exported here is public API.
 */
export type { AgentCaps } from './agent-caps.js';
export { DEFAULT_AGENT_CAPS } from './agent-caps.js';
export type { ApprovalCall, ApprovalView } from './approval-desk.js';
export { ApprovalDesk } from './approval-desk.js';
export type { AuditKind, AuditRecord } from './audit-writer.js';
export { AuditWriter } from './audit-writer.js';
export type { CallProgress } from './call-progress.js';
export type {
  Allowed,
  Denied,
  DenyCode,
  GateDecision,
  McpToolResult,
  PendingApproval,
  RenderedCall,
} from './decision.js';
export type {
  CallContext,
  CallOptions,
  GateDependencies,
  PolicyEngine,
  PolicySupplier,
} from './gate.js';
export { Gate } from './gate.js';
export { MASK, redactArguments } from './redaction.js';
export type {
  OpenSessionOptions,
  SessionTool,
  SessionView,
  ToolFormat,
  WithheldTool,
} from './session-service.js';
export { exportTool, permittedSet, SessionService } from './session-service.js';
