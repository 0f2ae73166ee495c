/**
 * Approvals as multi round-trip requests over stdio: the official v2 client pinned to
 * 2026-07-28 spawns the built `toolgate mcp`, gets `InputRequiredResult` for a call that needs
 * approval, disconnects; an approver decides; a new process (a reconnect) completes the call with
 * the sealed state alone, once — a replay is refused.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { openStore } from '../../src/records/store/index.js';
import { approveInFolder } from '../support/operators.js';
import { openStdioFolder, STDIO_ADMIN, type StdioFolder } from '../support/stdio.js';
import { toolRecords } from '../support/world.js';

const admin = STDIO_ADMIN;
const RUN = 'io.toolgate/run';
let folder: StdioFolder;
let dir: string;
let db: string;
let key: string;

type Answer = {
  resultType?: string;
  requestState?: string;
  isError?: boolean;
  _meta?: Record<string, unknown>;
};

before(async () => {
  folder = await openStdioFolder('mrtr-stdio');
  ({ dir, db } = folder);
  key = (await folder.tg.keys.issue('support-bot', admin)).apiKey;
});

after(async () => {
  await folder.close();
});

async function connect(): Promise<Client> {
  const client = new Client(
    { name: 'mrtr-stdio', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } }, inputRequired: { autoFulfill: false } },
  );
  await client.connect(new StdioClientTransport(folder.server(key)));
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
  const pre = await toolRecords(inspector, 'send_email', 'call.pre');
  await inspector.close();
  assert.equal(pre.length, 1, 'ran once');
});
