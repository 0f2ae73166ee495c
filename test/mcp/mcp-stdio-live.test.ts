/**
 * A stdio `toolgate mcp` proves its credential before every request, as every HTTP request is
 * authenticated (attack round 8 F1: a key revoked after the process started kept running calls,
 * and a disabled agent got INTERNAL), in both eras, while another key of the same agent keeps
 * working; and the checkpoints it writes are signed with the data folder's audit key, the one
 * `audit verify` trusts (F2: a throwaway key left the log unverifiable for good).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ERROR_CODES } from '../../src/core/index.js';
import { runCli } from '../support/cli.js';
import { openStdioFolder, STDIO_ADMIN, type StdioFolder } from '../support/stdio.js';

let folder: StdioFolder;

before(async () => {
  // Without checkpoints of its own: every checkpoint in the log is a stdio process's.
  folder = await openStdioFolder('mcp-stdio-live', { audit: { checkpoints: false } });
});

after(async () => {
  await folder.close();
});

const getOrder = { name: 'get_order', arguments: { order_id: 'ORD-000042' } };

/** What a request answered: ran, or UNAUTHENTICATED (as a tool result or a protocol error). */
async function outcome(request: () => Promise<unknown>): Promise<string> {
  try {
    const r = (await request()) as { isError?: boolean; content?: unknown };
    if (r.isError !== true) return 'ran';
    return /UNAUTHENTICATED/.test(JSON.stringify(r.content))
      ? 'UNAUTHENTICATED'
      : JSON.stringify(r);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    return code === ERROR_CODES.UNAUTHENTICATED.jsonRpc ? 'UNAUTHENTICATED' : String(err);
  }
}

const issue = () => folder.tg.keys.issue('support-bot', STDIO_ADMIN);

/** A client of either SDK: runs before its key is revoked, refused on the very next requests. */
async function revokedMidway(
  client: { callTool(call: typeof getOrder): Promise<unknown>; listTools(): Promise<unknown> },
  keyId: string,
): Promise<void> {
  assert.equal(await outcome(() => client.callTool(getOrder)), 'ran');
  await folder.tg.keys.revoke(keyId, STDIO_ADMIN);
  assert.equal(await outcome(() => client.callTool(getOrder)), 'UNAUTHENTICATED');
  assert.equal(await outcome(() => client.listTools()), 'UNAUTHENTICATED');
}

test('2025 era: a key revoked while the process runs refuses the next request; another key runs on', async () => {
  const revoked = await issue();
  const kept = await issue();
  const a = new Client({ name: 'revoked', version: '1.0.0' });
  const b = new Client({ name: 'kept', version: '1.0.0' });
  await a.connect(new StdioClientTransport(folder.server(revoked.apiKey)));
  await b.connect(new StdioClientTransport(folder.server(kept.apiKey)));
  try {
    await revokedMidway(a, revoked.keyId);
    assert.equal(await outcome(() => b.callTool(getOrder)), 'ran');
  } finally {
    await a.close();
    await b.close();
  }
});

test('2026-07-28 era: a key revoked while the process runs refuses the next request', async () => {
  const key = await issue();
  const client = new ClientV2(
    { name: 'modern-revoked', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(new StdioV2(folder.server(key.apiKey)));
  try {
    await revokedMidway(client, key.keyId);
  } finally {
    await client.close();
  }
});

test("a stdio agent's calls leave a log that audit verify still proves, checkpoints included", async () => {
  const verify = () => runCli(folder.dir, ['audit', 'verify']);
  // The benign neighbour: a checkpoint the CLI signs (making the folder's key, as serve does)
  // verifies before any stdio process of this test ran.
  const signed = await runCli(folder.dir, ['audit', 'checkpoint']);
  assert.equal(signed.code, 0, signed.stderr + signed.stdout);
  const before = await verify();
  assert.equal(before.code, 0, before.stderr + before.stdout);
  const { apiKey } = await issue();
  for (let round = 0; round < 2; round += 1) {
    const client = new Client({ name: 'stdio-audit', version: '1.0.0' });
    await client.connect(new StdioClientTransport(folder.server(apiKey)));
    try {
      for (let i = 0; i < 3; i += 1)
        assert.equal(await outcome(() => client.callTool(getOrder)), 'ran');
    } finally {
      await client.close();
    }
  }
  const after = await verify();
  assert.equal(after.code, 0, after.stderr + after.stdout);
  // Not vacuous: the stdio processes wrote checkpoints, and they verify.
  const count = (run: { stdout: string }) =>
    Number(/(\d+) checkpoints? verif/.exec(run.stdout)?.[1] ?? '0');
  assert.ok(count(after) > count(before), `${before.stdout}\n${after.stdout}`);
});
