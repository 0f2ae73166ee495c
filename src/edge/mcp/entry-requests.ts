/**
 * @module resources/list, resources/templates/list, resources/read, prompts/list and prompts/get
 * for both MCP eras (C15, docs/architecture.md §6): lists are the session's governed entries
 * (session-entries.ts), and a read or get is a gate call of the entry (grant, policy, flow, limits,
 * audit pre and post), its upstream answer passed on only when the gate allowed it, with its trust
 * label in `_meta` as a tool result carries it. Era-neutral:
 * a refusal is a ToolgateError each server turns into its own protocol error.
 */
import type { AgentApi } from '../../api/index.js';
import { type AgentPrincipal, ToolgateError } from '../../core/index.js';
import type { OfferedEntries } from '../../domain/sessions/index.js';
import { TRUST_META_KEY } from '../../domain/text-trust/index.js';
import type { CallContext, CallOptions, GateDecision } from '../../gate/index.js';

/** The largest prompt arguments object accepted before it reaches the gate (the gate caps each). */
const MAX_ARGUMENTS = 64;

export function listEntries(
  agent: AgentApi,
  sessionId: string,
  who: AgentPrincipal,
): Promise<OfferedEntries> {
  return agent.entries.list(sessionId, who);
}

/** The gate's refusal of an entry request, with its decision for the client (never the result). */
function denied(decision: Exclude<GateDecision, { kind: 'allow' }>): ToolgateError<'ENTRY_DENIED'> {
  if (decision.kind === 'pending_approval') {
    return new ToolgateError('ENTRY_DENIED', decision.message, {
      code: 'APPROVAL_REQUIRED',
      rule: 'approval.required',
      call_id: decision.callId,
      approval_id: decision.approvalId,
    });
  }
  return new ToolgateError(
    'ENTRY_DENIED',
    `${decision.code} (rule ${decision.rule}): ${decision.message}`,
    {
      code: decision.code,
      rule: decision.rule,
      call_id: decision.callId,
      ...(decision.details !== undefined ? { details: decision.details } : {}),
    },
  );
}

/**
 * The trust label of an allowed entry call, as a result's `_meta` carries it (docs/policies.md, "Results are labelled and scanned"):
 * a resource's contents and a prompt's messages are outside content like a tool's result.
 */
function labelOf(decision: GateDecision): { readonly [TRUST_META_KEY]?: unknown } {
  return decision.kind === 'allow' && decision.trust ? { [TRUST_META_KEY]: decision.trust } : {};
}

/** The upstream's answer of an allowed entry call, as the mcp runtime carried it. */
function answer(decision: GateDecision): Record<string, unknown> {
  if (decision.kind !== 'allow') throw denied(decision);
  const structured = decision.mcpResult?.structuredContent;
  if (!structured) {
    throw new ToolgateError('ENTRY_DENIED', 'the upstream gave no answer', {
      code: 'EXECUTION_FAILED',
      rule: 'provider.error',
      call_id: decision.callId,
    });
  }
  return structured;
}

/** resources/read of `uri`: RESOURCE_NOT_FOUND unless an offered entry matches it. */
export async function readResource(
  agent: AgentApi,
  ctx: CallContext,
  uri: string,
  options: CallOptions,
): Promise<{ contents: unknown[]; _meta: Record<string, unknown> }> {
  const call = await agent.entries.resolveResource(ctx.sessionId, ctx.principal, uri);
  if (!call) {
    throw new ToolgateError('RESOURCE_NOT_FOUND', 'no resource with this URI is offered', { uri });
  }
  const decision = await agent.invoke(ctx, call.toolId, call.args, options);
  const out = answer(decision);
  return { contents: Array.isArray(out.contents) ? out.contents : [], _meta: labelOf(decision) };
}

/** prompts/get of `name`: PROMPT_NOT_FOUND unless an offered prompt is listed under it. */
export async function getPrompt(
  agent: AgentApi,
  ctx: CallContext,
  name: string,
  args: Readonly<Record<string, unknown>> | undefined,
  options: CallOptions,
): Promise<{ description?: string; messages: unknown[]; _meta: Record<string, unknown> }> {
  const toolId = await agent.entries.resolvePrompt(ctx.sessionId, ctx.principal, name);
  if (!toolId) {
    throw new ToolgateError('PROMPT_NOT_FOUND', 'no prompt with this name is offered', { name });
  }
  const given = args ?? {};
  if (Object.keys(given).length > MAX_ARGUMENTS) {
    throw new ToolgateError('INPUT_INVALID', 'too many prompt arguments', {
      problems: [{ pointer: '/arguments', message: `at most ${MAX_ARGUMENTS}`, rule: 'size' }],
    });
  }
  // The gate checks the arguments against the prompt's schema (strings, the declared names only).
  const decision = await agent.invoke(ctx, toolId, given, options);
  const out = answer(decision);
  return {
    ...(typeof out.description === 'string' ? { description: out.description } : {}),
    messages: Array.isArray(out.messages) ? out.messages : [],
    _meta: labelOf(decision),
  };
}
