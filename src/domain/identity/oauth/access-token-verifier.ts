/**
 * @module OAuth 2.1 access tokens (MCP authorization, RFC 9068 JWTs) from a configured
 * authorization server: accepted only when issued by a trusted issuer (compared exactly), signed
 * by one of its keys with an asymmetric algorithm, within exp/nbf, and minted for this resource
 * (audience = the resource, RFC 8707). The client is mapped to a registered agent by
 * configuration (an unmapped client is refused), the user is the pair (issuer, `sub`) — never the
 * bare subject, so two issuers' `alice` are two users (user-id.ts) — and the scopes become the
 * capabilities the token may use — which narrow the agent's grants, never widen them.
 */
import { decodeJwt, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from 'jose';
import { AGENT_ID_PATTERN, isPrintableName } from '../../../core/index.js';
import { keySet, type VerifiedToken } from '../jwt-verifier.js';
import { oauthUserId } from '../user-id.js';
import type { OAuthResourceServerConfig } from './resource-server-config.js';

const DEFAULT_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'ES384', 'EdDSA'];
const agentRe = new RegExp(AGENT_ID_PATTERN);

/** The scopes of a token: RFC 9068 `scope` (space-separated), or an array in `scp`. */
function scopesOf(payload: JWTPayload): string[] | null {
  const raw = payload.scope ?? payload.scp;
  if (raw === undefined) return [];
  if (typeof raw === 'string') return raw.split(' ').filter((s) => s !== '');
  if (Array.isArray(raw) && raw.every((s): s is string => typeof s === 'string')) return raw;
  return null;
}

export class AccessTokenVerifier {
  readonly #config: OAuthResourceServerConfig;
  readonly #keys: ReadonlyMap<string, JWTVerifyGetKey>;

  /** `fetchImpl`: how JWKS URLs are fetched (the gateway passes its Outbound rules). */
  constructor(config: OAuthResourceServerConfig, fetchImpl: typeof fetch | null) {
    this.#config = config;
    this.#keys = new Map(config.issuers.map((i) => [i.issuer, keySet(i, fetchImpl)]));
  }

  get config(): OAuthResourceServerConfig {
    return this.#config;
  }

  /** Whether `iss` of this (unverified) JWT names a configured issuer: which verifier to try. */
  claims(token: string): boolean {
    try {
      const iss = decodeJwt(token).iss;
      return typeof iss === 'string' && this.#keys.has(iss);
    } catch {
      return false;
    }
  }

  /** The identity in a valid access token, or null for anything else (never says why). */
  async verify(token: string): Promise<VerifiedToken | null> {
    let payload: JWTPayload;
    try {
      // The issuer picks the keys; jose then checks the signature against only those, and the
      // claims it signed: the unverified `iss` read here decides nothing on its own.
      const iss = decodeJwt(token).iss;
      const keys = typeof iss === 'string' ? this.#keys.get(iss) : undefined;
      if (!keys || typeof iss !== 'string') return null;
      ({ payload } = await jwtVerify(token, keys, {
        issuer: iss,
        audience: this.#config.resource,
        algorithms: [...(this.#config.algorithms ?? DEFAULT_ALGORITHMS)],
        requiredClaims: ['exp', 'sub'],
        clockTolerance: 5,
      }));
    } catch {
      return null;
    }
    // Exactly this resource: a token also addressed to another API could be replayed between the
    // two (jose accepts a list that merely includes it).
    if (Array.isArray(payload.aud) && payload.aud.some((a) => a !== this.#config.resource))
      return null;
    const clientClaim = this.#config.clientClaim;
    const client = clientClaim ? payload[clientClaim] : (payload.client_id ?? payload.azp);
    if (typeof client !== 'string' || !Object.hasOwn(this.#config.clients, client)) return null;
    const agentId = this.#config.clients[client];
    if (typeof agentId !== 'string' || !agentRe.test(agentId)) return null;
    const subject = payload[this.#config.userClaim ?? 'sub'];
    if (typeof subject !== 'string' || subject.length === 0 || subject.length > 200) return null;
    // A subject that would not read as what it is (a bidi override, a zero-width character, a
    // control) names nobody: the user's id is shown to the people who decide its calls (attack
    // round 15, R1).
    if (!isPrintableName(subject)) return null;
    // The issuer jose verified (exactly a configured one) is part of who the user is.
    const issuer = payload.iss;
    if (typeof issuer !== 'string') return null;
    const scopes = scopesOf(payload);
    if (scopes === null) return null;
    const permissions = new Set<string>();
    for (const scope of scopes) {
      if (!Object.hasOwn(this.#config.scopes, scope)) continue;
      for (const capability of this.#config.scopes[scope] ?? []) permissions.add(capability);
    }
    // JSON keeps issuer, client and subject apart whatever characters they hold.
    const credential = `oauth:${JSON.stringify([issuer, client, payload.sub ?? ''])}`;
    return {
      kind: 'agent',
      agentId,
      credential,
      user: { id: oauthUserId(issuer, subject), permissions: [...permissions].sort() },
      oauth: { issuer, scopes, expiresAt: (payload.exp ?? 0) * 1000 },
    };
  }
}
