/**
 * A stdio `toolgate mcp` proves its credential before every request, as every HTTP request is
 * authenticated (attack round 8 F1: a key revoked after the process started kept running calls,
 * and a disabled agent got INTERNAL). Both eras; another key of the same agent keeps working.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { type Actor, ERROR_CODES } from '../../src/core/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { cleanEnv, ensureBuilt, MAIN } from '../support/cli.js';
import { openDemoGateway } from '../support/world.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
let dir: string;
let db: string;
let tg: Gateway;

before(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-mcp-stdio-live-'));
  db = `sqlite:${join(dir, 'tg.db')}`;
  tg = await openDemoGateway({ db }, admin);
});

after(async () => {
  await tg.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

function stdio(agentKey: string) {
  return {
    command: process.execPath,
    args: [MAIN, '--db', db, '--data-dir', join(dir, 'data'), 'mcp'],
    env: { ...(cleanEnv() as Record<string, string>), TOOLGATE_AGENT_KEY: agentKey },
    stderr: 'pipe' as const,
  };
}

const getOrder = { name: 'get_order', arguments: { order_id: 'ORD-000042' } };

/** What a call answered: ran, or the code it was refused with (a result or a protocol error). */
async function outcome(call: () => Promise<unknown>): Promise<string> {
  try {
    const r = (await call()) as { isError?: boolean; content?: unknown };
    if (r.isError !== true) return 'ran';
    return /UNAUTHENTICATED/.test(JSON.stringify(r.content))
      ? 'UNAUTHENTICATED'
      : JSON.stringify(r);
  } catch (err) {
    // A protocol error: UNAUTHENTICATED's JSON-RPC number in the catalogue.
    const code = (err as { code?: unknown }).code;
    return code === ERROR_CODES.UNAUTHENTICATED.jsonRpc ? 'UNAUTHENTICATED' : String(err);
  }
}

test('2025 era: a key revoked while the process runs refuses the next request; another key runs on', async () => {
  const revoked = await tg.keys.issue('support-bot', admin);
  const kept = await tg.keys.issue('support-bot', admin);
  const a = new Client({ name: 'revoked', version: '1.0.0' });
  const b = new Client({ name: 'kept', version: '1.0.0' });
  await a.connect(new StdioClientTransport(stdio(revoked.apiKey)));
  await b.connect(new StdioClientTransport(stdio(kept.apiKey)));
  try {
    assert.equal(await outcome(() => a.callTool(getOrder)), 'ran');
    await tg.keys.revoke(revoked.keyId, admin);
    assert.equal(await outcome(() => a.callTool(getOrder)), 'UNAUTHENTICATED');
    assert.equal(await outcome(() => a.listTools()), 'UNAUTHENTICATED');
    assert.equal(await outcome(() => b.callTool(getOrder)), 'ran');
  } finally {
    await a.close();
    await b.close();
  }
});

test('2026-07-28 era: a key revoked while the process runs refuses the next request', async () => {
  const key = await tg.keys.issue('support-bot', admin);
  const client = new ClientV2(
    { name: 'modern-revoked', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(new StdioV2(stdio(key.apiKey)));
  try {
    assert.equal(await outcome(() => client.callTool(getOrder)), 'ran');
    await tg.keys.revoke(key.keyId, admin);
    assert.equal(await outcome(() => client.callTool(getOrder)), 'UNAUTHENTICATED');
    assert.equal(await outcome(() => client.listTools()), 'UNAUTHENTICATED');
  } finally {
    await client.close();
  }
});
