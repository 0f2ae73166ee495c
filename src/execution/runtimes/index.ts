/**
 * @module The tool runtimes (docs/architecture.md §4): the one `ToolRuntime` port the gate runs
 * every tool through, and its implementations by kind (inline, command, http, mcp).
 * Anything exported here is public API.
 */
export type { CommandSandbox } from './command/command-runtime.js';
export { CommandRuntime } from './command/command-runtime.js';
export type { TemplateResult } from './http/http-path-template.js';
export { fillPathTemplate } from './http/http-path-template.js';
export type {
  HttpRuntimeOptions,
  HttpToolContext,
  HttpToolErrorCode,
  HttpToolResult,
} from './http/http-runtime.js';
export { HttpRuntime, HttpToolRunner, httpAuditFields } from './http/http-runtime.js';
export type { InlineCallContext, InlineHandler } from './inline/inline-executor.js';
export { demoExecutor, InlineExecutor } from './inline/inline-executor.js';
export { BUILTIN_PREFIX, InlineRuntime } from './inline/inline-runtime.js';
export type { ProviderLinks } from './mcp/mcp-runtime.js';
export { McpRuntime } from './mcp/mcp-runtime.js';
export type {
  RuntimeAudit,
  RuntimeContext,
  RuntimeFailure,
  RuntimeFailureCode,
  RuntimeKind,
  RuntimeRegistry,
  RuntimeResult,
  RuntimeSuccess,
  SandboxAudit,
  ToolRuntime,
} from './tool-runtime.js';
export { reachableHosts, runtimeFailure, runtimeRegistry } from './tool-runtime.js';
