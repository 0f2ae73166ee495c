/**
 * @module The OAuth 2.1 resource-server configuration (MCP authorization): which authorization
 * servers toolgate trusts, the resource it is (RFC 8707 / RFC 9728), and how a token's claims and
 * scopes map to a registered agent, a user and capabilities. Validated as data when toolgate
 * starts, so a wrong configuration is an error at start, never a door left open at run time.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import {
  ASYMMETRIC_JWS_ALGS,
  CAPABILITY_PATTERN,
  endpointUrlProblem,
  type Problem,
  problem,
  ToolgateError,
} from '../../../core/index.js';

export interface OAuthIssuer {
  /** The authorization server's issuer identifier, compared exactly with a token's `iss`. */
  readonly issuer: string;
  /** Its signing keys: a URL (fetched under the outbound rules) or a local JWKS file. */
  readonly jwksUrl?: string;
  readonly jwksFile?: string;
}

export interface OAuthResourceServerConfig {
  /** The public URL of this resource (the /mcp endpoint); a token's audience must be exactly it. */
  readonly resource: string;
  readonly issuers: readonly OAuthIssuer[];
  /**
   * Claim naming the OAuth client (RFC 9068 `client_id`; `azp` is tried next when this is not
   * set). The client is mapped to a registered agent by `clients`; an unmapped client is refused.
   */
  readonly clientClaim?: string;
  /** OAuth client id → agent id. Deny by default: a client not listed here is no agent. */
  readonly clients: Readonly<Record<string, string>>;
  /** Claim naming the user the agent acts for; default `sub`. */
  readonly userClaim?: string;
  /**
   * Scope → the capabilities it lets a token use. A token's capabilities are the union over its
   * scopes; the agent's grants still apply on top (a token narrows, never widens).
   */
  readonly scopes: Readonly<Record<string, readonly string[]>>;
  /** Accepted signature algorithms; default asymmetric only. */
  readonly algorithms?: readonly string[];
  /**
   * OAuth 2.0 token exchange (RFC 8693) for upstream http tools: toolgate, as its own client at
   * the AS, exchanges the calling user's access token for one minted for the tool's upstream.
   */
  readonly tokenExchange?: OAuthTokenExchange;
}

export interface OAuthTokenExchange {
  /**
   * The issuer (one of `issuers`) whose token endpoint this is: only that issuer's access tokens
   * are exchanged there. May be left out when exactly one issuer is trusted.
   */
  readonly issuer?: string;
  readonly tokenEndpoint: string;
  readonly clientId: string;
  /** A file (mode 0600) holding toolgate's client secret at the AS. */
  readonly clientSecretFile: string;
  /** Tool id → the upstream (`audience` and/or `resource`, optional `scope`). */
  readonly tools: Readonly<
    Record<
      string,
      { readonly audience?: string; readonly resource?: string; readonly scope?: string }
    >
  >;
}

const schema = {
  type: 'object',
  additionalProperties: false,
  required: ['resource', 'issuers', 'clients', 'scopes'],
  properties: {
    resource: { type: 'string', minLength: 1 },
    issuers: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['issuer'],
        properties: {
          issuer: { type: 'string', minLength: 1 },
          jwksUrl: { type: 'string', minLength: 1 },
          jwksFile: { type: 'string', minLength: 1 },
        },
      },
    },
    clientClaim: { type: 'string', minLength: 1 },
    clients: {
      type: 'object',
      additionalProperties: { type: 'string', minLength: 1 },
    },
    userClaim: { type: 'string', minLength: 1 },
    scopes: {
      type: 'object',
      propertyNames: { pattern: '^[\\x21\\x23-\\x5b\\x5d-\\x7e]+$' },
      additionalProperties: {
        type: 'array',
        items: { type: 'string', pattern: CAPABILITY_PATTERN },
      },
    },
    algorithms: { type: 'array', minItems: 1, items: { enum: [...ASYMMETRIC_JWS_ALGS] } },
    tokenExchange: {
      type: 'object',
      additionalProperties: false,
      required: ['tokenEndpoint', 'clientId', 'clientSecretFile', 'tools'],
      properties: {
        issuer: { type: 'string', minLength: 1 },
        tokenEndpoint: { type: 'string', minLength: 1 },
        clientId: { type: 'string', minLength: 1 },
        clientSecretFile: { type: 'string', minLength: 1 },
        tools: {
          type: 'object',
          additionalProperties: {
            type: 'object',
            additionalProperties: false,
            minProperties: 1,
            properties: {
              audience: { type: 'string', minLength: 1 },
              resource: { type: 'string', minLength: 1 },
              scope: { type: 'string', minLength: 1 },
            },
          },
        },
      },
    },
  },
} as const;

/** Compiled at its first use, not at load (most commands never read this configuration). */
let compiled: ValidateFunction | null = null;
const validator = (): ValidateFunction =>
  (compiled ??= new Ajv({ allErrors: true, strict: false }).compile(schema));

function isLoopback(url: URL): boolean {
  return url.hostname === '127.0.0.1' || url.hostname === 'localhost' || url.hostname === '[::1]';
}

/** https, or plain http on loopback only; no fragment (RFC 8707 §2, RFC 9728 §3). */
function secureUrl(value: string): URL | null {
  try {
    const url = new URL(value);
    if (url.hash !== '' || url.username !== '' || url.password !== '') return null;
    if (url.protocol === 'https:' || (url.protocol === 'http:' && isLoopback(url))) return url;
    return null;
  } catch {
    return null;
  }
}

/**
 * The configuration in `input`, or an `INPUT_INVALID` error listing every problem. Never returns a
 * configuration it could not fully check.
 */
export function parseOAuthConfig(input: unknown): OAuthResourceServerConfig {
  const problems: Problem[] = [];
  const validate = validator();
  if (!validate(input)) {
    for (const e of validate.errors ?? [])
      problems.push(problem(e.instancePath, e.message ?? 'invalid', `schema.${e.keyword}`));
    throw new ToolgateError('INPUT_INVALID', 'the OAuth configuration is invalid', { problems });
  }
  const config = input as OAuthResourceServerConfig;
  if (!secureUrl(config.resource))
    problems.push(problem('/resource', 'must be an https URL without a fragment', 'oauth.config'));
  const seen = new Set<string>();
  config.issuers.forEach((entry, i) => {
    if (!secureUrl(entry.issuer))
      problems.push(problem(`/issuers/${i}/issuer`, 'must be an https URL', 'oauth.config'));
    if (seen.has(entry.issuer))
      problems.push(problem(`/issuers/${i}/issuer`, 'is listed twice', 'oauth.config'));
    seen.add(entry.issuer);
    if (!entry.jwksUrl === !entry.jwksFile)
      problems.push(
        problem(`/issuers/${i}`, 'needs exactly one of jwksUrl or jwksFile', 'oauth.config'),
      );
    // A URL toolgate fetches: only its syntax here; where it may point is the outbound rules',
    // checked when the gateway opens (with its loopback setting) and at each request.
    const jwks = entry.jwksUrl ? endpointUrlProblem(entry.jwksUrl) : null;
    if (jwks)
      problems.push(problem(`/issuers/${i}/jwksUrl`, `jwksUrl ${jwks.message}`, 'oauth.config'));
  });
  if (Object.keys(config.clients).length === 0)
    problems.push(problem('/clients', 'map at least one OAuth client to an agent', 'oauth.config'));
  if (Object.keys(config.scopes).length === 0)
    problems.push(problem('/scopes', 'map at least one scope to capabilities', 'oauth.config'));
  const exchange = config.tokenExchange;
  const endpoint = exchange ? endpointUrlProblem(exchange.tokenEndpoint) : null;
  if (endpoint)
    problems.push(
      problem('/tokenExchange/tokenEndpoint', `tokenEndpoint ${endpoint.message}`, 'oauth.config'),
    );
  if (exchange?.issuer !== undefined && !seen.has(exchange.issuer))
    problems.push(
      problem('/tokenExchange/issuer', 'must be one of the configured issuers', 'oauth.config'),
    );
  if (exchange && exchange.issuer === undefined && config.issuers.length !== 1)
    problems.push(
      problem(
        '/tokenExchange/issuer',
        'name the issuer whose token endpoint this is (several issuers are trusted)',
        'oauth.config',
      ),
    );
  for (const [tool, target] of Object.entries(exchange?.tools ?? {})) {
    if (!target.audience && !target.resource)
      problems.push(
        problem(`/tokenExchange/tools/${tool}`, 'needs an audience or a resource', 'oauth.config'),
      );
  }
  if (problems.length > 0)
    throw new ToolgateError('INPUT_INVALID', 'the OAuth configuration is invalid', { problems });
  return config;
}

/**
 * The issuer whose tokens the token endpoint exchanges: the one named, else the only one trusted.
 * Throws (at start) when neither says which: a token is never sent to a guessed endpoint.
 */
export function exchangeIssuer(config: OAuthResourceServerConfig): string {
  const named = config.tokenExchange?.issuer;
  const trusted = config.issuers.map((i) => i.issuer);
  if (named !== undefined) {
    if (!trusted.includes(named))
      throw new TypeError('tokenExchange.issuer must be one of the configured issuers');
    return named;
  }
  const [only] = trusted;
  if (only === undefined || trusted.length !== 1)
    throw new TypeError('tokenExchange.issuer must name the issuer whose token endpoint it is');
  return only;
}

/** The scopes whose capabilities cover every one of `needed`, fewest first; null if none can. */
export function scopesFor(
  config: Pick<OAuthResourceServerConfig, 'scopes'>,
  needed: readonly string[],
): string[] | null {
  const chosen: string[] = [];
  for (const capability of needed) {
    if (chosen.some((s) => config.scopes[s]?.includes(capability))) continue;
    const scope = Object.keys(config.scopes)
      .sort()
      .find((s) => config.scopes[s]?.includes(capability));
    if (scope === undefined) return null;
    chosen.push(scope);
  }
  return chosen;
}
