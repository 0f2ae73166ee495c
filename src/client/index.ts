/**
 * @module The public entry `toolgate/client`: the SDK an agent's process imports to reach a
 * toolgate gateway over REST or MCP. Anything exported here is public API. It imports nothing of
 * the server (store, sandbox, gate, Fastify): only types from the server's folders, erased when
 * built, so an agent's process loads `node:crypto`, `fetch` and — for MCP only, lazily —
 * `@modelcontextprotocol/client` (docs/architecture.md §2).
 */
export type {
  CallAllowed,
  CallDenied,
  CallNotApproved,
  CallPending,
  CallResult,
  Settled,
  ToolTypes,
  WaitOptions,
} from './call-result.js';
export type { UnavailableCause } from './client-errors.js';
export {
  ApprovalWaitTimeoutError,
  CallOutcomeUnknownError,
  GatewayRequestError,
  GatewayUnavailableError,
  isGatewayUnavailable,
  McpClientMissingError,
} from './client-errors.js';
export type { CacheOptions, ToolDescriptor, ToolSet } from './definitions-cache.js';
export type { RetryPolicy } from './retry-policy.js';
export type { CallOptions, ClientOptions } from './toolgate-client.js';
export { ToolgateClient } from './toolgate-client.js';
export type { KeyOutcome } from './transport.js';
