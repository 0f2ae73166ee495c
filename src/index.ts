/**
 * @module The curated public API of the `toolgate` package (`import { openToolgate } from
 * 'toolgate'`). Anything exported here is public API: named exports only, each chosen; internals
 * stay behind their folders and are not reachable from outside the package.
 */

// Open a gateway in process: `agent` and `admin`, the same two APIs REST, MCP and the CLI use.
export type { AdminApi, AgentApi, SecurityEvents } from './api/index.js';
// The offline audit verifier (no database needed) and what it reports.
export type { BundleReport, Problem as AuditProblem, VerifyReport } from './audit/index.js';
export { verifyBundle } from './audit/index.js';
// Errors: one catalogue of stable codes, each refusal `{ code, message, details }`.
export type { Actor, ErrorBody, ErrorCode, ErrorDetails, Problem } from './core/index.js';
export { ERROR_CODES, isToolgateError, ToolgateError } from './core/index.js';
// What a call through the gate answers, and the handlers of `inline` tools.
export type {
  Allowed,
  CallContext,
  CallOptions,
  Denied,
  GateDecision,
  PendingApproval,
  RenderedCall,
} from './gate/index.js';
// The fronts, for embedding them in a host process.
export type { HttpOptions } from './http/index.js';
export { buildServer } from './http/index.js';
export type { McpStdioOptions } from './mcp/index.js';
export { serveMcpStdio } from './mcp/index.js';
export type { InlineHandler } from './runtimes/index.js';
export { demoExecutor, InlineExecutor } from './runtimes/index.js';
export type { SessionTool, SessionView, ToolFormat } from './sessions/index.js';
// Open a gateway in process: the same services REST, MCP and the CLI use.
export type { Toolgate, ToolgateOptions } from './toolgate.js';
export { openToolgate } from './toolgate.js';
