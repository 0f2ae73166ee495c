/**
 * The checkpoints a stdio `toolgate mcp` writes are signed with the data folder's audit key, the
 * one `audit verify` trusts (attack round 8 F2: they were signed with a throwaway key, and the
 * log stopped verifying for good after a local agent's calls).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Actor } from '../../src/core/index.js';
import { cleanEnv, ensureBuilt, MAIN, runCli } from '../support/cli.js';
import { openDemoGateway } from '../support/world.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
let dir: string;
let db: string;
let key: string;

before(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-mcp-stdio-audit-'));
  db = `sqlite:${join(dir, 'tg.db')}`;
  // Set up without checkpoints of its own: every checkpoint in the log is the stdio process's.
  const tg = await openDemoGateway({ db, audit: { checkpoints: false } }, admin);
  key = (await tg.keys.issue('support-bot', admin)).apiKey;
  await tg.close();
});

after(() => {
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

/** `audit verify` on the folder's database with its data folder (the trusted audit key). */
function verify() {
  return runCli(dir, ['audit', 'verify']);
}

test("a stdio agent's calls leave a log that audit verify still proves, checkpoints included", async () => {
  // The benign neighbour: a checkpoint the CLI signs (making the folder's key, as serve does)
  // verifies before any stdio process ran.
  const signed = await runCli(dir, ['audit', 'checkpoint']);
  assert.equal(signed.code, 0, signed.stderr + signed.stdout);
  const before = await verify();
  assert.equal(before.code, 0, before.stderr + before.stdout);
  for (let round = 0; round < 2; round += 1) {
    const client = new Client({ name: 'stdio-audit', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [MAIN, '--db', db, '--data-dir', join(dir, 'data'), 'mcp'],
        env: { ...(cleanEnv() as Record<string, string>), TOOLGATE_AGENT_KEY: key },
        stderr: 'pipe',
      }),
    );
    try {
      for (let i = 0; i < 3; i += 1) {
        const r = (await client.callTool({
          name: 'get_order',
          arguments: { order_id: 'ORD-000042' },
        })) as CallToolResult;
        assert.notEqual(r.isError, true, JSON.stringify(r));
      }
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
