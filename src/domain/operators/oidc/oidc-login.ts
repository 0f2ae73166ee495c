/**
 * @module The OpenID Connect relying party: authorization code flow with PKCE (S256), a random
 * state and nonce, the code exchanged at the provider's token endpoint, the ID token verified
 * against the provider's JWKS (signature, algorithm, issuer, audience, azp, nonce, expiry), and
 * its claims mapped to an operator identity. Every failure throws OIDC_LOGIN_FAILED; the browser
 * is shown only OIDC_BROWSER_MESSAGE.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  createRemoteJWKSet,
  customFetch,
  type JWTPayload,
  errors as joseErrors,
  jwtVerify,
} from 'jose';
import { type Clock, type Outbound, systemClock } from '../../../core/index.js';
import type { OperatorRole } from '../operator.js';
import { claimValues, mapRoles, mapTeams } from './oidc-claims.js';
import type { OidcConfig } from './oidc-config.js';
import { boundedJson, discoverProvider, type OidcProviderMetadata } from './oidc-discovery.js';
import { oidcFailure } from './oidc-failure.js';

/** What `admin.operators.fromOidc` takes: who the provider says signed in, and what they may do. */
export interface OidcIdentity {
  readonly issuer: string;
  readonly subject: string;
  readonly name: string;
  readonly email?: string;
  readonly roles: readonly OperatorRole[];
  readonly teams: readonly string[];
}

/**
 * A login between `begin` and `complete`. Plain and serializable; it holds the PKCE verifier, so
 * it is kept server-side (never in the browser), used once, and expires after PENDING_TTL_MS.
 */
export interface PendingOidcLogin {
  readonly state: string;
  readonly nonce: string;
  readonly codeVerifier: string;
  readonly redirectUri: string;
  /** Epoch milliseconds. */
  readonly createdAt: number;
  readonly expiresAt: number;
}

export interface OidcLoginOptions {
  /**
   * The outbound rules every request to the provider goes under (discovery, token, JWKS, and the
   * endpoints discovery names): the gateway's, so loopback only where its admin allowed it.
   */
  readonly outbound: Outbound;
  readonly clock?: Clock;
  /** Allowed clock difference with the provider for exp/iat/nbf (seconds). */
  readonly clockToleranceSeconds?: number;
  /** Per request to the provider (discovery, token, JWKS). */
  readonly timeoutMs?: number;
}

export const PENDING_TTL_MS = 10 * 60_000;
const DISCOVERY_TTL_MS = 60 * 60_000;
const MAX_TOKEN_RESPONSE_BYTES = 256 * 1024;
const MAX_CONSUMED = 10_000;
const MAX_NAME = 200;

function random(): string {
  return randomBytes(32).toString('base64url');
}

/** Equal without a timing side channel: both sides are hashed to one length first. */
function sameSecret(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

function text(value: unknown, max: number): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value.slice(0, max) : undefined;
}

export class OidcLogin {
  readonly #config: OidcConfig;
  readonly #clock: Clock;
  readonly #tolerance: number;
  readonly #timeoutMs: number;
  readonly #outbound: Outbound;
  #provider: { at: number; metadata: Promise<OidcProviderMetadata> } | null = null;
  #jwks: { uri: string; keys: ReturnType<typeof createRemoteJWKSet> } | null = null;
  /** States already completed here, until they expire: a replayed callback is refused. */
  readonly #consumed = new Map<string, number>();

  constructor(config: OidcConfig, options: OidcLoginOptions) {
    this.#config = config;
    this.#outbound = options.outbound;
    this.#clock = options.clock ?? systemClock;
    this.#tolerance = options.clockToleranceSeconds ?? 60;
    this.#timeoutMs = options.timeoutMs ?? 5_000;
  }

  get issuer(): string {
    return this.#config.issuer;
  }

  /** The provider's checked metadata, cached for an hour; a failed discovery is not cached. */
  metadata(): Promise<OidcProviderMetadata> {
    const now = Date.now();
    if (!this.#provider || now - this.#provider.at > DISCOVERY_TTL_MS) {
      const metadata = discoverProvider(this.#config.issuer, this.#timeoutMs, this.#outbound);
      const entry = { at: now, metadata };
      this.#provider = entry;
      metadata.catch(() => {
        if (this.#provider === entry) this.#provider = null;
      });
    }
    return this.#provider.metadata;
  }

  /** Where to send the browser, and the pending login to keep server-side until it returns. */
  async begin(): Promise<{ url: string; pending: PendingOidcLogin }> {
    const metadata = await this.metadata();
    const now = this.#clock().getTime();
    const pending: PendingOidcLogin = {
      state: random(),
      nonce: random(),
      codeVerifier: random(),
      redirectUri: this.#config.redirectUri,
      createdAt: now,
      expiresAt: now + PENDING_TTL_MS,
    };
    const url = new URL(metadata.authorization_endpoint);
    const params: Record<string, string> = {
      response_type: 'code',
      client_id: this.#config.clientId,
      redirect_uri: pending.redirectUri,
      scope: this.#config.scopes.join(' '),
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: createHash('sha256').update(pending.codeVerifier).digest('base64url'),
      code_challenge_method: 'S256',
    };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    return { url: url.toString(), pending };
  }

  /**
   * Finishes a login from the redirect's query. Never returns an identity without a verified ID
   * token of this login (its nonce) and at least one mapped role.
   * A callback whose state matches uses the login up here, whatever its outcome; one whose state
   * does not leaves it for the real callback.
   */
  async complete(
    pending: PendingOidcLogin,
    query: Readonly<Record<string, string>>,
  ): Promise<OidcIdentity> {
    const now = this.#clock().getTime();
    // A pending login this class did not make (empty or short secrets) matches nothing.
    if (
      ![pending.state, pending.nonce, pending.codeVerifier].every(
        (v) => typeof v === 'string' && v.length >= 43,
      )
    )
      throw oidcFailure('state_mismatch', 'the pending login is malformed');
    if (!(now < pending.expiresAt))
      throw oidcFailure('login_expired', 'the login expired before it returned');
    const state = query.state;
    if (typeof state !== 'string' || !sameSecret(state, pending.state))
      throw oidcFailure('state_mismatch', 'the state returned is not the login’s');
    this.#consume(pending.state, pending.expiresAt, now);
    if (query.error !== undefined)
      throw oidcFailure(
        'provider_error',
        `the provider answered ${JSON.stringify(query.error.slice(0, 100))}`,
      );
    // RFC 9207: an authorization response naming another issuer (or none, where the provider
    // says it always names itself) is a mix-up; refused.
    const { iss_in_response } = await this.metadata();
    if (
      (query.iss === undefined && iss_in_response) ||
      (query.iss !== undefined && query.iss !== this.#config.issuer)
    )
      throw oidcFailure(
        'issuer_mismatch',
        `the authorization response names issuer ${JSON.stringify((query.iss ?? '(none)').slice(0, 200))}`,
      );
    const code = query.code;
    if (!code) throw oidcFailure('provider_error', 'the redirect carries no code');
    const idToken = await this.#exchange(code, pending);
    return this.verifyIdToken(idToken, pending);
  }

  /** Verifies an ID token for this login and maps it; exported for what arrives without `complete`. */
  async verifyIdToken(idToken: string, pending: PendingOidcLogin): Promise<OidcIdentity> {
    const metadata = await this.metadata();
    if (this.#jwks?.uri !== metadata.jwks_uri) {
      this.#jwks = {
        uri: metadata.jwks_uri,
        keys: createRemoteJWKSet(new URL(metadata.jwks_uri), {
          timeoutDuration: this.#timeoutMs,
          [customFetch]: this.#outbound.fetch,
        }),
      };
    }
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(idToken, this.#jwks.keys, {
        issuer: this.#config.issuer,
        audience: this.#config.clientId,
        algorithms: [...this.#config.allowedAlgs],
        clockTolerance: this.#tolerance,
        currentDate: this.#clock(),
        requiredClaims: ['sub', 'iat', 'exp'],
      }));
    } catch (err) {
      const why = err instanceof joseErrors.JOSEError ? `${err.code}: ${err.message}` : String(err);
      throw oidcFailure('id_token_invalid', `the ID token was refused (${why})`);
    }
    // jose checks exp and nbf; a token issued in the future (beyond the skew) is refused too.
    if (
      typeof claims.iat !== 'number' ||
      claims.iat > this.#clock().getTime() / 1000 + this.#tolerance
    )
      throw oidcFailure('id_token_invalid', 'the ID token was issued in the future (iat)');
    const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
    // OIDC Core §3.1.3.7: with several audiences, azp names the client it was issued to.
    if (claims.azp !== undefined ? claims.azp !== this.#config.clientId : aud.length > 1)
      throw oidcFailure('id_token_invalid', 'the ID token was issued to another client (azp)');
    if (typeof claims.nonce !== 'string' || !sameSecret(claims.nonce, pending.nonce))
      throw oidcFailure('nonce_mismatch', 'the ID token’s nonce is not this login’s');
    const subject = text(claims.sub, 255);
    if (!subject) throw oidcFailure('id_token_invalid', 'the ID token has no subject');
    const record = claims as Record<string, unknown>;
    const roles = mapRoles(claimValues(record, this.#config.rolesClaim), this.#config.roleMap);
    if (roles.length === 0)
      throw oidcFailure(
        'no_role',
        `subject ${subject} has no role mapped from claim ${this.#config.rolesClaim}`,
      );
    const email = text(claims.email, 320);
    return {
      issuer: this.#config.issuer,
      subject,
      name:
        text(claims.name, MAX_NAME) ??
        text(claims.preferred_username, MAX_NAME) ??
        email ??
        subject,
      ...(email ? { email } : {}),
      roles,
      teams: mapTeams(claimValues(record, this.#config.teamsClaim)),
    };
  }

  #consume(state: string, expiresAt: number, now: number): void {
    for (const [s, exp] of this.#consumed) {
      if (exp <= now) this.#consumed.delete(s);
    }
    if (this.#consumed.has(state))
      throw oidcFailure('state_replayed', 'this login was already completed');
    if (this.#consumed.size >= MAX_CONSUMED) {
      // Oldest first; it is refused by the provider too (codes are single use).
      const oldest = this.#consumed.keys().next();
      if (!oldest.done) this.#consumed.delete(oldest.value);
    }
    this.#consumed.set(state, expiresAt);
  }

  async #exchange(code: string, pending: PendingOidcLogin): Promise<string> {
    const metadata = await this.metadata();
    const body = new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: pending.redirectUri,
      code_verifier: pending.codeVerifier,
    });
    const headers: Record<string, string> = {
      accept: 'application/json',
      'content-type': 'application/x-www-form-urlencoded',
    };
    const secret = this.#config.clientSecret;
    if (secret !== undefined) {
      // RFC 6749 §2.3.1: both halves form-urlencoded before the Basic encoding.
      const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
      headers.authorization = `Basic ${Buffer.from(`${enc(this.#config.clientId)}:${enc(secret)}`).toString('base64')}`;
    } else {
      body.set('client_id', this.#config.clientId);
    }
    let res: Response;
    try {
      res = await this.#outbound.fetch(metadata.token_endpoint, {
        method: 'POST',
        headers,
        body,
        redirect: 'error',
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (err) {
      throw oidcFailure(
        'token_exchange',
        `the token endpoint could not be reached (${err instanceof Error ? err.message : String(err)})`,
      );
    }
    const doc = await boundedJson(res, MAX_TOKEN_RESPONSE_BYTES).catch(() => null);
    const d = typeof doc === 'object' && doc !== null ? (doc as Record<string, unknown>) : {};
    if (!res.ok) {
      const error = typeof d.error === 'string' ? d.error.slice(0, 100) : 'no error code';
      throw oidcFailure(
        'token_exchange',
        `the token endpoint answered HTTP ${res.status} (${error})`,
      );
    }
    if (typeof d.id_token !== 'string')
      throw oidcFailure('token_exchange', 'the token response carries no ID token');
    return d.id_token;
  }
}
