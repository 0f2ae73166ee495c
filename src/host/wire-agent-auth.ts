/**
 * @module The agent-authentication region of the composition (docs/architecture.md §6): an
 * agent's identity from a bearer credential (API key, agent JWT, or an OAuth access token when
 * configured), the OAuth front (protected resource metadata and scope step-up), the audit of a
 * refused step-up, and the sealer of request states. Moved here as one block from openGateway.
 */
import type { AgentApi, SecurityEvents } from '../api/index.js';
import { expose } from '../api/index.js';
import { isToolgateError } from '../core/index.js';
import { type CatalogService, majorOf, parseToolRef } from '../domain/catalog/index.js';
import type { MasterKey, SubjectTokens } from '../domain/credentials/index.js';
import { REQUEST_STATE_KEY_LABEL, RequestStateSealer } from '../domain/decisions/index.js';
import {
  AccessTokenVerifier,
  type AgentKeys,
  type AgentService,
  type JwtIdentity,
  JwtVerifier,
  protectedResourceMetadata,
  protectedResourceMetadataUrl,
  scopesFor,
  type UserService,
} from '../domain/identity/index.js';
import type { OutboundGuard } from '../execution/sandbox/index.js';
import { attemptedName, type Gate } from '../gate/index.js';
import type { ToolgateOptions } from './toolgate-options.js';

export type AgentAuth = ReturnType<typeof wireAgentAuth>;

interface AgentAuthDeps {
  readonly config: { readonly outbound: OutboundGuard };
  readonly domain: {
    readonly keys: AgentKeys;
    readonly agents: AgentService;
    readonly users: UserService;
    readonly catalog: CatalogService;
  };
  readonly credentials: { readonly subjects: SubjectTokens | null };
  readonly security: SecurityEvents;
  readonly gate: Gate;
  readonly loadMasterKey: () => MasterKey;
}

export function wireAgentAuth(options: ToolgateOptions, deps: AgentAuthDeps) {
  const { outbound } = deps.config;
  const { keys, agents, users, catalog } = deps.domain;
  const { subjects } = deps.credentials;
  const { security } = deps;
  const jwt = options.jwt ? new JwtVerifier(options.jwt, outbound.fetch) : null;
  const oauth = options.oauth ? new AccessTokenVerifier(options.oauth, outbound.fetch) : null;
  const authenticate = async (token: string, peer?: string): Promise<JwtIdentity | null> => {
    const looksLikeJwt = JwtVerifier.looksLikeJwt(token);
    // A token naming a configured authorization server is judged by the OAuth rules alone: it
    // never falls back to the agent-JWT verifier (whose audience is not this resource).
    const verifier = looksLikeJwt && oauth?.claims(token) ? oauth : looksLikeJwt ? jwt : null;
    if (verifier) {
      const identity = await verifier.verify(token);
      // A valid token for an agent toolgate does not know, or has disabled, is no identity.
      if (!identity) return null;
      // A verified token names its caller: refusing it from here on is audited.
      const refuse = async (reason: string): Promise<null> => {
        await security.record('auth.refused', `agent:${identity.agentId}`, {
          credential: identity.credential,
          user: identity.user?.id ?? null,
          reason,
        });
        return null;
      };
      const known = await agents.get(identity.agentId).catch(() => null);
      if (!known?.enabled) return refuse('agent_unknown_or_disabled');
      // Nor is a token acting for a user toolgate has disabled (an API key naming them is
      // refused when the session opens; see SessionService.capabilities).
      if (identity.user && (await users.disabled(identity.user.id))) return refuse('user_disabled');
      // Kept in memory only, for a token exchange of this principal's calls (never stored).
      if (identity.oauth && identity.user)
        subjects?.remember(
          identity.credential,
          identity.user.id,
          { token, issuer: identity.oauth.issuer },
          identity.oauth.expiresAt,
        );
      return identity;
    }
    const key = await keys.verifyKey(token);
    if (key) return { agentId: key.agentId, credential: `key:${key.keyId}` };
    // A key that names a stored key (a wrong secret, a revoked key, a disabled agent) was meant
    // for a known agent: audited, sampled per peer and key (anyone holding a key id may repeat
    // it, round 7 F3). A key naming nothing identifies nobody and is not.
    const named = await keys.namedAgent(token);
    if (named) {
      const details = { credential: `key:${named.keyId}`, reason: 'api_key_refused' };
      const sample = { peer, value: named.keyId };
      await security.sampled('auth.refused', `agent:${named.agentId}`, details, sample);
    }
    return null;
  };
  const oauthFront: AgentApi['oauth'] = oauth
    ? Object.freeze({
        metadata: protectedResourceMetadata(oauth.config),
        metadataUrl: protectedResourceMetadataUrl(oauth.config.resource),
        stepUp: async (identity: JwtIdentity, toolRef: unknown): Promise<string[] | null> => {
          if (!identity.oauth || !identity.user || typeof toolRef !== 'string') return null;
          // A token holding every configured scope can be stepped up to nothing: no look-up on
          // its calls' path.
          const tokenScopes = new Set(identity.oauth.scopes);
          if (Object.keys(oauth.config.scopes).every((scope) => tokenScopes.has(scope)))
            return null;
          const held = new Set(identity.user.permissions);
          const agent = await agents.get(identity.agentId).catch(() => null);
          if (!agent?.enabled) return null;
          const granted = new Set(agent.capabilities);
          // `name@1` asks about that major's own definition (C2): its capabilities may differ.
          const ref = parseToolRef(toolRef);
          if (!ref) return null;
          const candidates =
            ref.major === null
              ? await catalog.offered()
              : (await catalog.offeredMajors()).filter((t) => majorOf(t.version) === ref.major);
          for (const tool of candidates) {
            if (tool.name !== ref.name && tool.id !== ref.name) continue;
            const needed = tool.definition.required_capabilities;
            // Beyond the agent's own grants no scope helps: refused as usual, saying nothing.
            if (!needed.every((c) => granted.has(c))) continue;
            const missing = needed.filter((c) => !held.has(c));
            if (missing.length === 0) return null;
            // Only what this call needs (RFC 6750 §3.1, as MCP 2026-07-28 asks): the client adds
            // it to the scopes it already holds.
            const scopes = scopesFor(oauth.config, missing);
            if (scopes) return scopes;
          }
          return null;
        },
      })
    : null;
  return { authenticate, oauthFront, ...stepUpAndStates(options, deps) };
}

/** The agent API's `auditStepUp` and `requestStates` (the other half of this region). */
function stepUpAndStates(options: ToolgateOptions, deps: AgentAuthDeps) {
  const { security, gate, loadMasterKey } = deps;
  return {
    auditStepUp: async (
      ...[who, toolRef, args, refused, via]: Parameters<AgentApi['auditStepUp']>
    ): Promise<void> => {
      const refusal = {
        kind: 'refuse' as const,
        code: refused.error.code,
        rule: 'oauth.insufficient_scope',
        message: refused.error.message,
        details: refused.error.details,
      };
      const { sessionId, ...principal } = who;
      if (sessionId !== undefined) {
        try {
          await gate.refuseAtEdge({ ...principal, sessionId }, toolRef, args, refusal);
          return;
        } catch (err) {
          // Not the caller's session (that attempt is audited by the session check): the step-up
          // is still recorded, as an event of the principal.
          if (!isToolgateError(err) || err.code !== 'SESSION_NOT_FOUND') throw err;
        }
      }
      await security.record('call.step_up_refused', `agent:${who.agentId}`, {
        credential: who.credential ?? null,
        user: who.tokenUserId ?? null,
        session: sessionId ?? null,
        tool: attemptedName(toolRef),
        scope: refused.error.details.scope,
        via,
      });
    },
    requestStates: expose(
      new RequestStateSealer(
        () => loadMasterKey().derive(REQUEST_STATE_KEY_LABEL),
        options.clock ? { clock: options.clock } : {},
      ),
      ['seal', 'open'],
    ),
  };
}
