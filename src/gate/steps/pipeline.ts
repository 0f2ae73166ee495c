/**
 * @module The gate's steps, in the order every call runs them: docs/architecture.md §3. The step
 * numbers in each step's comments are positions in this list.
 */
import { approvalStep } from './approval.js';
import { auditPostStep } from './audit-post.js';
import { auditPreStep } from './audit-pre.js';
import { executeStep } from './execute.js';
import { flowStep } from './flow.js';
import { grantStep } from './grant.js';
import { idempotencyClaimStep } from './idempotency-claim.js';
import { idempotencyLookupStep } from './idempotency-lookup.js';
import { lifecycleStep } from './lifecycle.js';
import { limitsStep } from './limits.js';
import { policyStep } from './policy.js';
import { resolveStep } from './resolve.js';
import { resultStep } from './result.js';
import { schemaStep } from './schema.js';
import { sessionStep } from './session.js';
import type { Step } from './step.js';

/**
 * Why this order. Each step reads only what the steps before it established, and everything that
 * refuses comes before anything that spends or runs. The numbers are positions in this list; the
 * path of one call (docs/architecture.md §1) numbers them differently where noted:
 * - 1 session comes first (the path starts at resolve, so its numbers are one lower up to 5).
 * - 2–6 decide whether this principal may make this call at all (cheapest and most local first:
 *   the tool within the session's set, its lifecycle, the arguments, the grant, then argument
 *   and org policy on the arguments' checked form).
 * - 7 flow comes before limits (the path has limits 6, flow 7): a call refused for a toxic flow
 *   spends no budget.
 * - 8 idempotency lookup before approval, 10 claim after it (the path has no idempotency steps):
 *   a finished call is replayed without asking anyone, and a key is taken only by a call that may
 *   run, so a retry after approval with the same key works.
 * - 11 limits after approval (the path has approval 8 after limits 6): a call waiting for a
 *   reviewer spends no slot; its approved retry does.
 * - 12 the pre record is durable before 13 runs anything; 14 checks the result before 15 records
 *   it and answers (the path's 9–12).
 */
export const GATE_STEPS: readonly Step[] = Object.freeze([
  { name: 'session', run: sessionStep },
  { name: 'resolve', run: resolveStep },
  { name: 'lifecycle', run: lifecycleStep },
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
