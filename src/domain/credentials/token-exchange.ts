/**
 * @module OAuth 2.0 Token Exchange (RFC 8693) for upstream APIs: instead of a stored secret, an
 * `http` tool configured for it gets a token the authorization server issues for the upstream
 * (audience / resource) on behalf of the user whose access token the call came with. toolgate
 * authenticates as its own client; the caller's token never goes upstream. The token endpoint
 * belongs to one issuer, and only that issuer's tokens are sent there: another trusted issuer's
 * token is refused here, before anything leaves (a credential goes only where it belongs).
 * Exchanged tokens are cached per subject token and upstream until shortly before they expire;
 * none is ever logged.
 */
import { createHash } from 'node:crypto';
import {
  endpointUrlProblem,
  MAX_SECRET_FILE_BYTES,
  readBoundedFile,
  regularFileStats,
  ToolgateError,
} from '../../core/index.js';
import type { SubjectToken } from './subject-tokens.js';

export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

/** The upstream a tool's exchanged token is for. */
export interface ExchangeTarget {
  /** RFC 8693 `audience`: the upstream as the AS names it. */
  readonly audience?: string;
  /** RFC 8707 `resource`: the upstream's URL. At least one of the two. */
  readonly resource?: string;
  readonly scope?: string;
}

export interface TokenExchangeConfig {
  /** The issuer the token endpoint belongs to: only its tokens are exchanged there. */
  readonly issuer: string;
  /** The authorization server's token endpoint (under the outbound rules). */
  readonly tokenEndpoint: string;
  /** toolgate's own client at the AS, authenticated with client_secret_basic. */
  readonly clientId: string;
  readonly clientSecret: string;
  /** Tool id → the upstream its token is exchanged for. Tools not listed use their own secret. */
  readonly tools: Readonly<Record<string, ExchangeTarget>>;
  /** An exchanged token is not reused this close to its expiry; default 30 s. */
  readonly refreshMarginSeconds?: number;
  /** Give up on the AS after this long; default 5 s. */
  readonly timeoutMs?: number;
}

interface Cached {
  readonly token: string;
  readonly expiresAt: number;
}

const MAX_CACHED = 10_000;
/** When the AS states no lifetime, an exchanged token is reused for this long at most. */
const DEFAULT_LIFETIME_S = 60;

export class TokenExchangeError extends Error {
  readonly reason:
    | 'exchange_refused'
    | 'exchange_unreachable'
    | 'exchange_malformed'
    | 'exchange_foreign_issuer';
  constructor(reason: TokenExchangeError['reason'], message: string) {
    super(message);
    this.reason = reason;
  }
}

export class TokenExchanger {
  readonly #config: TokenExchangeConfig;
  readonly #cache = new Map<string, Cached>();
  readonly #now: () => number;
  readonly #fetch: typeof fetch;

  constructor(
    config: TokenExchangeConfig,
    /**
     * `fetch`: how the token endpoint is reached — the outbound rules' (Outbound.fetch), which
     * decide where it may point (resolved, public addresses, loopback only with the admin's
     * setting) at every request. Required: there is no unchecked default.
     */
    options: { now?: () => number; fetch: typeof fetch },
  ) {
    const p = endpointUrlProblem(config.tokenEndpoint);
    if (p) throw new TypeError(`the token endpoint ${p.message}`);
    for (const [tool, target] of Object.entries(config.tools)) {
      if (!target.audience && !target.resource)
        throw new TypeError(`token exchange for ${tool} needs an audience or a resource`);
    }
    this.#config = config;
    this.#now = options.now ?? Date.now;
    this.#fetch = options.fetch;
  }

  /** Whether calls of `toolId` get an exchanged token (and never a stored secret). */
  covers(toolId: string): boolean {
    return Object.hasOwn(this.#config.tools, toolId);
  }

  /**
   * A token for `toolId`'s upstream on behalf of the subject token's user. Throws
   * TokenExchangeError (whose message never holds a token) when the subject token is of another
   * issuer than the endpoint's (nothing is sent), or when the AS refuses or cannot be reached;
   * never returns the subject token itself.
   */
  async exchange(toolId: string, subject: SubjectToken): Promise<string> {
    const target = this.#config.tools[toolId];
    if (!target) throw new TokenExchangeError('exchange_refused', `no exchange for ${toolId}`);
    // Exact comparison with the issuer the token was verified against: another issuer's token
    // never reaches this endpoint, whatever the token's own claims say.
    if (subject.issuer !== this.#config.issuer)
      throw new TokenExchangeError(
        'exchange_foreign_issuer',
        "the caller's access token is of another issuer than the token endpoint's; it was not sent",
      );
    const subjectToken = subject.token;
    // The cache key holds a hash of the subject token, never the token.
    const key = createHash('sha256')
      .update(
        JSON.stringify([
          subjectToken,
          target.audience ?? '',
          target.resource ?? '',
          target.scope ?? '',
        ]),
      )
      .digest('base64url');
    const cached = this.#cache.get(key);
    const margin = (this.#config.refreshMarginSeconds ?? 30) * 1000;
    if (cached && cached.expiresAt - margin > this.#now()) return cached.token;
    this.#cache.delete(key);

    const form = new URLSearchParams({
      grant_type: TOKEN_EXCHANGE_GRANT,
      subject_token: subjectToken,
      subject_token_type: ACCESS_TOKEN_TYPE,
      requested_token_type: ACCESS_TOKEN_TYPE,
    });
    if (target.audience) form.set('audience', target.audience);
    if (target.resource) form.set('resource', target.resource);
    if (target.scope) form.set('scope', target.scope);
    // RFC 6749 §2.3.1: the client id and secret are form-urlencoded before Basic.
    const basic = Buffer.from(
      `${encodeURIComponent(this.#config.clientId)}:${encodeURIComponent(this.#config.clientSecret)}`,
    ).toString('base64');
    let res: Response;
    try {
      res = await this.#fetch(this.#config.tokenEndpoint, {
        method: 'POST',
        headers: {
          authorization: `Basic ${basic}`,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: form.toString(),
        redirect: 'error',
        signal: AbortSignal.timeout(this.#config.timeoutMs ?? 5000),
      });
    } catch {
      throw new TokenExchangeError(
        'exchange_unreachable',
        'the authorization server did not answer',
      );
    }
    let body: { access_token?: unknown; expires_in?: unknown; error?: unknown };
    try {
      body = (await res.json()) as typeof body;
    } catch {
      throw new TokenExchangeError('exchange_malformed', 'the authorization server sent no JSON');
    }
    if (!res.ok) {
      const error = typeof body.error === 'string' ? body.error.slice(0, 60) : String(res.status);
      throw new TokenExchangeError(
        'exchange_refused',
        `the authorization server refused: ${error}`,
      );
    }
    if (typeof body.access_token !== 'string' || body.access_token === '')
      throw new TokenExchangeError('exchange_malformed', 'the answer holds no access token');
    // Anything else means the AS handed back what it was given: never send that upstream.
    if (body.access_token === subjectToken)
      throw new TokenExchangeError('exchange_malformed', 'the AS returned the subject token');
    const lifetime =
      typeof body.expires_in === 'number' && body.expires_in > 0
        ? body.expires_in
        : DEFAULT_LIFETIME_S;
    this.#cache.set(key, { token: body.access_token, expiresAt: this.#now() + lifetime * 1000 });
    if (this.#cache.size > MAX_CACHED) {
      const oldest = this.#cache.keys().next().value;
      if (oldest !== undefined) this.#cache.delete(oldest);
    }
    return body.access_token;
  }
}

/** toolgate's client secret at the authorization server: a file no one else may read. */
export function readClientSecretFile(path: string): string {
  try {
    if ((regularFileStats(path, 'client secret file').mode & 0o077) !== 0)
      throw new TypeError(`${path} is readable by group or others: chmod 600 ${path}`);
    const secret = readBoundedFile(path, {
      option: 'client secret file',
      maxBytes: MAX_SECRET_FILE_BYTES,
      unreadable: (message) => new TypeError(message),
    }).trim();
    if (secret === '') throw new TypeError(`${path} is empty`);
    return secret;
  } catch (err) {
    throw new ToolgateError(
      'INPUT_INVALID',
      `the token-exchange client secret cannot be used: ${err instanceof Error ? err.message : `cannot read ${path}`}`,
      { problems: [] },
    );
  }
}
