/**
 * @module The `scope` step: an OAuth access token whose scopes do not reach a tool the agent is
 * granted is refused with INSUFFICIENT_SCOPE naming only the scopes this call needs (RFC 6750
 * §3.1, as MCP asks), so the client can step up; the fronts render it as their challenge (403 +
 * `WWW-Authenticate: Bearer error="insufficient_scope"`). The scopes are this request's token's:
 * a session or run holds what the grants allow whatever token opened it, and each request is
 * narrowed by its own token (domain/sessions/token-scopes.ts), so after a step-up the wider
 * token's retry runs in the same session or run. It runs after `resolve` and `lifecycle`: the
 * tool is the one `resolve` found under the name the session lists (a clash-renamed tool, a
 * template by its listed name, a resource read, a prompt get alike), never a second reading of
 * the name. A tool beyond the agent's own grants is no step-up (no scope helps): `grant` refuses it
 * as usual. Every other caller — an API key, an agent JWT, a token holding every configured scope
 * — goes on at once. Step order: docs/architecture.md §3.
 */
import type { AgentPrincipal } from '../../core/index.js';
import { majorOf, parseToolRef, type ToolVersionDetail } from '../../domain/catalog/index.js';
import { scopesFor } from '../../domain/identity/index.js';
import { type CallState, CONTINUE, type Refusal, type StepDependencies } from './step.js';

export function scopeStep(s: CallState): Refusal | undefined | Promise<Refusal | undefined> {
  if (!wantsLookUp(s.deps, s.ctx.principal)) return CONTINUE;
  return refusalFor(s.deps, s.ctx.principal, [s.detail]);
}

/** Whether `principal` is an OAuth token missing some configured scope (else: go on at once). */
function wantsLookUp(
  deps: Pick<StepDependencies, 'scopes'>,
  principal: AgentPrincipal,
): principal is AgentPrincipal & { oauth: object; user: object } {
  const source = deps.scopes;
  if (!source || !principal.oauth || !principal.user) return false;
  // A token holding every configured scope can be stepped up to nothing.
  const tokenScopes = new Set(principal.oauth.scopes);
  return !Object.keys(source.config.scopes).every((scope) => tokenScopes.has(scope));
}

/**
 * The step-up refusal of `principal` calling `toolRef` outside any session (a front asking before
 * it has one: the catalog's offered tools by name or id), or undefined (go on). Synchronous for
 * every caller that is not an OAuth token missing some configured scope.
 */
export function scopeRefusal(
  deps: Pick<StepDependencies, 'scopes' | 'identities'>,
  principal: AgentPrincipal,
  toolRef: unknown,
): Refusal | undefined | Promise<Refusal | undefined> {
  if (!wantsLookUp(deps, principal) || typeof toolRef !== 'string') return CONTINUE;
  return offeredRefusal(deps, principal, toolRef);
}

async function offeredRefusal(
  deps: Pick<StepDependencies, 'scopes' | 'identities'>,
  principal: AgentPrincipal,
  toolRef: string,
): Promise<Refusal | undefined> {
  const source = deps.scopes;
  if (!source) return CONTINUE;
  // `name@1` asks about that major's own definition (C2): its capabilities may differ.
  const ref = parseToolRef(toolRef);
  if (!ref) return CONTINUE;
  const candidates =
    ref.major === null
      ? await source.catalog.offered()
      : (await source.catalog.offeredMajors()).filter((t) => majorOf(t.version) === ref.major);
  return refusalFor(
    deps,
    principal,
    candidates.filter((tool) => tool.name === ref.name || tool.id === ref.name),
  );
}

/** The first of `tools` the agent is granted whose needs the token's scopes miss, as a refusal. */
async function refusalFor(
  deps: Pick<StepDependencies, 'scopes' | 'identities'>,
  principal: AgentPrincipal,
  tools: readonly Pick<ToolVersionDetail, 'definition'>[],
): Promise<Refusal | undefined> {
  const source = deps.scopes;
  if (!source || !principal.user) return CONTINUE;
  const held = new Set(principal.user.permissions);
  const agent = await deps.identities.agent(principal.agentId).catch(() => null);
  if (!agent?.enabled) return CONTINUE;
  const granted = new Set(agent.capabilities);
  for (const tool of tools) {
    const needed = tool.definition.required_capabilities;
    // Beyond the agent's own grants no scope helps: refused as usual, saying nothing.
    if (!needed.every((c) => granted.has(c))) continue;
    const missing = needed.filter((c) => !held.has(c));
    if (missing.length === 0) return CONTINUE;
    // Only what this call needs: the client adds it to the scopes it already holds.
    const scopes = scopesFor(source.config, missing);
    if (scopes) return insufficientScope(scopes);
  }
  return CONTINUE;
}

function insufficientScope(scopes: readonly string[]): Refusal {
  return {
    kind: 'refuse',
    code: 'INSUFFICIENT_SCOPE',
    rule: 'oauth.insufficient_scope',
    message: `this token's scopes do not cover the tool; ask for: ${scopes.join(' ')}`,
    details: { scope: scopes.join(' ') },
  };
}
