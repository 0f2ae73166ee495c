/**
 * @module A real OpenID provider for tests: `oidc-provider` on 127.0.0.1:0 with the clients and
 * accounts a test gives, an interaction endpoint that signs in `signInAs` at once (no login form
 * to scrape) and grants every requested scope, and `authorize()`, which drives a browser's part
 * of the code flow with fetch (cookies kept by hand) up to the redirect back to the client.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider, { type ClientMetadata, type KoaContextWithOIDC } from 'oidc-provider';

export interface TestOidcProvider {
  readonly issuer: string;
  readonly provider: Provider;
  /** The account the next interaction signs in. */
  signInAs: string;
  close(): Promise<void>;
}

export interface TestOidcOptions {
  readonly clients: ClientMetadata[];
  /** Account id → claims (besides `sub`). */
  readonly accounts: Readonly<Record<string, Record<string, unknown>>>;
}

export async function startOidcProvider(options: TestOidcOptions): Promise<TestOidcProvider> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'test-key' };
  const server: Server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: options.clients,
    jwks: { keys: [jwk] },
    cookies: { keys: ['test-cookie-key-0123456789abcdef'] },
    claims: {
      openid: ['sub'],
      profile: ['name', 'roles', 'groups', 'realm_access'],
      email: ['email', 'email_verified'],
    },
    // Roles and teams travel in the ID token (as with most enterprise providers).
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    pkce: { required: () => true },
    async findAccount(_ctx, id) {
      const claims = options.accounts[id];
      if (!claims) return undefined;
      return { accountId: id, claims: () => ({ sub: id, ...claims }) };
    },
    // Consent is not what these tests are about: every requested scope is granted.
    async loadExistingGrant(ctx: KoaContextWithOIDC) {
      const accountId = ctx.oidc.session?.accountId;
      const client = ctx.oidc.client;
      if (!accountId || !client) return undefined;
      const grant = new ctx.oidc.provider.Grant({ accountId, clientId: client.clientId });
      grant.addOIDCScope(String(ctx.oidc.params?.scope ?? 'openid'));
      await grant.save();
      return grant;
    },
  });
  const fixture: TestOidcProvider = {
    issuer,
    provider,
    signInAs: Object.keys(options.accounts)[0] ?? '',
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
  const handler = provider.callback();
  server.on('request', (req, res) => {
    if (req.url?.startsWith('/interaction/')) {
      provider
        .interactionFinished(req, res, { login: { accountId: fixture.signInAs } })
        .catch((err: unknown) => {
          res.statusCode = 500;
          res.end(String(err));
        });
      return;
    }
    void handler(req, res);
  });
  return fixture;
}

/**
 * A browser's part of the flow: follows the provider's redirects from the authorization URL,
 * carrying its cookies, until one leads to `redirectUri`; returns that redirect's query.
 */
export async function authorize(url: string, redirectUri: string): Promise<Record<string, string>> {
  const jar = new Map<string, string>();
  let next = url;
  for (let hop = 0; hop < 10; hop += 1) {
    if (next.startsWith(redirectUri)) return Object.fromEntries(new URL(next).searchParams);
    const res = await fetch(next, {
      redirect: 'manual',
      headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair?.indexOf('=') ?? -1;
      if (pair && eq > 0) jar.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    const location = res.headers.get('location');
    await res.body?.cancel();
    if (!location) throw new Error(`the provider stopped at ${next} with HTTP ${res.status}`);
    next = new URL(location, next).toString();
  }
  throw new Error('too many redirects');
}
