/**
 * Saves the console screenshots that README and docs/operators-and-approvals.md show
 * (docs/console-inbox.png, docs/console-approval.png):
 * starts a demo gateway on 127.0.0.1 with a few calls waiting for approval, creates a demo
 * approver's account and second factor, signs them in through the login form with a TOTP code, and photographs the inbox and one approval with chromium.
 * Run: npm run screenshots
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chromium } from 'playwright-core';
import { MasterKey } from '../src/domain/credentials/index.js';
import { totpAt } from '../src/domain/decisions/index.js';
import { BOOTSTRAP_OPERATOR, type Operator } from '../src/domain/operators/index.js';
import { buildServer } from '../src/edge/rest/index.js';
import { openGateway } from '../src/host/toolgate.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const admin = { id: 'screenshots', via: 'library' as const };
/** Reviews the demo's restricted tools so they are live (a reviewer's decision, not an account). */
const reviewer: Operator = {
  id: 'demo-reviewer',
  name: 'Demo Reviewer',
  roles: ['approver'],
  teams: [],
  authenticatedBy: 'password+totp',
};
const PASSWORD = 'screenshots only, never a real one';

const dir = mkdtempSync(join(tmpdir(), 'toolgate-screens-'));
const tg = await openGateway({
  db: `sqlite:${join(dir, 'tg.db')}`,
  masterKey: MasterKey.generate(),
});
try {
  await tg.config.applyText(readFileSync(join(ROOT, 'demo', 'catalog.yaml'), 'utf8'), admin);
  for (const r of (await tg.admin.reviews.page('pending', { limit: 500 })).items) {
    const { definition_hash } = await tg.catalog.get(r.tool_id, r.version);
    await tg.catalog.review(r.tool_id, r.version, reviewer, {
      definition_hash,
      decision: 'approved',
      notes: 'demo catalog',
    });
  }
  const key = (await tg.keys.issue('support-bot', admin)).apiKey;
  // The demo approver: a real local account with a second factor, as an admin creates one.
  await tg.admin.operators.create(BOOTSTRAP_OPERATOR, {
    id: 'alice',
    name: 'Alice Approver',
    roles: ['approver'],
    password: PASSWORD,
  });
  const { secret } = await tg.admin.secondFactor.enroll(BOOTSTRAP_OPERATOR, 'alice');
  const app = await buildServer(tg, {
    adminToken: 'screenshots-admin-token-0123456789abcdef0123',
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
    await page.locator('#operator').fill('alice');
    await page.locator('#password').fill(PASSWORD);
    await page.locator('#totp').fill(totpAt(secret, new Date()));
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
