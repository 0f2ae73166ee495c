/**
 * @module Shared steps of the console's browser suites: chromium, the console gateway and the
 * support agent's MCP client for a whole file; a pending send_email; a forged approve; a copy of
 * send_email under another name.
 */
import { after, before } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { APIResponse, Browser, Page } from 'playwright-core';
import {
  type ConsoleGateway,
  closeMcpClient,
  decisionOf,
  launchChromium,
  mcpClient,
  startConsoleGateway,
  TEST_ADMIN,
} from '../support/browser.js';

/** What a console suite runs against. */
export interface ConsoleSuite {
  readonly browser: Browser;
  readonly gw: ConsoleGateway;
  readonly agent: Client;
}

/**
 * Starts chromium, the console gateway and the support agent's MCP client before the file's
 * tests (handing them to `use`) and closes them after.
 */
export function consoleSuite(use: (suite: ConsoleSuite) => void): void {
  let suite: Partial<ConsoleSuite> = {};
  before(async () => {
    const [browser, gw] = await Promise.all([launchChromium(), startConsoleGateway()]);
    suite = { browser, gw };
    const agent = await mcpClient(gw.base, gw.supportKey);
    suite = { browser, gw, agent };
    use(suite as ConsoleSuite);
  });
  after(async () => {
    await closeMcpClient(suite.agent);
    await suite.browser?.close();
    await suite.gw?.close();
  });
}

/** The agent's send_email call with `args`, waiting for approval: its approval id. */
export async function pendingSend(agent: Client, args: Record<string, string>): Promise<string> {
  return String(
    decisionOf(await agent.callTool({ name: 'send_email', arguments: args })).approval_id,
  );
}

/** An approve of `approvalId` posted from `page` with the session's CSRF token and no form. */
export async function forgedApprove(
  page: Page,
  gw: ConsoleGateway,
  approvalId: string,
): Promise<APIResponse> {
  const csrf = await page.locator('form[action="/console/logout"] input[name=_csrf]').inputValue();
  return page.request.post(`${gw.base}/console/approvals/${approvalId}/approve`, {
    form: { _csrf: csrf },
    headers: { origin: gw.base },
    maxRedirects: 0,
  });
}

/** Applies send_email 1.0.0's definition with `changes` (at least another id and name). */
export async function applySendEmailCopy(
  gw: ConsoleGateway,
  changes: Record<string, unknown>,
): Promise<void> {
  const base = (await gw.tg.catalog.get('send_email', '1.0.0')).definition as unknown as Record<
    string,
    unknown
  >;
  await gw.tg.config.apply([{ kind: 'Tool', spec: { ...base, ...changes } }], TEST_ADMIN);
}
