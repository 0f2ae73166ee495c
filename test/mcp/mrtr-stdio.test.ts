/**
 * Approvals as multi round-trip requests over stdio: the official v2 client pinned to
 * 2026-07-28 spawns the built `toolgate mcp`, gets `InputRequiredResult` for a call that needs
 * approval, disconnects; an approver decides; a new process (a reconnect) completes the call with
 * the sealed state alone, once — a replay is refused.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { Actor } from '../../src/core/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { openStore } from '../../src/records/store/index.js';
import { cleanEnv, ensureBuilt, MAIN, ROOT } from '../support/cli.js';
import { approveInFolder } from '../support/operators.js';
import { approvePendingReviews } from '../support/reviews.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const RUN = 'io.toolgate/run';
let dir: string;
let db: string;
let tg: Gateway;
let key: string;

type Answer = {
  resultType?: string;
  requestState?: string;
  isError?: boolean;
  _meta?: Record<string, unknown>;
};

before(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-mrtr-stdio-'));
  db = `sqlite:${join(dir, 'tg.db')}`;
  tg = await openGateway({ db });
  await tg.config.applyText(readFileSync(join(ROOT, 'demo', 'catalog.yaml'), 'utf8'), admin);
  await approvePendingReviews(tg);
  key = (await tg.keys.issue('support-bot', admin)).apiKey;
});

after(async () => {
  await tg.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

async function connect(): Promise<Client> {
  const client = new Client(
    { name: 'mrtr-stdio', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } }, inputRequired: { autoFulfill: false } },
  );
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [MAIN, '--db', db, '--data-dir', join(dir, 'data'), 'mcp'],
      env: { ...(cleanEnv() as Record<string, string>), TOOLGATE_AGENT_KEY: key },
      stderr: 'pipe',
    }),
  );
  return client;
}

const EMAIL = { to: 'customer@example.com', subject: 'Your refund', body: 'It is on its way.' };

function send(client: Client, state?: string): Promise<Answer> {
  return client.callTool(
    { name: 'send_email', arguments: EMAIL, ...(state ? { requestState: state } : {}) } as never,
    { allowInputRequired: true },
  ) as Promise<Answer>;
}

test('over stdio: input required, approve, a new process completes it once, a replay is refused', async () => {
  const first = await connect();
  let state: string;
  let run: string;
  let approvalId: string;
  try {
    const waiting = await send(first);
    assert.equal(waiting.resultType, 'input_required', JSON.stringify(waiting));
    state = waiting.requestState as string;
    run = waiting._meta?.[RUN] as string;
    approvalId =
      (waiting._meta?.['io.toolgate/approval'] as { approval_id: string } | undefined)
        ?.approval_id ?? '';
  } finally {
    await first.close();
  }
  await approveInFolder(dir, approvalId);

  const second = await connect();
  try {
    const done = await send(second, state);
    assert.notEqual(done.isError, true, JSON.stringify(done));
    assert.equal(done.resultType, undefined);
    assert.equal(done._meta?.[RUN], run, 'the state carried its run to the new process');
    await assert.rejects(send(second, state), (err: { code?: number }) => err.code === -32083);
  } finally {
    await second.close();
  }
  const inspector = await openStore(db);
  const pre = await inspector.db
    .selectFrom('audit_log')
    .select('seq')
    .where('tool_id', '=', 'send_email')
    .where('kind', '=', 'call.pre')
    .execute();
  await inspector.close();
  assert.equal(pre.length, 1, 'ran once');
});
