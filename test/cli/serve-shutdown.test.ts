/**
 * `toolgate serve` stops cleanly (docs/operations.md "Stopping"), as a container runtime stops it:
 * the real CLI as a child process on SQLite in a temporary data folder, on a port from the kernel.
 * On SIGTERM, with a 2026-07-28 listen stream, a 2025 MCP session (its GET stream, and a call
 * waiting at the client for a person to approve it), an idle keep-alive connection and a slow call
 * open at once, it exits 0 well within its deadline: the slow call gets its result, the listen
 * stream ends with its graceful close, the waiting call is answered APPROVAL_REQUIRED with its
 * approval still pending in the store (as a REST call's, whose client polls it after the restart),
 * the idle connection is closed at once; `audit verify` passes and every call a client was
 * answered for is in the log. A call longer than a short
 * deadline is cut at the deadline (exit 0) and recorded as interrupted. SIGINT drains alike; a
 * request arriving on an open connection meanwhile is refused SHUTTING_DOWN; a second signal ends
 * the process at once, non-zero.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import Database from 'better-sqlite3';
import { ensureBuilt, listeningUrl, runCli, spawnServe } from '../support/cli.js';
import {
  auditRows,
  preCount,
  preRecorded,
  rawConnection,
  slowTool,
} from '../support/serve-stop.js';
import { postListen } from '../support/world.js';

/** Above a loaded host's start of exit: the drain itself is bounded by the deadline. */
const MARGIN_MS = 4_000;

let dir = '';
let supportKey = '';
let slowKey = '';
/** A REST call left waiting for an approval by the first stop: its session and approval. */
let waitingRest = { session: '', approval: '' };
const running: ChildProcess[] = [];

before(() => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-serve-shutdown-'));
  const docs = [
    {
      apiVersion: 'toolgate/v1',
      kind: 'Agent',
      spec: { id: 'slow-bot', display_name: 'Slow', description: 'Waits.', owner: 'platform-team' },
    },
    {
      apiVersion: 'toolgate/v1',
      kind: 'Grant',
      spec: { agent: 'slow-bot', capabilities: ['slow:run'] },
    },
    slowTool('slow_call', 2),
    slowTool('stuck_call', 6),
  ];
  writeFileSync(join(dir, 'slow.yaml'), docs.map((d) => JSON.stringify(d)).join('\n---\n'));
});

after(() => {
  for (const server of running) if (server.exitCode === null) server.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

/** `serve --demo` on the test folder; resolves with its URL and its exit (code, signal, when). */
async function start(extra: readonly string[] = []) {
  const server = spawnServe(dir, extra);
  running.push(server);
  const exit = new Promise<{ code: number | null; at: number }>((resolve) =>
    server.once('exit', (code) => resolve({ code, at: Date.now() })),
  );
  return { server, base: await listeningUrl(server), exit };
}

async function rest(base: string, method: string, path: string, key: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return {
    status: res.status,
    body: (await res.json()) as Record<string, unknown>,
    at: Date.now(),
  };
}

async function openSession(base: string, key: string): Promise<string> {
  const opened = await rest(base, 'POST', '/v1/sessions', key, {});
  assert.equal(opened.status, 201, JSON.stringify(opened.body));
  return String(opened.body.id);
}

/** An idle keep-alive connection: one request answered, then nothing. */
async function idleKeepAlive(base: string) {
  const conn = await rawConnection(base);
  conn.send('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n');
  assert.equal((await conn.response()).status, 200);
  return conn;
}

/** A 2025-era MCP client whose person never answers an approval prompt. */
async function waitingClient(base: string): Promise<{ client: Client; asked: Promise<void> }> {
  let asked: () => void = () => {};
  const prompted = new Promise<void>((resolve) => {
    asked = resolve;
  });
  const client = new Client(
    { name: 'shutdown-test', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } } },
  );
  client.setRequestHandler(ElicitRequestSchema, () => {
    asked();
    return new Promise(() => {});
  });
  client.onerror = () => {};
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${supportKey}` } },
    }),
  );
  return { client, asked: prompted };
}

/** Everything the stream sends until it ends; rejects if it is cut instead of ended. */
async function untilEnd(stream: ReadableStream<Uint8Array>, first: (text: string) => void) {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let told = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text;
    text += decoder.decode(value, { stream: true });
    if (!told) {
      told = true;
      first(text);
    }
  }
}

test('SIGTERM with a listen stream, a 2025 session waiting on an approval, an idle keep-alive connection and a slow call open: exit 0 within the deadline, nothing acknowledged lost', async () => {
  const { base, server, exit } = await start(['--shutdown-deadline', '10']);
  const applied = await runCli(dir, ['apply', '-f', join(dir, 'slow.yaml')]);
  assert.equal(applied.code, 0, applied.stderr);
  for (const [agent, set] of [
    ['support-bot', (k: string) => (supportKey = k)],
    ['slow-bot', (k: string) => (slowKey = k)],
  ] as const) {
    const created = await runCli(dir, ['--json', 'agents', 'create', agent]);
    assert.equal(created.code, 0, created.stderr);
    set((JSON.parse(created.stdout) as { api_key: string }).api_key);
  }

  // A 2026-07-28 listen stream, acknowledged.
  const listen = await postListen(base, supportKey);
  assert.equal(listen.status, 200);
  let acknowledged: () => void = () => {};
  const heard = new Promise<void>((resolve) => {
    acknowledged = resolve;
  });
  const listened = untilEnd(listen.body as ReadableStream<Uint8Array>, () => acknowledged());
  await heard;
  // An idle keep-alive connection.
  const idle = await idleKeepAlive(base);
  // A 2025 session (with its GET stream) whose call waits for a person at the client.
  const { client, asked } = await waitingClient(base);
  const waiting = client.callTool(
    {
      name: 'send_email',
      arguments: { to: 'ben@customer.example', subject: 'Order update', body: 'Shipped.' },
    },
    undefined,
    { timeout: 60_000 },
  ) as Promise<CallToolResult>;
  await asked;
  // A REST call waiting for an approval (its client polls; nothing stands open).
  const restSession = await openSession(base, supportKey);
  const pending = await rest(base, 'POST', `/v1/sessions/${restSession}/calls`, supportKey, {
    tool: 'send_email',
    arguments: { to: 'ann@customer.example', subject: 'Refund', body: 'Done.' },
  });
  assert.equal(pending.status, 202, JSON.stringify(pending.body));
  waitingRest = { session: restSession, approval: String(pending.body.approval_id) };
  // A slow call, running.
  const session = await openSession(base, slowKey);
  const before = preCount(dir, 'slow_call');
  const slow = rest(base, 'POST', `/v1/sessions/${session}/calls`, slowKey, {
    tool: 'slow_call',
    arguments: { note: 'finish me' },
  });
  await preRecorded(dir, 'slow_call', before + 1);

  const t0 = Date.now();
  server.kill('SIGTERM');
  const stopped = await exit;
  assert.equal(stopped.code, 0);
  assert.ok(stopped.at - t0 < 10_000 + MARGIN_MS, `exit after ${stopped.at - t0} ms`);

  // The slow call finished and was answered.
  const answered = await slow;
  assert.equal(answered.status, 200, JSON.stringify(answered.body));
  assert.deepEqual((answered.body.output as { slept: number }).slept, 2);
  // The idle connection was closed at once, long before the slow call ended.
  const idleClosed = await idle.closed;
  assert.ok(idleClosed < answered.at, 'the idle connection was closed before the drain ended');
  // The listen stream ended (not cut), with the subscription's graceful close.
  const streamed = await listened;
  assert.match(streamed, /"resultType":"complete"/);
  // The waiting call was answered: still pending, its approval kept for after the restart.
  const result = await waiting;
  const decision = (result._meta?.['toolgate/decision'] ?? {}) as Record<string, unknown>;
  assert.equal(result.isError, true);
  assert.equal(decision.code, 'APPROVAL_REQUIRED', JSON.stringify(result));
  await client.close().catch(() => {});

  const verified = await runCli(dir, ['audit', 'verify']);
  assert.equal(verified.code, 0, verified.stdout + verified.stderr);
  const rows = auditRows(dir);
  const of = (callId: unknown) => rows.filter((r) => r.call_id === callId);
  assert.deepEqual(
    of(answered.body.call_id).map((r) => [r.kind, r.outcome]),
    [
      ['call.pre', null],
      ['call.post', 'ok'],
    ],
  );
  for (const waited of [decision.call_id, pending.body.call_id])
    assert.deepEqual(
      of(waited).map((r) => r.kind),
      ['call.pending_approval'],
    );
  const db = new Database(join(dir, 'tg.db'), { readonly: true });
  try {
    const approval = db
      .prepare('select status from approvals where id = ?')
      .get(String(decision.approval_id)) as { status: string } | undefined;
    assert.equal(approval?.status, 'pending');
  } finally {
    db.close();
  }
});

test('a call longer than a short deadline: the exit comes at the deadline with code 0, the call recorded as interrupted', async () => {
  const { base, server, exit } = await start(['--shutdown-deadline', '1']);
  // After the restart, the REST call's approval is still pending: its client polls on.
  const { session: restSession, approval } = waitingRest;
  const status = await rest(
    base,
    'GET',
    `/v1/sessions/${restSession}/approvals/${approval}`,
    supportKey,
  );
  assert.equal(status.status, 200, JSON.stringify(status.body));
  assert.equal(status.body.status, 'pending');
  const session = await openSession(base, slowKey);
  const before = preCount(dir, 'stuck_call');
  const stuck = rest(base, 'POST', `/v1/sessions/${session}/calls`, slowKey, {
    tool: 'stuck_call',
    arguments: { note: 'too long' },
  }).then(
    (answer) => ({ answer }),
    (error: unknown) => ({ error }),
  );
  await preRecorded(dir, 'stuck_call', before + 1);

  const t0 = Date.now();
  server.kill('SIGTERM');
  const stopped = await exit;
  assert.equal(stopped.code, 0);
  const took = stopped.at - t0;
  assert.ok(took >= 900 && took < 1_000 + MARGIN_MS, `exit after ${took} ms`);
  // Its connection was cut at the deadline: the client got no answer, so it was told nothing.
  assert.ok('error' in (await stuck), 'the stuck call was not answered');

  const verified = await runCli(dir, ['audit', 'verify']);
  assert.equal(verified.code, 0, verified.stdout + verified.stderr);
  const rows = auditRows(dir).filter((r) => r.tool_id === 'stuck_call');
  assert.deepEqual(
    rows.map((r) => [r.kind, r.outcome, r.rule]),
    [
      ['call.pre', null, null],
      ['call.post', 'interrupted', 'gateway.shutdown'],
    ],
  );
  assert.equal(rows[0]?.call_id, rows[1]?.call_id);
});

test('SIGINT drains alike: idle connections close, a request on an open one is refused SHUTTING_DOWN; a second signal exits at once, non-zero', async () => {
  const { base, server, exit } = await start();
  const session = await openSession(base, slowKey);
  const before = preCount(dir, 'stuck_call');
  const stuck = rest(base, 'POST', `/v1/sessions/${session}/calls`, slowKey, {
    tool: 'stuck_call',
    arguments: { note: 'second signal' },
  }).catch(() => null);
  await preRecorded(dir, 'stuck_call', before + 1);
  const idle = await idleKeepAlive(base);
  // A request whose headers are not complete yet: its connection is not idle.
  const late = await rawConnection(base);
  late.send('GET /v1/tools HTTP/1.1\r\nHost: 127.0.0.1\r\n');

  server.kill('SIGINT');
  await idle.closed;
  late.send('\r\n');
  const answer = await late.response();
  const refused = `${answer.head}\r\n\r\n${answer.body}`;
  assert.match(refused, /^HTTP\/1\.1 503/);
  assert.match(refused, /\r\nconnection: close\r\n/i);
  assert.match(refused, /\r\nretry-after: \d+\r\n/i);
  assert.match(refused, /"code":"SHUTTING_DOWN"/);
  assert.equal(server.exitCode, null, 'the drain waits for the call in flight');

  const t1 = Date.now();
  server.kill('SIGINT');
  const stopped = await exit;
  assert.notEqual(stopped.code, 0);
  assert.ok(stopped.at - t1 < MARGIN_MS, `exit ${stopped.at - t1} ms after the second signal`);
  await stuck;
  // Nothing was lost that had been written: the chain verifies (the stopped call has its pre
  // record only, which says what it is: outcome unknown).
  const verified = await runCli(dir, ['audit', 'verify']);
  assert.equal(verified.code, 0, verified.stdout + verified.stderr);
});
