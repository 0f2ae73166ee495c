/**
 * @module Real chromium (Debian's /usr/bin/chromium) driven by playwright-core for the console's
 * browser tests, and a gateway to test against: SQLite, the demo catalog, REST + MCP + the
 * console on 127.0.0.1:0. One browser per test file; a fresh context (cookies, storage) per test.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import type { ConsoleOptions } from '../../src/console/index.js';
import { SESSION_COOKIE } from '../../src/console/index.js';
import type { Actor } from '../../src/core/index.js';
import { buildServer } from '../../src/http/index.js';
import type { Operator } from '../../src/operators/index.js';
import { type Gateway, openGateway, type ToolgateOptions } from '../../src/toolgate.js';
import { ROOT } from './cli.js';

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

export interface ConsoleGateway {
  readonly tg: Gateway;
  readonly app: FastifyInstance;
  readonly base: string;
  /** An API key of the demo's support-bot (holds send_email, which waits for approval). */
  readonly supportKey: string;
  /** Operators the test's local-login port knows (password {@link TEST_PASSWORD}, any code). */
  readonly operators: Map<string, Operator>;
  close(): Promise<void>;
}

export const TEST_PASSWORD = 'correct horse battery staple';

/** A gateway with the demo catalog and the console, listening on 127.0.0.1:0. */
export async function startConsoleGateway(
  options: { console?: ConsoleOptions; gateway?: ToolgateOptions; db?: string } = {},
): Promise<ConsoleGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-console-'));
  const tg = await openGateway({
    db: options.db ?? `sqlite:${join(dir, 'tg.db')}`,
    ...options.gateway,
  });
  await tg.config.applyText(readFileSync(join(ROOT, 'demo', 'catalog.yaml'), 'utf8'), TEST_ADMIN);
  const supportKey = (await tg.keys.issue('support-bot', TEST_ADMIN)).apiKey;
  const operators = new Map<string, Operator>();
  // The local-login port as the operators' service fills it: an operator for the right
  // password, a rejection (whatever the reason) otherwise.
  const loginLocal = async (id: string, password: string, totp: string): Promise<Operator> => {
    const op = operators.get(id);
    if (!op || password !== TEST_PASSWORD || !/^\d{6}$/.test(totp)) throw new Error('no');
    return op;
  };
  const app = await buildServer(tg, {
    adminToken: ADMIN_TOKEN,
    console: { loginLocal, ...options.console },
  });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    tg,
    app,
    base,
    supportKey,
    operators,
    close: async () => {
      await app.close();
      await tg.close();
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    },
  };
}

/** Signs an operator in through the console's login form in a fresh browser context. */
export async function signedInContext(
  browser: Browser,
  gw: ConsoleGateway,
  op: Operator,
): Promise<{ context: BrowserContext; page: Page }> {
  gw.operators.set(op.id, op);
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${gw.base}/console/login`);
  await page.locator('#operator').fill(op.id);
  await page.locator('#password').fill(TEST_PASSWORD);
  await page.locator('#totp').fill('123456');
  await Promise.all([
    page.waitForURL('**/console/inbox'),
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
