/**
 * `toolgate serve`'s stop with HTTP/1.1 pipelining (docs/operations.md "Stopping"; attack round
 * 21, X1): the real CLI as a child process on SQLite, requests sent back to back on one raw TCP
 * connection. Every request the server had begun to handle when the stop came is answered before
 * its connection closes, and only the connection's last answer carries `Connection: close` (a
 * close on an earlier one tells the client, RFC 9112 §9.6, that the later requests were not
 * processed: it may send a call that ran once more). Calls in flight get until the deadline,
 * however they are queued on their connection; a request sent after the stop began is refused
 * SHUTTING_DOWN, answered, and never run; that refusal is logged as a refusal (info, no stack),
 * not as a failure. The benign neighbours: a pipelined pair without a stop is answered in order on
 * a connection that stays open, and calls on connections of their own are answered as always.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ensureBuilt, listeningUrl, runCli, spawnServe } from '../support/cli.js';
import {
  auditRows,
  connectionTokens,
  postText,
  preCount,
  preRecorded,
  type RawResponse,
  rawConnection,
  slowTool,
} from '../support/serve-stop.js';

/**
 * The `_meta` envelope of a raw 2026-07-28 request (as MODERN_ENVELOPE in test/support/world.ts,
 * which would load the whole gateway into this process for three keys).
 */
const MODERN_ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
};
/** Far above the longest call here (6 s): a stop that waits for its calls ends before it. */
const DEADLINE_S = 20;

let dir = '';
let key = '';
let base = '';
let server: ChildProcess | undefined;
let exit: Promise<{ code: number | null; at: number }> = Promise.resolve({ code: null, at: 0 });
let log = '';

before(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-serve-pipelining-'));
  const docs = [
    {
      apiVersion: 'toolgate/v1',
      kind: 'Agent',
      spec: {
        id: 'pipe-bot',
        display_name: 'Pipe',
        description: 'Pipelines.',
        owner: 'platform-team',
      },
    },
    {
      apiVersion: 'toolgate/v1',
      kind: 'Grant',
      spec: { agent: 'pipe-bot', capabilities: ['pipe:run'] },
    },
    slowTool('pipe_quick', 0, 'pipe:run'),
    slowTool('pipe_one', 1, 'pipe:run'),
    slowTool('pipe_four', 4, 'pipe:run'),
    slowTool('pipe_six', 6, 'pipe:run'),
    // Only ever sent after the stop began: it must never run.
    slowTool('pipe_never', 0, 'pipe:run'),
  ];
  writeFileSync(join(dir, 'pipe.yaml'), docs.map((d) => JSON.stringify(d)).join('\n---\n'));
  server = spawnServe(dir, ['--shutdown-deadline', String(DEADLINE_S)], {
    TOOLGATE_LOG_LEVEL: 'info',
  });
  server.stdout?.on('data', (chunk: Buffer) => {
    log += chunk.toString();
  });
  const child = server;
  exit = new Promise((resolve) => child.once('exit', (code) => resolve({ code, at: Date.now() })));
  base = await listeningUrl(server);
  const applied = await runCli(dir, ['apply', '-f', join(dir, 'pipe.yaml')]);
  assert.equal(applied.code, 0, applied.stderr);
  const created = await runCli(dir, ['--json', 'agents', 'create', 'pipe-bot']);
  assert.equal(created.code, 0, created.stderr);
  key = (JSON.parse(created.stdout) as { api_key: string }).api_key;
});

after(() => {
  if (server && server.exitCode === null) server.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

async function openSession(): Promise<string> {
  const res = await fetch(`${base}/v1/sessions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: '{}',
  });
  const body = (await res.json()) as { id?: string };
  assert.equal(res.status, 201, JSON.stringify(body));
  return String(body.id);
}

/** A REST call of `tool` in `session`, as sent on a raw connection. */
function restCall(session: string, tool: string): string {
  return postText(`/v1/sessions/${session}/calls`, key, { tool, arguments: { note: tool } });
}

/** A 2026-07-28 `tools/call` of `tool` (request `id`), as sent on a raw connection. */
function mcpCall(tool: string, id: number): string {
  return postText(
    '/mcp',
    key,
    {
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: tool, arguments: { note: tool }, _meta: MODERN_ENVELOPE },
    },
    {
      Accept: 'application/json, text/event-stream',
      'Mcp-Protocol-Version': '2026-07-28',
      'Mcp-Method': 'tools/call',
      'Mcp-Name': tool,
    },
  );
}

/** How long `tool` slept, as a REST answer says (its output). */
function restSlept(res: RawResponse): unknown {
  assert.equal(res.status, 200, res.head + res.body);
  return (JSON.parse(res.body) as { output?: { slept?: unknown } }).output?.slept;
}

/** How long `tool` slept, as an MCP answer says (JSON or an event stream), and its request id. */
function mcpSlept(res: RawResponse): { id: unknown; slept: unknown } {
  assert.equal(res.status, 200, res.head + res.body);
  const messages = (res.headers['content-type'] ?? '').startsWith('text/event-stream')
    ? res.body
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>)
    : [JSON.parse(res.body) as Record<string, unknown>];
  const answer = messages.find((m) => m.id !== undefined) ?? {};
  const result = answer.result as { structuredContent?: { slept?: unknown } } | undefined;
  assert.ok(result, `no result: ${res.body}`);
  return { id: answer.id, slept: result.structuredContent?.slept };
}

function keepsOpen(res: RawResponse): void {
  assert.ok(!connectionTokens(res).includes('close'), `closed early:\n${res.head}`);
}

function closes(res: RawResponse): void {
  assert.ok(connectionTokens(res).includes('close'), `no close on the last answer:\n${res.head}`);
}

test('without a stop, two calls pipelined on one connection are answered in order, and the connection stays open', async () => {
  const session = await openSession();
  const conn = await rawConnection(base);
  // The first call outlasts the second: the second's answer waits behind it.
  conn.send(restCall(session, 'pipe_one') + restCall(session, 'pipe_quick'));
  const first = await conn.response();
  const second = await conn.response();
  assert.equal(restSlept(first), 1);
  assert.equal(restSlept(second), 0);
  keepsOpen(first);
  keepsOpen(second);
  // Still usable: a third request on it is answered.
  conn.send(restCall(session, 'pipe_quick'));
  const third = await conn.response();
  assert.equal(restSlept(third), 0);
  assert.equal(conn.socket.destroyed, false);
  conn.socket.destroy();
});

test('SIGTERM with pipelined calls in flight (REST and /mcp): every call begun is answered, the close on the last answer only; a request sent after the stop began is refused and never runs', async () => {
  const session = await openSession();
  // An idle keep-alive connection: its close says the drain has begun.
  const idle = await rawConnection(base);
  idle.send('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  assert.equal((await idle.response()).status, 200);
  const before = preCount(dir, null);
  // Case A: call 1 outlasts call 2, whose answer waits behind call 1's.
  const a = await rawConnection(base);
  a.send(restCall(session, 'pipe_four') + restCall(session, 'pipe_quick'));
  // Case B: call 2 outlasts call 1 (and the stop's start) by seconds.
  const b = await rawConnection(base);
  b.send(restCall(session, 'pipe_four') + restCall(session, 'pipe_six'));
  // The same on /mcp.
  const m = await rawConnection(base);
  m.send(mcpCall('pipe_four', 1) + mcpCall('pipe_quick', 2));
  // A keep-alive connection whose next request comes once the stop has begun.
  const k = await rawConnection(base);
  k.send(restCall(session, 'pipe_four'));
  // The neighbours: calls on connections of their own.
  const own = [await rawConnection(base), await rawConnection(base)];
  for (const c of own) c.send(restCall(session, 'pipe_four'));
  await preRecorded(dir, null, before + 9);

  const t0 = Date.now();
  server?.kill('SIGTERM');
  // From here on the server drains.
  const draining = await idle.closed;
  // Two, back to back: each is refused, and only the second answer closes the connection.
  k.send(restCall(session, 'pipe_never') + restCall(session, 'pipe_never'));
  m.send(mcpCall('pipe_never', 3));

  const answers = async (c: typeof a, n: number) => {
    const got: RawResponse[] = [];
    for (let i = 0; i < n; i += 1) got.push(await c.response());
    return { got, closed: await c.closed };
  };
  const [ra, rb, rm, rk, ...rown] = await Promise.all([
    answers(a, 2),
    answers(b, 2),
    answers(m, 3),
    answers(k, 3),
    ...own.map((c) => answers(c, 1)),
  ]);
  const stopped = await exit;
  assert.equal(stopped.code, 0);
  // The stop ended when its calls had, not at the deadline: nothing was cut.
  assert.ok(stopped.at - t0 < DEADLINE_S * 1000, `exit ${stopped.at - t0} ms after SIGTERM`);
  assert.doesNotMatch(log, /deadline passed/);
  // The premise: each connection's first call was still running when the drain began.
  for (const r of [ra, rb, rm, rk]) {
    const at = (r.got[0]?.at ?? 0) - draining;
    assert.ok(at > 0, `a first call answered ${at} ms after the drain began`);
  }

  // Case A: both answered, then the connection closed. (Call 2's answer was written before the
  // stop, queued behind call 1's: it says keep-alive, and the idle connection is closed after it.)
  assert.deepEqual(ra.got.map(restSlept), [4, 0]);
  keepsOpen(ra.got[0] as RawResponse);
  // Case B: call 2 ran to its end (6 s), within the deadline, and was answered.
  assert.deepEqual(rb.got.map(restSlept), [4, 6]);
  keepsOpen(rb.got[0] as RawResponse);
  closes(rb.got[1] as RawResponse);
  // /mcp: both calls answered, in order, then the request sent during the stop refused.
  assert.deepEqual(rm.got.slice(0, 2).map(mcpSlept), [
    { id: 1, slept: 4 },
    { id: 2, slept: 0 },
  ]);
  keepsOpen(rm.got[0] as RawResponse);
  keepsOpen(rm.got[1] as RawResponse);
  const rpcRefused = rm.got[2] as RawResponse;
  assert.equal(rpcRefused.status, 503, rpcRefused.head + rpcRefused.body);
  const rpc = JSON.parse(rpcRefused.body) as { error?: { data?: { code?: string } } };
  assert.equal(rpc.error?.data?.code, 'SHUTTING_DOWN', rpcRefused.body);
  closes(rpcRefused);
  // The requests sent during the stop: refused, after the call before them was answered.
  assert.equal(restSlept(rk.got[0] as RawResponse), 4);
  keepsOpen(rk.got[0] as RawResponse);
  for (const refused of rk.got.slice(1)) {
    assert.equal(refused.status, 503, refused.head + refused.body);
    assert.equal((JSON.parse(refused.body) as { code?: string }).code, 'SHUTTING_DOWN');
    assert.equal(refused.headers['retry-after'], '5');
  }
  keepsOpen(rk.got[1] as RawResponse);
  closes(rk.got[2] as RawResponse);
  // Calls on their own connections: answered, their connection closed after.
  for (const r of rown) {
    assert.equal(restSlept(r.got[0] as RawResponse), 4);
    closes(r.got[0] as RawResponse);
  }

  // Every call that ran has its pre and an ok post record; the refused one never ran.
  const rows = auditRows(dir);
  assert.equal(preCount(dir, 'pipe_never'), 0);
  const calls = rows.filter((r) => r.kind === 'call.pre').map((r) => r.call_id);
  for (const call of calls.slice(-9)) {
    assert.deepEqual(
      rows.filter((r) => r.call_id === call).map((r) => [r.kind, r.outcome]),
      [
        ['call.pre', null],
        ['call.post', 'ok'],
      ],
    );
  }

  // The refusal is logged as a refusal: info, without a stack; nothing about it as an error.
  const lines = log
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const refusals = lines.filter((l) => JSON.stringify(l).includes('SHUTTING_DOWN'));
  assert.ok(refusals.length > 0, 'the refusal is logged');
  for (const l of refusals) {
    assert.equal(l.level, 30, JSON.stringify(l));
    assert.ok(!JSON.stringify(l).includes('"stack"'), JSON.stringify(l));
  }
});
