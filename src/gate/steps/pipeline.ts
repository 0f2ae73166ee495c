/** @module The gate's steps, in the order every call runs them: docs/architecture.md §3. */
import { approvalStep } from './approval.js';
import { auditPostStep } from './audit-post.js';
import { auditPreStep } from './audit-pre.js';
import { executeStep } from './execute.js';
import { flowStep } from './flow.js';
import { grantStep } from './grant.js';
import { headersStep } from './headers.js';
import { idempotencyClaimStep } from './idempotency-claim.js';
import { idempotencyLookupStep } from './idempotency-lookup.js';
import { lifecycleStep } from './lifecycle.js';
import { limitsStep } from './limits.js';
import { policyStep } from './policy.js';
import { resolveStep } from './resolve.js';
import { resultStep } from './result.js';
import { schemaStep } from './schema.js';
import { scopeStep } from './scope.js';
import { sessionStep } from './session.js';
import type { Step } from './step.js';

/**
 * Why this order. Each step reads only what the steps before it established, and everything that
 * refuses comes before anything that spends or runs (steps are cited by name, never position):
 * - `session` comes first: nothing is decided for a caller without its own session.
 * - `scope` once `resolve` found the tool under the name the session lists and `lifecycle` kept
 *   it: an OAuth token whose scopes miss a tool the agent is granted is asked to step up (before
 *   `grant` would call the missing scope a missing grant); the session holds what the grants
 *   allow, so the wider token's retry runs in it (`grant` reads the same request's token).
 * - `headers` once `resolve` found the version and `lifecycle` kept it (a quarantined tool stays
 *   "not registered", whatever its headers): a 2026-07-28 request's `Mcp-Param-*` headers must
 *   mirror the arguments that version declares before `schema` reads them (an integer beyond 2^53
 *   is a header mismatch, not a schema error).
 * - `resolve` to `policy` decide whether this principal may make this call at all (cheapest and
 *   most local first: the tool within the session's set, its lifecycle, the arguments, the grant,
 *   then argument and org policy on the arguments' checked form).
 * - `flow` comes before `limits`: a call refused for a toxic flow spends no budget.
 * - `idempotency-lookup` before `approval`, `idempotency-claim` after it: a finished call is
 *   replayed without asking anyone, and a key is taken only by a call that may run, so a retry
 *   after approval with the same key works.
 * - `limits` after `approval`: a call waiting for a reviewer spends no slot; its approved retry
 *   does.
 * - `audit-pre` is durable before `execute` runs anything; `result` checks the result before
 *   `audit-post` records it and answers.
 */
export const GATE_STEPS: readonly Step[] = Object.freeze([
  { name: 'session', run: sessionStep },
  { name: 'resolve', run: resolveStep },
  { name: 'lifecycle', run: lifecycleStep },
  { name: 'scope', run: scopeStep },
  { name: 'headers', run: headersStep },
  { name: 'schema', run: schemaStep },
  { name: 'grant', run: grantStep },
  { name: 'policy', run: policyStep },
  { name: 'flow', run: flowStep },
  { name: 'idempotency-lookup', run: idempotencyLookupStep },
  { name: 'approval', run: approvalStep },
  { name: 'idempotency-claim', run: idempotencyClaimStep },
  { name: 'limits', run: limitsStep },
  { name: 'audit-pre', run: auditPreStep },
  { name: 'execute', run: executeStep },
  { name: 'result', run: resultStep },
  { name: 'audit-post', run: auditPostStep },
]);
