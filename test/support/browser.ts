/**
 * @module Real chromium (Debian's /usr/bin/chromium) driven by playwright-core for the console's
 * browser tests, and a gateway to test against: SQLite, the demo catalog, REST + MCP + the
 * console on 127.0.0.1:0. One browser per test file; a fresh context (cookies, storage) per test.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import type { Actor } from '../../src/core/index.js';
import { MasterKey } from '../../src/domain/credentials/index.js';
import type { Operator } from '../../src/domain/operators/index.js';
import type { ConsoleOptions } from '../../src/edge/console/index.js';
import { SESSION_COOKIE } from '../../src/edge/console/index.js';
import { buildServer, type HttpOptions } from '../../src/edge/rest/index.js';
import { type Gateway, openGateway, type ToolgateOptions } from '../../src/host/toolgate.js';
import { ROOT } from './cli.js';
import { confirmDeciders, type SteppableClock, steppableClock, totpCodes } from './operators.js';
import { approvePendingReviews } from './reviews.js';
import { WORLD_APPROVAL_WAIT_MS } from './world.js';

export const CHROMIUM = '/usr/bin/chromium';
export const TEST_ADMIN: Actor = { id: 'test-admin', via: 'library' };
export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef0123456789';

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

export function operator(id: string, roles: Operator['roles'], teams: string[] = []): Operator {
  return {
    id,
    name: `${id[0]?.toUpperCase()}${id.slice(1)}`,
    roles,
    teams,
    authenticatedBy: 'password+totp',
  };
}

export const TEST_PASSWORD = 'correct horse battery staple';
/** A low Argon2id cost for the tests' accounts (stored hashes carry their own parameters). */
const TEST_ARGON2 = { memoryKiB: 64, passes: 1, parallelism: 1 };

export interface ConsoleGateway {
  readonly tg: Gateway;
  readonly app: FastifyInstance;
  readonly base: string;
  /** An API key of the demo's support-bot (holds send_email, which waits for approval). */
  readonly supportKey: string;
  /** Second-factor secrets of the accounts {@link ensureOperator} enrolled, by operator id. */
  readonly secrets: Map<string, string>;
  /**
   * A code of `id`'s second factor that the gateway will accept once, each call a later step
   * than the last (one code works once per operator, for logins and step-ups alike).
   */
  code(id: string): Promise<string>;
  /** The gateway's clock: real time, moved on instead of waiting for a fresh TOTP step. */
  readonly clock: SteppableClock;
  close(): Promise<void>;
}

/** A gateway with the demo catalog and the console, listening on 127.0.0.1:0. */
export async function startConsoleGateway(
  options: {
    console?: ConsoleOptions;
    gateway?: ToolgateOptions;
    db?: string;
    /** Single sign-on, built once the gateway's address (its callback URL) is known. */
    sso?: (base: string) => Promise<HttpOptions['sso']>;
  } = {},
): Promise<ConsoleGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-console-'));
  const clock = steppableClock();
  const tg = await openGateway({
    db: options.db ?? `sqlite:${join(dir, 'tg.db')}`,
    masterKey: MasterKey.generate(),
    ...options.gateway,
    operators: { passwordHash: TEST_ARGON2, ...options.gateway?.operators },
    // The codes below follow this clock; a test does not bring its own.
    clock: clock.now,
  });
  await tg.config.applyText(readFileSync(join(ROOT, 'demo', 'catalog.yaml'), 'utf8'), TEST_ADMIN);
  // The demo's restricted tools are drafts until reviewed; these suites start from live ones.
  await approvePendingReviews(tg.admin);
  const supportKey = (await tg.keys.issue('support-bot', TEST_ADMIN)).apiKey;
  const secrets = new Map<string, string>();
  // The relying party's redirect URI is the console's callback on the gateway's real port, known
  // only after listening; the port hands each login to it once it is built.
  let sso: HttpOptions['sso'];
  const app = await buildServer(tg, {
    adminToken: ADMIN_TOKEN,
    // The agent's call is answered pending after a short hold: the browser decides after it.
    mcp: { approvalWaitMs: WORLD_APPROVAL_WAIT_MS },
    ...(options.sso
      ? {
          sso: {
            begin: () => must(sso).begin(),
            complete: (pending, query) => must(sso).complete(pending, query),
          },
        }
      : {}),
    ...(options.console ? { console: options.console } : {}),
  });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  if (options.sso) sso = await options.sso(base);
  const codes = totpCodes(secrets, clock);
  return {
    tg,
    app,
    base,
    supportKey,
    secrets,
    clock,
    code: async (id) => codes(id),
    close: async () => {
      await app.close();
      await tg.close();
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    },
  };
}

function must<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('single sign-on is not built yet');
  return value;
}

/**
 * Creates `op`'s local account (password {@link TEST_PASSWORD}) as the bootstrap admin if it is
 * missing, and enrols its second factor through the admin API, keeping the secret in `gw`.
 */
export async function ensureOperator(gw: ConsoleGateway, op: Operator): Promise<void> {
  if (gw.secrets.has(op.id)) return;
  // The world's confirming admins first, set up through the bootstrap token before any admin is.
  await confirmDeciders(gw.tg.admin, [], gw.clock);
  // An admin's account sets operators up: once a first admin exists the bootstrap token may not
  // create or enrol anyone who decides (docs/security-model.md, four eyes).
  const setup = operator('test-setup', ['admin']);
  await gw.tg.admin.operators.create(setup, {
    id: op.id,
    name: op.name,
    roles: op.roles,
    teams: op.teams,
    password: TEST_PASSWORD,
  });
  const { secret } = await gw.tg.admin.secondFactor.enroll(setup, op.id);
  gw.secrets.set(op.id, secret);
  // Four eyes are two people: a decider counts in a two-approver change once a second person
  // confirmed it (docs/security-model.md); the world's confirming admins do it.
  if (op.roles.includes('approver') || op.roles.includes('admin')) {
    await confirmDeciders(gw.tg.admin, [op.id], gw.clock);
  }
}

/**
 * Signs `id` in through the console's login form over HTTP (no browser), with its password and a
 * fresh code; returns the session cookie (`name=value`).
 */
export async function httpSignIn(gw: ConsoleGateway, id: string): Promise<string> {
  const res = await fetch(`${gw.base}/console/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { origin: gw.base, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ operator: id, password: TEST_PASSWORD, totp: await gw.code(id) }),
  });
  assert.equal(res.status, 303, `${id} signs in`);
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0] ?? '')
    .find((c) => c.startsWith('__Host-toolgate_console='));
  assert.ok(cookie, 'a session cookie');
  return cookie;
}

/** Fills and sends the console's login form (whatever it answers). */
export async function submitLogin(
  page: Page,
  base: string,
  id: string,
  password: string,
  totp: string,
): Promise<void> {
  if (!page.url().endsWith('/console/login')) await page.goto(`${base}/console/login`);
  await page.locator('#operator').fill(id);
  await page.locator('#password').fill(password);
  await page.locator('#totp').fill(totp);
  await Promise.all([page.waitForLoadState(), page.locator('#login-form button').click()]);
}

/**
 * Signs an operator in through the console's login form in a fresh browser context: its real
 * account, password and a real TOTP code.
 */
export async function signedInContext(
  browser: Browser,
  gw: ConsoleGateway,
  op: Operator,
): Promise<{ context: BrowserContext; page: Page }> {
  await ensureOperator(gw, op);
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${gw.base}/console/login`);
  await page.locator('#operator').fill(op.id);
  await page.locator('#password').fill(TEST_PASSWORD);
  await page.locator('#totp').fill(await gw.code(op.id));
  await Promise.all([
    page.waitForURL(
      (url) => url.pathname.startsWith('/console/') && !url.pathname.startsWith('/console/login'),
    ),
    page.locator('#login-form button').click(),
  ]);
  return { context, page };
}

/** The browser's console session cookie (HttpOnly: only the browser itself can show it). */
export async function sessionCookie(context: BrowserContext) {
  return (await context.cookies()).find((c) => c.name === SESSION_COOKIE);
}

/** An MCP client of an agent over Streamable HTTP (the official SDK client). */
export async function mcpClient(base: string, apiKey: string): Promise<Client> {
  const client = new Client({ name: 'console-test-agent', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${apiKey}` } },
    }),
  );
  return client;
}

/** Ends the agent's MCP session (an open stream would keep the server from closing). */
export async function closeMcpClient(client: Client | undefined): Promise<void> {
  if (!client) return;
  await (client.transport as StreamableHTTPClientTransport | undefined)
    ?.terminateSession()
    .catch(() => {});
  await client.close().catch(() => {});
}

/** The decision toolgate attaches to an MCP tool result. */
export function decisionOf(result: unknown): Record<string, unknown> {
  const meta = (result as { _meta?: Record<string, unknown> })._meta;
  return (meta?.['toolgate/decision'] ?? {}) as Record<string, unknown>;
}

/** Fails the test on any script dialog or page error: nothing a tool wrote may run. */
export function watchForScript(page: Page): { readonly events: string[] } {
  const events: string[] = [];
  page.on('dialog', (d) => {
    events.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  page.on('pageerror', (e) => events.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') events.push(`console error: ${m.text()}`);
  });
  return { events };
}
