/**
 * @module The one authenticator of agents (docs/architecture.md §2, docs/security-model.md "Who
 * is asking"): a bearer credential — an API key, an agent JWT, or an OAuth access token — becomes
 * an AgentPrincipal once, at the edge, for REST, MCP over HTTP and stdio, and the library alike;
 * every front and service after it carries that principal and never re-derives the caller. It
 * decides only who is calling; what the principal may do is decided by the gate (its scope step
 * for an OAuth token's scopes), on each call.
 */
import type { AgentPrincipal } from '../../core/index.js';
import type { AgentKeys } from './agent-keys.js';
import { JwtVerifier, type VerifiedToken } from './jwt-verifier.js';
import type { AccessTokenVerifier } from './oauth/access-token-verifier.js';

/**
 * Where refusals of a credential that named a caller are recorded (`auth.refused`): a security
 * event, filled in by host/ (a credential naming nobody is not recorded).
 */
export interface AuthRefusals {
  record(action: string, subject: string, details: Record<string, unknown>): Promise<void>;
  /** For a refusal anyone holding a key id may repeat: sampled per peer and key. */
  sampled(
    action: string,
    subject: string,
    details: Record<string, unknown>,
    key: { readonly peer?: string | undefined; readonly value: string },
  ): Promise<void>;
}

export interface AgentAuthenticatorDeps {
  readonly agents: { get(id: string): Promise<{ readonly enabled: boolean }> };
  readonly users: { disabled(id: string): Promise<boolean> };
  readonly keys: Pick<AgentKeys, 'verifyKey' | 'namedAgent'>;
  /** Agent JWTs, when configured. */
  readonly jwt: Pick<JwtVerifier, 'verify'> | null;
  /** OAuth access tokens (MCP authorization), when a resource server is configured. */
  readonly oauth: Pick<AccessTokenVerifier, 'verify' | 'claims'> | null;
  /** Subject tokens kept in memory for a token exchange of the principal's calls. */
  readonly subjects: {
    remember(
      credential: string,
      userId: string,
      subject: { readonly token: string; readonly issuer: string },
      expiresAtMs: number,
    ): void;
  } | null;
  readonly refusals: AuthRefusals;
}

export class AgentAuthenticator {
  readonly #deps: AgentAuthenticatorDeps;

  constructor(deps: AgentAuthenticatorDeps) {
    this.#deps = deps;
  }

  /**
   * The principal a bearer credential proves, or null (never says why to the caller). A token
   * naming a known caller that is refused from here on — an unknown or disabled agent, a disabled
   * user, a stored key with a wrong secret — is recorded as `auth.refused`.
   */
  async authenticate(token: string, peer?: string): Promise<AgentPrincipal | null> {
    const { jwt, oauth, keys, refusals } = this.#deps;
    const looksLikeJwt = JwtVerifier.looksLikeJwt(token);
    // A token naming a configured authorization server is judged by the OAuth rules alone: it
    // never falls back to the agent-JWT verifier (whose audience is not this resource).
    const verifier = looksLikeJwt && oauth?.claims(token) ? oauth : looksLikeJwt ? jwt : null;
    if (verifier) {
      const verified = await verifier.verify(token);
      // A valid token for an agent toolgate does not know, or has disabled, is no principal.
      return verified ? this.#admit(verified, token) : null;
    }
    const key = await keys.verifyKey(token);
    if (key) return { kind: 'agent', agentId: key.agentId, credential: `key:${key.keyId}` };
    // A key that names a stored key (a wrong secret, a revoked key, a disabled agent) was meant
    // for a known agent: audited, sampled per peer and key (anyone holding a key id may repeat
    // it, round 7 F3). A key naming nothing identifies nobody and is not.
    const named = await keys.namedAgent(token);
    if (named) {
      const details = { credential: `key:${named.keyId}`, reason: 'api_key_refused' };
      const sample = { peer, value: named.keyId };
      await refusals.sampled('auth.refused', `agent:${named.agentId}`, details, sample);
    }
    return null;
  }

  /** A verified token's principal, if its agent and user are enabled now. */
  async #admit(verified: VerifiedToken, token: string): Promise<AgentPrincipal | null> {
    // A verified token names its caller: refusing it from here on is audited.
    const refuse = async (reason: string): Promise<null> => {
      await this.#deps.refusals.record('auth.refused', `agent:${verified.agentId}`, {
        credential: verified.credential,
        user: verified.user?.id ?? null,
        reason,
      });
      return null;
    };
    const known = await this.#deps.agents.get(verified.agentId).catch(() => null);
    if (!known?.enabled) return refuse('agent_unknown_or_disabled');
    // Nor is a token acting for a user toolgate has disabled (an API key naming them is
    // refused when the session opens; see SessionService.capabilities).
    if (verified.user && (await this.#deps.users.disabled(verified.user.id)))
      return refuse('user_disabled');
    // Kept in memory only, for a token exchange of this principal's calls (never stored).
    if (verified.oauth && verified.user)
      this.#deps.subjects?.remember(
        verified.credential,
        verified.user.id,
        { token, issuer: verified.oauth.issuer },
        verified.oauth.expiresAt,
      );
    return verified;
  }
}
