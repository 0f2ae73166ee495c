/**
 * The client half of the OAuth dance, as an MCP host would run it with the official SDK: an
 * `OAuthClientProvider` for a pre-registered public client, whose `redirectToAuthorization`
 * plays the user at the authorization server (its sign-in and consent pages, driven by fetch with
 * a cookie jar) and keeps the code the AS redirects back with. The same provider serves the v1
 * SDK client and the v2 one (`@modelcontextprotocol/client`).
 */
import assert from 'node:assert/strict';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as HttpV2,
  UnauthorizedError as UnauthorizedErrorV2,
} from '@modelcontextprotocol/client';
import {
  type OAuthClientProvider,
  UnauthorizedError,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { REDIRECT_URI } from './authorization-server.js';

/** Follows the AS's redirects and forms as a browser would, signing in as `user`. */
async function playUser(start: URL, user: string): Promise<{ code: string; iss: string | null }> {
  const jar = new Map<string, string>();
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const keep = (res: Response) => {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair?.indexOf('=') ?? -1;
      if (pair && eq > 0) jar.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
  };
  let url = start.href;
  let init: RequestInit = {};
  for (let hop = 0; hop < 20; hop++) {
    const res = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), cookie: cookie() },
    });
    keep(res);
    init = {};
    const location = res.headers.get('location');
    if (location) {
      const next = new URL(location, url);
      if (next.href.startsWith(REDIRECT_URI)) {
        const code = next.searchParams.get('code');
        if (!code) throw new Error(`the AS refused: ${next.searchParams.get('error')}`);
        // The issuer the AS names in its response (RFC 9207), which the v2 SDK checks.
        return { code, iss: next.searchParams.get('iss') };
      }
      url = next.href;
      continue;
    }
    const page = await res.text();
    const action = /action="([^"]+)"/.exec(page)?.[1];
    const prompt = /name="prompt" value="([a-z]+)"/.exec(page)?.[1];
    if (!action || !prompt)
      throw new Error(
        `unexpected AS page (${res.status}) at ${url}: ${page
          .replace(/<style>[\s\S]*<\/style>/, '')
          .replace(/<[^>]+>/g, ' ')
          .replace(/\s+/g, ' ')
          .slice(0, 600)}`,
      );
    const form = new URLSearchParams({ prompt });
    if (prompt === 'login') {
      form.set('login', user);
      form.set('password', 'any');
    }
    url = new URL(action, url).href;
    init = {
      method: 'POST',
      body: form.toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    };
  }
  throw new Error('too many redirects at the AS');
}

export class TestOAuthClient implements OAuthClientProvider {
  readonly #clientId: string;
  readonly #user: string;
  #tokens: OAuthTokens | undefined;
  #verifier = '';
  /** The code of the last authorization, for `transport.finishAuth`. */
  code: string | null = null;
  /** The `iss` of the last authorization response (RFC 9207), when the AS sent one. */
  iss: string | null = null;
  /** Every authorization URL the SDK sent the user to (scope and resource are checked). */
  readonly authorizations: URL[] = [];

  constructor(clientId: string, user: string) {
    this.#clientId = clientId;
    this.#user = user;
  }

  get redirectUrl(): string {
    return REDIRECT_URI;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      redirect_uris: [REDIRECT_URI],
      client_name: 'toolgate test host',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  clientInformation(): OAuthClientInformationMixed {
    return { client_id: this.#clientId };
  }

  tokens(): OAuthTokens | undefined {
    return this.#tokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.#tokens = tokens;
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    this.authorizations.push(url);
    const { code, iss } = await playUser(url, this.#user);
    this.code = code;
    this.iss = iss;
  }

  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }

  codeVerifier(): string {
    return this.#verifier;
  }
}

/** What the dance needs of a client and its transport, whichever SDK they come from. */
interface Dancer<T> {
  connect(transport: T): Promise<void>;
}

/**
 * Connects as an MCP host does: the first attempt meets the 401, the SDK discovers the AS and
 * sends the user to it; with the code back, `finishAuth` gets the token, and the host connects.
 */
async function dance<
  T extends { finishAuth(code: string, iss?: string): Promise<void> },
  C extends Dancer<T>,
>(
  oauth: TestOAuthClient,
  transport: () => T,
  client: () => C,
  unauthorized: (err: unknown) => boolean,
): Promise<C> {
  const first = transport();
  const attempt = client();
  try {
    await attempt.connect(first);
    return attempt;
  } catch (err) {
    if (!unauthorized(err)) throw err;
  }
  assert.ok(oauth.code, 'the SDK sent the user to the authorization server');
  await first.finishAuth(oauth.code, oauth.iss ?? undefined);
  const again = client();
  await again.connect(transport());
  return again;
}

/** The dance with the v1 SDK client (the 2025 session era). */
export function connectWithOAuth(
  oauth: TestOAuthClient,
  resource: string,
  fetchFn: typeof fetch,
): Promise<Client> {
  return dance(
    oauth,
    () =>
      new StreamableHTTPClientTransport(new URL(resource), { authProvider: oauth, fetch: fetchFn }),
    () => new Client({ name: 'oauth-host', version: '1.0.0' }),
    (err) => err instanceof UnauthorizedError,
  );
}

/** The dance with the v2 SDK client pinned to 2026-07-28 (discovery starts at `server/discover`). */
export function connectWithOAuthV2(
  oauth: TestOAuthClient,
  resource: string,
  fetchFn: typeof fetch,
): Promise<ClientV2> {
  return dance(
    oauth,
    () => new HttpV2(new URL(resource), { authProvider: oauth, fetch: fetchFn }),
    () =>
      new ClientV2(
        { name: 'oauth-host-v2', version: '1.0.0' },
        { versionNegotiation: { mode: { pin: '2026-07-28' } } },
      ),
    (err) => err instanceof UnauthorizedErrorV2,
  );
}
