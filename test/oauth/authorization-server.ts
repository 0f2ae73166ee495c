/**
 * A real OAuth 2.1 authorization server for the tests: `oidc-provider` on 127.0.0.1:0 with
 * resource indicators (RFC 8707, access tokens are JWTs whose audience is the resource), PKCE, a
 * pre-registered public client for the agent and a confidential one for toolgate, and the
 * RFC 8693 token-exchange grant (oidc-provider has none built in; it is registered here with
 * `registerGrantType`, the provider still authenticating the client).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK, jwtVerify, SignJWT } from 'jose';
import Provider, { errors, type KoaContextWithOIDC } from 'oidc-provider';

export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

export interface AuthorizationServer {
  readonly issuer: string;
  readonly jwksUrl: string;
  readonly provider: Provider;
  /** Scopes the AS grants for each resource (the user's consent); tests change it. */
  readonly grantable: Map<string, string>;
  /** Signs `claims` with the AS's own key, as it signs access tokens (for hand-made variants). */
  mint(claims: Record<string, unknown>): Promise<string>;
  /**
   * An access token the AS signs for its user `sub` with `scope`, as it signs those it issues:
   * of `client` (default: its first public client), for `audience` (default: the first resource
   * it serves), valid five minutes from now.
   */
  accessToken(sub: string, scope: string, options?: AccessTokenOptions): Promise<string>;
  /** Every token exchange the AS answered: who asked, for which audience. */
  readonly exchanges: { client: string; audience: string; subject: string }[];
  /** Every subject token sent to the AS's token-exchange grant, answered or not. */
  readonly exchangeAttempts: string[];
  close(): Promise<void>;
}

export interface AccessTokenOptions {
  readonly client?: string;
  readonly audience?: string;
}

export interface AuthorizationServerOptions {
  /** Public clients (authorization code + PKCE), by client id. */
  readonly publicClients: readonly string[];
  /** Confidential clients allowed to exchange tokens, id → secret. */
  readonly exchangeClients: Readonly<Record<string, string>>;
  /** Resource → scopes it accepts (and the AS grants, until `grantable` says otherwise). */
  readonly resources: Readonly<Record<string, string>>;
  readonly accessTokenTtl?: number;
}

export const REDIRECT_URI = 'http://127.0.0.1/callback';

export async function startAuthorizationServer(
  options: AuthorizationServerOptions,
): Promise<AuthorizationServer> {
  // The issuer must be known before the provider exists: listen first, then hand over requests.
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | null = null;
  const server = createServer((req, res) => handler?.(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const signing: JWK = { ...(await exportJWK(privateKey)), kid: 'as-1', alg: 'ES256', use: 'sig' };
  const grantable = new Map(Object.entries(options.resources));
  const exchanges: AuthorizationServer['exchanges'] = [];
  const exchangeAttempts: string[] = [];
  const ttl = options.accessTokenTtl ?? 300;

  const provider = new Provider(issuer, {
    clients: [
      ...options.publicClients.map((id) => ({
        client_id: id,
        application_type: 'native' as const,
        token_endpoint_auth_method: 'none' as const,
        id_token_signed_response_alg: 'ES256' as const,
        redirect_uris: [REDIRECT_URI],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code' as const],
      })),
      ...Object.entries(options.exchangeClients).map(([id, secret]) => ({
        client_id: id,
        client_secret: secret,
        token_endpoint_auth_method: 'client_secret_basic' as const,
        id_token_signed_response_alg: 'ES256' as const,
        redirect_uris: [],
        grant_types: [TOKEN_EXCHANGE],
        response_types: [],
      })),
    ],
    jwks: { keys: [signing] },
    scopes: ['openid', 'offline_access'],
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
    features: {
      devInteractions: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined as unknown as string,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          const scope = grantable.get(indicator);
          if (scope === undefined) throw new errors.InvalidTarget();
          return {
            scope,
            audience: indicator,
            accessTokenTTL: ttl,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'ES256' } },
          };
        },
      },
    },
    pkce: { required: () => true },
    ttl: { AccessToken: ttl },
  });

  // RFC 8693: the subject token must be one this AS issued (signature, issuer, expiry); the
  // new token is for the requested audience, names the same subject and the acting client.
  provider.registerGrantType(
    TOKEN_EXCHANGE,
    async (ctx: KoaContextWithOIDC) => {
      const params = ctx.oidc.params as Record<string, string | undefined>;
      const client = ctx.oidc.client?.clientId ?? '';
      exchangeAttempts.push(params.subject_token ?? '');
      if (params.subject_token_type !== ACCESS_TOKEN_TYPE || !params.subject_token)
        throw new errors.InvalidRequest('subject_token of type access_token required');
      const audience = params.audience ?? params.resource;
      if (!audience || !grantable.has(audience)) throw new errors.InvalidTarget();
      let sub: string;
      try {
        const { payload } = await jwtVerify(params.subject_token, publicKey, { issuer });
        sub = String(payload.sub);
      } catch {
        throw new errors.InvalidGrant('subject_token invalid');
      }
      exchanges.push({ client, audience, subject: sub });
      const token = await new SignJWT({
        scope: grantable.get(audience),
        client_id: client,
        act: { sub: client },
      })
        .setProtectedHeader({ alg: 'ES256', kid: 'as-1', typ: 'at+jwt' })
        .setIssuer(issuer)
        .setSubject(sub)
        .setAudience(audience)
        .setIssuedAt()
        .setExpirationTime(`${ttl}s`)
        .sign(privateKey);
      ctx.body = {
        access_token: token,
        issued_token_type: ACCESS_TOKEN_TYPE,
        token_type: 'Bearer',
        expires_in: ttl,
      };
    },
    [
      'subject_token',
      'subject_token_type',
      'audience',
      'resource',
      'scope',
      'requested_token_type',
    ],
  );
  const callback = provider.callback();
  handler = callback;
  const mint = (claims: Record<string, unknown>) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: 'as-1', typ: 'at+jwt' })
      .sign(privateKey);

  return {
    issuer,
    jwksUrl: `${issuer}/jwks`,
    provider,
    grantable,
    exchanges,
    exchangeAttempts,
    mint,
    accessToken: (sub, scope, { client, audience } = {}) => {
      const now = Math.floor(Date.now() / 1000);
      return mint({
        iss: issuer,
        sub,
        aud: audience ?? Object.keys(options.resources)[0],
        client_id: client ?? options.publicClients[0],
        scope,
        iat: now,
        exp: now + 300,
      });
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
