/**
 * @module OpenID provider discovery: the metadata document at the issuer's well-known address,
 * accepted only when its `issuer` is the configured one exactly and every endpoint it names passes
 * the outbound rules, resolved (loopback only where the admin allowed it); fetched, as the
 * endpoints toolgate fetches are, under the same rules. A redirect is refused: the issuer's own
 * address is the one trusted.
 */
import type { Outbound } from '../../../core/index.js';
import { oidcFailure } from './oidc-failure.js';

export interface OidcProviderMetadata {
  readonly issuer: string;
  readonly authorization_endpoint: string;
  readonly token_endpoint: string;
  readonly jwks_uri: string;
  /** RFC 9207: the provider names itself in every authorization response, so `iss` is required. */
  readonly iss_in_response: boolean;
}

const MAX_DOCUMENT_BYTES = 256 * 1024;

/** The well-known address: the issuer without a trailing slash, then the fixed path (OIDC Discovery §4). */
export function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
}

/** Reads a JSON body of at most `max` bytes; null when larger or not JSON. */
export async function boundedJson(res: Response, max: number): Promise<unknown> {
  const text = await res.text();
  if (Buffer.byteLength(text) > max) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/** Fetches and checks the provider's metadata; throws OIDC_LOGIN_FAILED (`discovery`, `issuer_mismatch`). */
export async function discoverProvider(
  issuer: string,
  timeoutMs: number,
  outbound: Outbound,
): Promise<OidcProviderMetadata> {
  let res: Response;
  try {
    res = await outbound.fetch(discoveryUrl(issuer), {
      headers: { accept: 'application/json' },
      redirect: 'error',
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    throw oidcFailure(
      'discovery',
      `the provider's discovery document could not be fetched (${err instanceof Error ? err.message : String(err)})`,
    );
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw oidcFailure('discovery', `the discovery document answered HTTP ${res.status}`);
  }
  const doc = await boundedJson(res, MAX_DOCUMENT_BYTES);
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw oidcFailure('discovery', 'the discovery document is not a JSON object');
  const d = doc as Record<string, unknown>;
  // Exact comparison (OIDC Discovery §4.3): a provider speaking for another issuer is refused.
  if (d.issuer !== issuer)
    throw oidcFailure(
      'issuer_mismatch',
      `the discovery document names issuer ${JSON.stringify(d.issuer)}, not the configured ${JSON.stringify(issuer)}`,
    );
  // Every endpoint the document names goes under the outbound rules now, resolved: toolgate
  // fetches the token endpoint and the JWKS (checked again at each request), and sends the
  // browser to the authorization endpoint, which is held to the same bar as the issuer's own.
  const endpoint = async (key: string): Promise<string> => {
    const value = d[key];
    if (typeof value !== 'string')
      throw oidcFailure('discovery', `the discovery document has no ${key}`);
    const refused = await outbound.problem(value);
    if (refused)
      throw oidcFailure(
        'discovery',
        `the discovery document's ${key} is refused (${refused.rule}): ${refused.message}`,
      );
    return value;
  };
  const methods = d.code_challenge_methods_supported;
  if (Array.isArray(methods) && !methods.includes('S256'))
    throw oidcFailure('discovery', 'the provider does not support PKCE with S256');
  return {
    issuer,
    authorization_endpoint: await endpoint('authorization_endpoint'),
    token_endpoint: await endpoint('token_endpoint'),
    jwks_uri: await endpoint('jwks_uri'),
    iss_in_response: d.authorization_response_iss_parameter_supported === true,
  };
}
