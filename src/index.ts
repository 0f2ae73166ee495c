/**
 * @module The curated public API of the `toolgate` package (`import { openToolgate } from
 * 'toolgate'`). Anything exported here is public API: named exports only, each chosen; internals
 * stay behind their folders and are not reachable from outside the package.
 */

// Open a gateway in process: `agent` and `admin`, the same two APIs REST, MCP and the CLI use.
export type { AdminApi, AgentApi, SecurityEvents } from './api/index.js';
// Errors: one catalogue of stable codes, each refusal `{ code, message, details }`; and who calls,
// the principal `agent.authenticate` builds once and every call carries.
export type {
  Actor,
  AgentPrincipal,
  ErrorBody,
  ErrorCode,
  ErrorDetails,
  PrincipalUser,
  Problem,
} from './core/index.js';
export { ERROR_CODES, isToolgateError, ToolgateError } from './core/index.js';
export type { SessionTool, SessionView, ToolFormat } from './domain/sessions/index.js';
export type { McpStdioOptions } from './edge/mcp/index.js';
export { serveMcpStdio } from './edge/mcp/index.js';
// The fronts, for embedding them in a host process.
export type { HttpOptions } from './edge/rest/index.js';
export { buildServer } from './edge/rest/index.js';
export type { InlineHandler } from './execution/runtimes/index.js';
export { demoExecutor, InlineExecutor } from './execution/runtimes/index.js';
// What a call through the gate answers, and the handlers of `inline` tools.
export type {
  Allowed,
  CallContext,
  CallOptions,
  Denied,
  GateDecision,
  InProcessCall,
  PendingApproval,
  RenderedCall,
} from './gate/index.js';
// Open a gateway in process: the same services REST, MCP and the CLI use.
export type { Toolgate, ToolgateOptions } from './host/toolgate.js';
export { openToolgate } from './host/toolgate.js';
// The offline audit verifier (no database needed) and what it reports.
export type { BundleReport, Problem as AuditProblem, VerifyReport } from './records/audit/index.js';
export { verifyBundle } from './records/audit/index.js';
