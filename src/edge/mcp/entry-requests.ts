/**
 * @module resources/list, resources/templates/list, resources/read, prompts/list and prompts/get
 * for both MCP eras (C15, docs/architecture.md §6): lists are the session's governed entries
 * (session-entries.ts), and a read or get hands the gate the URI or the name as the client sent
 * it: the gate's `resolve` step finds the entry (or refuses RESOURCE_NOT_FOUND, PROMPT_NOT_FOUND)
 * and the call runs as the entry's (grant, policy, flow, limits, audit pre and post); this front
 * looks nothing up. The upstream answer is passed on only when the gate allowed it, with its trust
 * label in `_meta` as a tool result carries it (result-shape.ts). Era-neutral: a refusal is a
 * ToolgateError each server turns into its own protocol error.
 */
import type {
  AgentApi,
  CallContext,
  CallOptions,
  EntryRef,
  OfferedEntries,
} from '../../api/index.js';
import { type AgentPrincipal, ToolgateError } from '../../core/index.js';
import { entryAnswer } from './result-shape.js';

/** The largest prompt arguments object accepted before it reaches the gate (the gate caps each). */
const MAX_ARGUMENTS = 64;

export function listEntries(
  agent: AgentApi,
  sessionId: string,
  who: AgentPrincipal,
): Promise<OfferedEntries> {
  return agent.entries.list(sessionId, who);
}

/** resources/read of `uri`: RESOURCE_NOT_FOUND (from the gate) unless an offered entry matches it. */
export async function readResource(
  agent: AgentApi,
  ctx: CallContext,
  uri: string,
  options: CallOptions,
): Promise<{ contents: unknown[]; _meta: Record<string, unknown> }> {
  const ref: EntryRef = { entry: 'resource', uri };
  // No arguments: the gate binds a template's variables from the URI.
  const decision = await agent.invoke(ctx, ref, {}, options);
  const { value: out, meta } = entryAnswer(decision);
  return { contents: Array.isArray(out.contents) ? out.contents : [], _meta: meta };
}

/** prompts/get of `name`: PROMPT_NOT_FOUND (from the gate) unless an offered prompt is listed so. */
export async function getPrompt(
  agent: AgentApi,
  ctx: CallContext,
  name: string,
  args: Readonly<Record<string, unknown>> | undefined,
  options: CallOptions,
): Promise<{ description?: string; messages: unknown[]; _meta: Record<string, unknown> }> {
  const given = args ?? {};
  if (Object.keys(given).length > MAX_ARGUMENTS) {
    throw new ToolgateError('INPUT_INVALID', 'too many prompt arguments', {
      problems: [{ pointer: '/arguments', message: `at most ${MAX_ARGUMENTS}`, rule: 'size' }],
    });
  }
  // The gate finds the prompt and checks the arguments against its schema (strings, the declared
  // names only).
  const ref: EntryRef = { entry: 'prompt', name };
  const decision = await agent.invoke(ctx, ref, given, options);
  const { value: out, meta } = entryAnswer(decision);
  return {
    ...(typeof out.description === 'string' ? { description: out.description } : {}),
    messages: Array.isArray(out.messages) ? out.messages : [],
    _meta: meta,
  };
}
