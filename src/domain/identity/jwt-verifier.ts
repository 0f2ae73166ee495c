/**
 * @module Agents authenticated by JWT (C4): signature checked against a configured
 * JWKS, issuer, audience and expiry enforced by jose (OAuth access tokens from an authorization
 * server are `oauth/access-token-verifier.ts`, which shares the key sets made here). A token may also carry, through claims the
 * configuration names, the user the agent acts for and that user's permissions.
 */
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  type JWTPayload,
  type JWTVerifyGetKey,
  jwtVerify,
} from 'jose';
import {
  AGENT_ID_PATTERN,
  type AgentPrincipal,
  CAPABILITY_PATTERN,
  endpointUrlProblem,
  MAX_SECRET_FILE_BYTES,
  parseFileText,
  problem,
  readBoundedFile,
  ToolgateError,
} from '../../core/index.js';
import { isLocalUserId } from './user-id.js';

export interface JwtConfig {
  readonly issuer: string;
  readonly audience: string;
  /** Where the signing keys are: a URL (under the outbound rules) or a local JWKS file. */
  readonly jwksUrl?: string;
  readonly jwksFile?: string;
  /** Claim naming the agent; default `sub`. */
  readonly agentClaim?: string;
  /** Claim naming the user the agent acts for, if any. */
  readonly userClaim?: string;
  /** Claim holding the user's permissions: an array, or a space-separated string (OAuth `scope`). */
  readonly permissionsClaim?: string;
  /** Accepted algorithms; default asymmetric only, so a public key can never be used as an HMAC secret. */
  readonly algorithms?: readonly string[];
}

/**
 * What a verifier vouches for: the principal a valid token names, always with its credential
 * (`jwt:["<iss>","<sub>"]`, `oauth:["<iss>","<client>","<sub>"]`) — sessions are bound to it
 * with the agent and the token's user, so another credential of the same agent cannot use them.
 * The user is a local user id from an agent JWT, or `oauth:["<iss>","<sub>"]` from an OAuth
 * access token (user-id.ts), never a bare subject. Only the authenticator (agent-authenticator.ts)
 * hands it on, once it has checked the agent and the user are enabled.
 */
export type VerifiedToken = AgentPrincipal & { readonly credential: string };

/**
 * The signing keys of one issuer: a local JWKS file, or a remote JWKS fetched by jose with its
 * cache and cooldown through the outbound rules' fetch.
 */
export function keySet(
  source: {
    readonly jwksUrl?: string;
    readonly jwksFile?: string;
  },
  /**
   * How a JWKS URL is fetched: the outbound rules' (Outbound.fetch), which decide where it may
   * point at every request. Required for a URL: there is no unchecked default.
   */
  fetchImpl: typeof fetch | null,
): JWTVerifyGetKey {
  if (!source.jwksUrl === !source.jwksFile)
    throw new TypeError('configure exactly one of jwksUrl or jwksFile');
  if (source.jwksFile) return localKeySet(source.jwksFile);
  const p = endpointUrlProblem(source.jwksUrl ?? '');
  if (p) throw new TypeError(`the JWKS URL ${p.message}`);
  if (!fetchImpl) throw new TypeError('a JWKS URL is fetched only under the outbound rules');
  return createRemoteJWKSet(new URL(source.jwksUrl ?? ''), {
    timeoutDuration: 5000,
    cooldownDuration: 30_000,
    [customFetch]: fetchImpl,
  });
}

/**
 * A JWKS file's keys. A file that is no JSON or no key set is INPUT_INVALID naming the file, with a
 * line and column at most: never a quote of its text, which holds keys (a symmetric one is a secret).
 */
function localKeySet(file: string): JWTVerifyGetKey {
  const text = readBoundedFile(file, { option: 'JWKS file', maxBytes: MAX_SECRET_FILE_BYTES });
  const data = parseFileText(text, `JWKS file ${file}`, 'json');
  try {
    return createLocalJWKSet(data as Parameters<typeof createLocalJWKSet>[0]);
  } catch {
    throw new ToolgateError('INPUT_INVALID', `JWKS file ${file}: not a JWK Set ({"keys": [...]})`, {
      problems: [problem('', 'not a JWK Set', 'file.jwks')],
    });
  }
}

const DEFAULT_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'ES384', 'EdDSA'];
const agentRe = new RegExp(AGENT_ID_PATTERN);
const capabilityRe = new RegExp(CAPABILITY_PATTERN);

export class JwtVerifier {
  readonly #config: JwtConfig;
  readonly #keys: JWTVerifyGetKey;

  constructor(config: JwtConfig, fetchImpl: typeof fetch | null) {
    this.#config = config;
    this.#keys = keySet(config, fetchImpl);
  }

  /** Looks like a JWT (three base64url parts); cheap, decides which verifier to try. */
  static looksLikeJwt(token: string): boolean {
    return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);
  }

  /** The identity in a valid token, or null for anything else (never says why to the caller). */
  async verify(token: string): Promise<VerifiedToken | null> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.#keys, {
        issuer: this.#config.issuer,
        audience: this.#config.audience,
        algorithms: [...(this.#config.algorithms ?? DEFAULT_ALGORITHMS)],
        requiredClaims: ['exp'],
        clockTolerance: 5,
      }));
    } catch {
      return null;
    }
    const agentId = payload[this.#config.agentClaim ?? 'sub'];
    if (typeof agentId !== 'string' || !agentRe.test(agentId)) return null;
    // JSON keeps issuer and subject apart whatever characters they hold.
    const credential = `jwt:${JSON.stringify([payload.iss ?? '', payload.sub ?? ''])}`;
    const userClaim = this.#config.userClaim;
    if (!userClaim || payload[userClaim] === undefined)
      return { kind: 'agent', agentId, credential };
    const userId = payload[userClaim];
    // The configured agent-JWT issuer names toolgate's own (local) users: an id in another form
    // could pass for an OAuth user (user-id.ts), so the token is refused.
    if (typeof userId !== 'string' || !isLocalUserId(userId)) return null;
    const raw = this.#config.permissionsClaim ? payload[this.#config.permissionsClaim] : undefined;
    const list =
      typeof raw === 'string'
        ? raw.split(' ').filter((p) => p !== '')
        : Array.isArray(raw)
          ? raw
          : [];
    // A malformed permission invalidates the token rather than being skipped silently.
    if (!list.every((p): p is string => typeof p === 'string' && capabilityRe.test(p))) return null;
    return { kind: 'agent', agentId, credential, user: { id: userId, permissions: list } };
  }
}
