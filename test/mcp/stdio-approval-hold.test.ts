/**
 * `toolgate mcp` holds a call that waits for approval open for its decision, as `/mcp` does
 * (docs/mcp.md, "Stock clients wait for the person"), and a decision made in another process (here
 * the test's own gateway on the same folder, as the CLI or another replica would) wakes it within
 * the poll interval: the stock client, in either era and with its default options, gets the
 * tool's result in the same call, the call running once.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { openStore } from '../../src/records/store/index.js';
import { approveInFolder } from '../support/operators.js';
import { openStdioFolder, STDIO_ADMIN, type StdioFolder } from '../support/stdio.js';
import { toolRecords } from '../support/world.js';

/** Long enough that only the decision ends the hold in these tests. */
const HOLD_S = 20;

let folder: StdioFolder;
let key: string;

before(async () => {
  folder = await openStdioFolder('stdio-approval-hold');
  key = (await folder.tg.keys.issue('support-bot', STDIO_ADMIN)).apiKey;
});

after(async () => {
  await folder.close();
});

/** The pending approval of `send_email` to `to`, once the stdio process has asked for it. */
async function pendingFor(to: string): Promise<string> {
  for (let i = 0; i < 500; i += 1) {
    const found = (await folder.tg.admin.approvals.list('pending')).find(
      (a) => (a.rendered.arguments as { to?: unknown }).to === to,
    );
    if (found) return found.id;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`no pending approval for ${to}`);
}

/** How many times `send_email` started (its `call.pre` records). */
async function sends(): Promise<number> {
  const store = await openStore(folder.db);
  try {
    return (await toolRecords(store, 'send_email', 'call.pre')).length;
  } finally {
    await store.close();
  }
}

for (const era of ['2025-11-25', '2026-07-28'] as const) {
  test(`${era}: a call held over stdio runs when an approver decides in another process`, async () => {
    const client =
      era === '2025-11-25'
        ? new Client({ name: 'stdio-hold', version: '1.0.0' })
        : new ClientV2(
            { name: 'stdio-hold', version: '1.0.0' },
            { versionNegotiation: { mode: { pin: '2026-07-28' } } },
          );
    const server = folder.server(key, HOLD_S);
    await client.connect(
      era === '2025-11-25' ? new StdioClientTransport(server) : new StdioV2(server),
    );
    try {
      const to = `held-${era}@customer.example`;
      const before = await sends();
      const answer = client.callTool({
        name: 'send_email',
        arguments: { to, subject: 'Your refund', body: 'It is on its way.' },
      }) as Promise<{ isError?: boolean; structuredContent?: Record<string, unknown> }>;
      const approvalId = await pendingFor(to);
      const decided = Date.now();
      await approveInFolder(folder.dir, approvalId);
      const result = await answer;
      assert.notEqual(result.isError, true, JSON.stringify(result));
      assert.match(String(result.structuredContent?.message_id), /^msg-/);
      // Woken by the poll of the other process's decision, long before the hold's end.
      assert.ok(Date.now() - decided < (HOLD_S * 1000) / 2, `${Date.now() - decided} ms`);
      assert.equal(await sends(), before + 1, 'ran once');
      assert.equal((await folder.tg.admin.approvals.get(approvalId)).status, 'consumed');
    } finally {
      await client.close();
    }
  });
}
