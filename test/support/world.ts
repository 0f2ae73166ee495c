/**
 * @module The one test world: a gateway on a fresh database of a backend (docs/architecture.md
 * §2), with what a suite about something else would otherwise set up by hand — the demo catalog
 * with its security reviews approved, agents with their grants and API keys, tools, operator
 * accounts with personal tokens, and the REST front listening on 127.0.0.1 — and one `close()`
 * that takes all of it down again (the database too).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
// The MCP clients and the REST server are loaded when a test first asks for them (below): a test
// file that uses neither starts without loading either (each costs a file's start-up time).
import type {
  Client as ClientV2,
  ClientOptions as ClientV2Options,
} from '@modelcontextprotocol/client';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { FastifyInstance } from 'fastify';
import type { JWK } from 'jose';
import type { AdminApi } from '../../src/api/index.js';
import type { Actor } from '../../src/core/index.js';
import { BOOTSTRAP_OPERATOR, type OperatorRole } from '../../src/domain/operators/index.js';
import type { HttpOptions } from '../../src/edge/rest/index.js';
import { type Gateway, openGateway, type ToolgateOptions } from '../../src/host/toolgate.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { type Backend, backends, migratedFresh } from './backends.js';
import { ROOT } from './cli.js';
import { approvePendingReviews } from './reviews.js';
import type { Definition } from './tools.js';

const DEMO = join(ROOT, 'demo', 'catalog.yaml');

/** Who sets a world up, unless a suite names its own actor. */
export const SETUP: Actor = { id: 'test-admin', via: 'library' };

/** The admin token a world's REST front accepts, unless a suite names its own. */
export const WORLD_ADMIN_TOKEN = 'world-admin-token-0123456789abcdef0123456789';

/**
 * An agent of the world: its record (any other field is the Agent document's, `owner` `qa` by
 * default), its grant (when it has capabilities) and an API key.
 */
export interface WorldAgent {
  readonly id: string;
  readonly capabilities?: readonly string[];
  /** Issue an API key for it (default true); `world.keys[id]` holds it. */
  readonly key?: boolean;
  readonly [field: string]: unknown;
}

/** An operator account of the world; with `token`, a personal token in `world.tokens[id]`. */
export interface WorldOperator {
  readonly id: string;
  readonly roles: readonly OperatorRole[];
  readonly teams?: readonly string[];
  readonly token?: boolean;
}

/**
 * How long the world's MCP front holds a call that waits for approval (`mcp.approvalWaitMs`,
 * production default 45 s); a suite that tests the hold itself passes its own.
 */
export const WORLD_APPROVAL_WAIT_MS = 200;

export interface WorldOptions {
  /** Where its database lives; default SQLite. Ignored when `options.db` names one. */
  readonly backend?: Backend;
  /** Apply the demo catalog and approve its security reviews. */
  readonly demo?: boolean;
  /** Tool definitions applied (after the demo catalog) and reviewed. */
  readonly tools?: readonly Definition[];
  readonly agents?: readonly WorldAgent[];
  /** Agents that exist already (the demo's) to issue an API key for, into `world.keys`. */
  readonly keys?: readonly string[];
  readonly operators?: readonly WorldOperator[];
  /** The gateway's options; `db` defaults to a fresh database of `backend`. */
  readonly options?: ToolgateOptions;
  /** The actor of the setup steps; default `SETUP`. */
  readonly actor?: Actor;
  /** Start the REST front (and MCP at /mcp); `true` for the defaults. */
  readonly rest?: boolean | Partial<HttpOptions>;
  /** Open a second connection to the database, to read what the gateway wrote. */
  readonly inspector?: boolean;
}

/**
 * What a REST call answered: the status, the headers, the body as text and as JSON (`{}` when
 * it is empty or no JSON: some routes, the console's, answer HTML or plain text).
 */
export interface Reply<B = Record<string, unknown>> {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly body: B;
}

export interface World {
  readonly tg: Gateway;
  /** The database's URL (a second store or gateway may open it). */
  readonly db: string;
  /** The actor the world was set up as. */
  readonly admin: Actor;
  /** API keys by agent id. */
  readonly keys: Record<string, string>;
  /** Personal tokens by operator id. */
  readonly tokens: Record<string, string>;
  /** The REST front, when asked for; `base` is its URL (empty without one). */
  readonly app: FastifyInstance | null;
  readonly base: string;
  readonly adminToken: string | null;
  /** The second connection, when asked for (else null). */
  readonly inspector: Store | null;
  /** A REST call with a JSON body, as the bearer `token` (default: the admin token). */
  send(method: string, path: string, body?: unknown, token?: string | null): Promise<Reply>;
  /** Closes the REST front and the gateway and drops the database; safe to call twice. */
  close(): Promise<void>;
}

/**
 * A REST caller of `base`: JSON in, `{ status, body }` out, as the bearer `token` (by default
 * `fallback`, or what it returns when the suite learns its token later; null or empty: none).
 */
export function restClient<B = Record<string, unknown>>(
  base: () => string,
  fallback: string | null | (() => string | null) = null,
) {
  const byDefault = typeof fallback === 'function' ? fallback : () => fallback;
  return async (
    method: string,
    path: string,
    body?: unknown,
    token: string | null = byDefault(),
  ): Promise<Reply<B>> => {
    const res = await fetch(`${base()}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    const json = /^\s*[[{]/.test(text) ? JSON.parse(text) : {};
    return { status: res.status, headers: res.headers, text, body: json };
  };
}

/** An MCP client (the official SDK's, Streamable HTTP) connected to `base`/mcp as `token`. */
export async function connectMcp(
  base: string,
  token: string | undefined,
  name = 'toolgate-test',
): Promise<Client> {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await import(
    '@modelcontextprotocol/sdk/client/streamableHttp.js'
  );
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

/**
 * A 2026-07-28 MCP client (the v2 SDK's, pinned to that version) connected to `base`/mcp as
 * `token`; `options` add to the client's, `transport` to its transport's (a recording `fetch`).
 */
export async function connectModernMcp(
  base: string,
  token: string | undefined,
  name = 'toolgate-test',
  options: Omit<ClientV2Options, 'versionNegotiation'> = {},
  transport: { fetch?: typeof fetch } = {},
): Promise<ClientV2> {
  const v2 = await import('@modelcontextprotocol/client');
  const client = new v2.Client(
    { name, version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } }, ...options },
  );
  await client.connect(
    new v2.StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
      ...transport,
    }),
  );
  return client;
}

/**
 * One client of each MCP era as `token`, labelled '2025-11-25' and '2026-07-28' and typed as the
 * suite's `C`; both are added to `clients` for the suite to close.
 */
export async function connectBothEras<C>(
  base: string,
  token: string | undefined,
  name: string,
  clients: unknown[],
): Promise<(readonly [string, C])[]> {
  const legacy = (await connectMcp(base, token, name)) as unknown as C;
  const modern = (await connectModernMcp(base, token, name)) as unknown as C;
  clients.push(legacy, modern);
  return [
    ['2025-11-25', legacy],
    ['2026-07-28', modern],
  ];
}

/** A 2025-era MCP client's JSON-RPC `initialize` request (`clientInfo` is `name`@`version`). */
export function initializeRequest(name = 'raw', version = '1') {
  return {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name, version } },
  };
}

/** The headers of a raw POST to /mcp (JSON in, JSON or an event stream out), as `token` if any. */
export function mcpHeaders(token?: string | null): Record<string, string> {
  return {
    ...(token ? { authorization: `Bearer ${token}` } : {}),
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
}

/** A raw POST of the JSON-RPC `body` to `base`/mcp as `token`, with `headers` added. */
export function postMcp(
  base: string,
  body: unknown,
  token?: string | null,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { ...mcpHeaders(token), ...headers },
    body: JSON.stringify(body),
  });
}

/**
 * A raw POST of `body` to `path` on 127.0.0.1:`port`, sent from the loopback address `from`, with
 * exactly `headers` (node:http lets Host be set): the status and the body as text.
 */
export function rawPost(
  port: number,
  path: string,
  headers: Record<string, string>,
  body = '{}',
  from = '127.0.0.1',
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, localAddress: from, path, method: 'POST', headers },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Polls /healthz one request after another until `work` settles (and a few times at least);
 * returns the slowest round trip.
 */
export async function slowestHealthz(base: string, work: Promise<unknown>): Promise<number> {
  let settled = false;
  const done = work.finally(() => {
    settled = true;
  });
  let slowest = 0;
  let samples = 0;
  while (!settled || samples < 5) {
    const started = performance.now();
    const res = await fetch(`${base}/healthz`);
    await res.arrayBuffer();
    assert.equal(res.status, 200);
    slowest = Math.max(slowest, performance.now() - started);
    samples += 1;
  }
  await done;
  return slowest;
}

/** The details of every event of `action`, in order, as the connection `store` reads them. */
export async function eventDetails(
  store: Pick<Store, 'db'>,
  action: string,
): Promise<Record<string, unknown>[]> {
  const rows = await store.db
    .selectFrom('events')
    .select('details')
    .where('action', '=', action)
    .orderBy('seq')
    .execute();
  return rows.map((e) => JSON.parse(e.details) as Record<string, unknown>);
}

/** The `_meta` envelope a raw 2026-07-28 request carries. */
export const MODERN_ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
};

/** A raw 2026-07-28 `subscriptions/listen` for tool list changes (request `id`) as `token`. */
export function postListen(base: string, token: string, id = 9): Promise<Response> {
  return postMcp(
    base,
    {
      jsonrpc: '2.0',
      id,
      method: 'subscriptions/listen',
      params: { notifications: { toolsListChanged: true }, _meta: MODERN_ENVELOPE },
    },
    token,
    { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'subscriptions/listen' },
  );
}

/** The private half of a signing key from `signingKeyWithJwks`. */
export type SigningKey = Awaited<ReturnType<typeof signingKeyWithJwks>>;

/** A fresh ES256 signing key: its public half (kid `k1`) written to `file` as a JWKS; the private half. */
export async function signingKeyWithJwks(file: string) {
  const { exportJWK, generateKeyPair } = await import('jose');
  const pair = await generateKeyPair('ES256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  writeFileSync(file, JSON.stringify({ keys: [jwk] }));
  return pair.privateKey;
}

/**
 * The gateway's `jwt` option for tokens of issuer `issuer` and audience `audience`, checked with
 * the JWKS that `signingKeyWithJwks` wrote to `dir`/jwks.json: the user in `act_for`, the
 * permissions in `scope`.
 */
export function actForJwt(dir: string, issuer: string, audience: string) {
  return {
    issuer,
    audience,
    jwksFile: join(dir, 'jwks.json'),
    userClaim: 'act_for',
    permissionsClaim: 'scope',
  };
}

/**
 * A fresh token (its own jti, ten minutes) of `agent` acting for `user` with `scope` (default
 * `billing:read`), as `actForJwt` reads it, signed with `key` from `signingKeyWithJwks`.
 */
export async function actForToken(
  key: SigningKey,
  agent: string,
  user: string,
  issuer: string,
  audience: string,
  scope = 'billing:read',
): Promise<string> {
  const { SignJWT } = await import('jose');
  const claims = { sub: agent, iss: issuer, aud: audience, jti: randomUUID() };
  return new SignJWT({ ...claims, act_for: user, scope })
    .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(key);
}

/** A personal token of an existing operator account, issued by the bootstrap admin. */
export async function personalToken(
  admin: Pick<AdminApi, 'operators'>,
  operatorId: string,
  { name = 'test', expiresInDays = 366 }: { name?: string; expiresInDays?: number } = {},
): Promise<string> {
  return (await admin.operators.issueToken(BOOTSTRAP_OPERATOR, { operatorId, name, expiresInDays }))
    .token;
}

/**
 * The audit records of `kind` of one tool, in chain order (no flush: the caller's business), once
 * every record already durable is in the chain (PostgreSQL stages records for the sequencer).
 */
export async function toolRecords(
  store: Pick<Store, 'db' | 'audit'>,
  toolId: string,
  kind: string,
) {
  await store.audit.settled();
  return store.db
    .selectFrom('audit_log')
    .selectAll()
    .where('tool_id', '=', toolId)
    .where('kind', '=', kind)
    .orderBy('seq')
    .execute();
}

/** Every audit record of one call, in chain order, once the gate's writer has flushed. */
export async function callRecords(
  tg: Pick<Gateway, 'gate'>,
  store: Pick<Store, 'db'>,
  callId: string,
) {
  await tg.gate.flush();
  return store.db
    .selectFrom('audit_log')
    .selectAll()
    .where('call_id', '=', callId)
    .orderBy('seq')
    .execute();
}

/** Applies the demo catalog as `actor` and approves every pending review. */
export async function applyDemo(tg: Gateway, actor: Actor = SETUP): Promise<void> {
  await tg.config.applyText(readFileSync(DEMO, 'utf8'), actor);
  await approvePendingReviews(tg);
}

/** Opens a gateway, applies the demo catalog as `actor` and approves every pending review. */
export async function openDemoGateway(
  options: ToolgateOptions = {},
  actor: Actor = SETUP,
): Promise<Gateway> {
  const tg = await openGateway(options);
  await applyDemo(tg, actor);
  return tg;
}

/** Opens a world (see the module comment); every part but the gateway is opt-in. */
export async function openWorld(spec: WorldOptions = {}): Promise<World> {
  const admin = spec.actor ?? SETUP;
  const fresh =
    spec.options?.db === undefined
      ? await migratedFresh(spec.backend ?? (backends()[0] as Backend))
      : { url: spec.options.db, drop: async () => {} };
  const tg = await openGateway({ ...spec.options, db: fresh.url });
  let app: FastifyInstance | null = null;
  let inspector: Store | null = null;
  let closed: Promise<void> | null = null;
  const close = () => {
    closed ??= (async () => {
      // Connections a test left open (a half-closed socket, a keep-alive one mid-request) are
      // ended with the world, not left to Node's header timeout (60-90 s per file).
      const closing = app?.close();
      app?.server.closeAllConnections();
      await closing;
      await tg.close();
      await inspector?.close();
      await fresh.drop();
    })();
    return closed;
  };
  try {
    if (spec.demo) await applyDemo(tg, admin);
    const keys = await addAgentsAndTools(tg, spec, admin);
    const tokens = await addOperators(tg, spec.operators ?? []);
    const rest = spec.rest === true ? {} : spec.rest || null;
    const adminToken =
      rest === null ? null : rest.adminToken === undefined ? WORLD_ADMIN_TOKEN : rest.adminToken;
    let base = '';
    if (rest !== null) {
      const { buildServer } = await import('../../src/edge/rest/index.js');
      // A call that waits for approval is held a moment, not the production 45 s: a suite that
      // decides only after it saw the pending answer does not wait for the bound each time.
      const mcp = { approvalWaitMs: WORLD_APPROVAL_WAIT_MS, ...rest.mcp };
      app = await buildServer(tg, { ...rest, mcp, adminToken });
      base = await app.listen({ host: '127.0.0.1', port: 0 });
    }
    if (spec.inspector) inspector = await openStore(fresh.url);
    const send = restClient(() => base, adminToken);
    return {
      tg,
      db: fresh.url,
      admin,
      keys,
      tokens,
      app,
      base,
      adminToken,
      inspector,
      send,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * Creates operator accounts as the bootstrap admin; the personal tokens of those with `token`,
 * by id.
 */
export async function addOperators(
  tg: Gateway,
  operators: readonly WorldOperator[],
): Promise<Record<string, string>> {
  const tokens: Record<string, string> = {};
  for (const op of operators) {
    await tg.admin.operators.create(BOOTSTRAP_OPERATOR, {
      id: op.id,
      roles: [...op.roles],
      ...(op.teams ? { teams: [...op.teams] } : {}),
    });
    if (op.token) tokens[op.id] = await personalToken(tg.admin, op.id);
  }
  return tokens;
}

/**
 * Applies `spec`'s tools and agents (with their grants) as `admin`, approves what waits for a
 * review, and issues the API keys `spec` asks for; the keys by agent id.
 */
export async function addAgentsAndTools(
  tg: Gateway,
  spec: Pick<WorldOptions, 'tools' | 'agents' | 'keys'>,
  admin: Actor,
): Promise<Record<string, string>> {
  const agents = spec.agents ?? [];
  const docs = [
    ...(spec.tools ?? []).map((t) => ({ kind: 'Tool', spec: t })),
    ...agents.flatMap(({ capabilities, key: _key, ...agent }) => [
      { kind: 'Agent', spec: { owner: 'qa', ...agent } },
      ...(capabilities?.length
        ? [{ kind: 'Grant', spec: { agent: agent.id, capabilities: [...capabilities] } }]
        : []),
    ]),
  ];
  if (docs.length > 0) {
    await tg.config.apply(docs, admin);
    await approvePendingReviews(tg);
  }
  const keys: Record<string, string> = {};
  for (const id of spec.keys ?? []) keys[id] = (await tg.keys.issue(id, admin)).apiKey;
  for (const a of agents) {
    if (a.key !== false) keys[a.id] = (await tg.keys.issue(a.id, admin)).apiKey;
  }
  return keys;
}
