/**
 * Saves the README's console screenshots (docs/console-inbox.png, docs/console-approval.png):
 * starts a demo gateway on 127.0.0.1 with a few calls waiting for approval, signs a demo approver
 * in through the login form, and photographs the inbox and one approval with chromium.
 * Run: npm run screenshots
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chromium } from 'playwright-core';
import { buildServer } from '../src/http/index.js';
import type { Operator } from '../src/operators/index.js';
import { openGateway } from '../src/toolgate.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const admin = { id: 'screenshots', via: 'library' as const };
const approver: Operator = {
  id: 'alice',
  name: 'Alice Approver',
  roles: ['approver'],
  teams: [],
  authenticatedBy: 'password+totp',
};
const PASSWORD = 'screenshots only';

const dir = mkdtempSync(join(tmpdir(), 'toolgate-screens-'));
const tg = await openGateway({ db: `sqlite:${join(dir, 'tg.db')}` });
try {
  await tg.config.applyText(readFileSync(join(ROOT, 'demo', 'catalog.yaml'), 'utf8'), admin);
  const key = (await tg.keys.issue('support-bot', admin)).apiKey;
  const app = await buildServer(tg, {
    adminToken: 'screenshots-admin-token-0123456789abcdef0123',
    console: {
      // A demo account for the photographs; a real gateway signs operators in with their own.
      loginLocal: async (id, password) => {
        if (id !== approver.id || password !== PASSWORD) throw new Error('no');
        return approver;
      },
    },
  });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  const client = new Client({ name: 'support-bot', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  const mails = [
    [
      'ana@customer.example',
      'Your refund',
      'Hello Ana,\n\nyour refund of EUR 42.00 is on its way.\n\nSupport',
    ],
    [
      'ben@customer.example',
      'Order ORD-004211 shipped',
      'Hello Ben,\n\nyour order left our warehouse today.',
    ],
    ['cy@customer.example', 'Ticket T-1182', 'Hello Cy,\n\nwe need one more detail to help you.'],
  ];
  let first = '';
  for (const [to, subject, body] of mails) {
    const result = await client.callTool({ name: 'send_email', arguments: { to, subject, body } });
    const meta = (result._meta as Record<string, { approval_id?: string }> | undefined)?.[
      'toolgate/decision'
    ];
    first ||= meta?.approval_id ?? '';
  }
  await transport.terminateSession().catch(() => {});
  await client.close();

  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
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
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await page.goto(`${base}/console/login`);
    await page.locator('#operator').fill(approver.id);
    await page.locator('#password').fill(PASSWORD);
    await page.locator('#totp').fill('123456');
    await Promise.all([
      page.waitForURL('**/console/inbox'),
      page.locator('#login-form button').click(),
    ]);
    await page.screenshot({ path: join(ROOT, 'docs', 'console-inbox.png') });
    await page.goto(`${base}/console/approvals/${first}`);
    await page.screenshot({ path: join(ROOT, 'docs', 'console-approval.png'), fullPage: true });
  } finally {
    await browser.close();
  }
  await app.close();
  console.log('saved docs/console-inbox.png and docs/console-approval.png');
} finally {
  await tg.close();
  rmSync(dir, { recursive: true, force: true });
}
