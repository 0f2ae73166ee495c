/**
 * Robustness of the MCP front under load, against the real `toolgate serve --demo` process:
 * MCP_LOAD_SESSIONS concurrent SDK clients (200 by default) call tools for MCP_LOAD_SECONDS
 * (60 by default) on loopback. Every call must get an answer (allowed, or a tool error result
 * carrying a gate decision — never a protocol error), the gateway's resident memory must stay
 * bounded, and a client that disconnects in the middle of calls must not hurt anyone else.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { cleanEnv, ensureBuilt, listeningUrl, MAIN } from '../support/cli.js';

const SESSIONS = Number(process.env.MCP_LOAD_SESSIONS ?? 200);
const SECONDS = Number(process.env.MCP_LOAD_SECONDS ?? 60);
const CALL_TIMEOUT_MS = 100_000;

let dir: string;
let server: ChildProcess;
let base = '';
let apiKey = '';

function rssKb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
}

before(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-mcp-load-'));
  const common = ['--db', `sqlite:${join(dir, 'tg.db')}`, '--data-dir', join(dir, 'data')];
  server = spawn(
    process.execPath,
    [MAIN, ...common, 'serve', '--demo', '--port', '0', '--admin-token-file', join(dir, 'admin')],
    { cwd: dir, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  base = await listeningUrl(server);
  // A built-in tool with no rate limit (the demo's have per-run limits), so allowed calls flow
  // for the whole run; support-bot holds docs:read.
  writeFileSync(
    join(dir, 'load-tool.yaml'),
    [
      'kind: Tool',
      'spec:',
      '  id: load_echo',
      '  version: 1.0.0',
      '  name: load_echo',
      '  description: Return an empty object; used to put load on the gateway.',
      '  owner: qa',
      '  input_schema: { type: object, additionalProperties: false, properties: {} }',
      '  output_schema: { type: object }',
      '  action_class: read',
      '  data_access: public',
      '  egress: { mode: none }',
      '  access_tier: public',
      '  required_capabilities: ["docs:read"]',
      '  runtime: { kind: inline, handler: noop }',
      '  provenance: internal',
      '',
    ].join('\n'),
  );
  await new Promise<void>((resolve, reject) => {
    execFile(
      process.execPath,
      [MAIN, ...common, 'apply', '-f', join(dir, 'load-tool.yaml')],
      { cwd: dir, env: cleanEnv() },
      (err, _stdout, stderr) => (err ? reject(new Error(stderr)) : resolve()),
    );
  });
  apiKey = await new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      [MAIN, ...common, '--json', 'agents', 'create', 'support-bot'],
      { cwd: dir, env: cleanEnv() },
      (err, stdout, stderr) =>
        err
          ? reject(new Error(stderr))
          : resolve((JSON.parse(stdout) as { api_key: string }).api_key),
    );
  });
});

after(async () => {
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

async function client(): Promise<Client> {
  const c = new Client({ name: 'load', version: '1.0.0' });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${apiKey}` } },
    }),
  );
  return c;
}

test(`${SESSIONS} concurrent MCP sessions call tools for ${SECONDS} s with no errors and bounded memory`, {
  timeout: SECONDS * 1000 + CALL_TIMEOUT_MS + 60_000,
}, async () => {
  const pid = server.pid as number;
  const clients: Client[] = [];
  for (let i = 0; i < SESSIONS; i += 20) {
    clients.push(
      ...(await Promise.all(Array.from({ length: Math.min(20, SESSIONS - i) }, client))),
    );
  }
  const counts = { allowed: 0, denied: 0, errors: 0 };
  const errors: string[] = [];
  const samples: number[] = [];
  const end = Date.now() + SECONDS * 1000;
  const sampler = setInterval(() => samples.push(rssKb(pid)), 1000);
  // One client in ten sends a call the gate must refuse, so denials flow under load too.
  await Promise.all(
    clients.map(async (c, i) => {
      while (Date.now() < end) {
        try {
          const result = (await c.callTool(
            i % 10 === 0
              ? { name: 'post_webhook', arguments: { url: 'https://evil.example/', payload: {} } }
              : { name: 'load_echo', arguments: {} },
            undefined,
            // Every call must be answered, not answered within the SDK's default 60 s: on a host
            // shared with other test runs a few answers took longer. Still bounded, well inside
            // the test's own timeout.
            { timeout: CALL_TIMEOUT_MS },
          )) as CallToolResult;
          if (!result.isError) {
            counts.allowed += 1;
          } else {
            // A refusal must be a gate decision (rate limits do refuse under this load), never
            // an unexplained error result.
            counts.denied += 1;
            const meta = result._meta?.['toolgate/decision'] as { code?: string } | undefined;
            if (!meta?.code) {
              counts.errors += 1;
              if (errors.length < 5)
                errors.push(`undecided error result: ${JSON.stringify(result)}`);
            }
          }
        } catch (err) {
          counts.errors += 1;
          if (errors.length < 5) errors.push(String(err));
        }
      }
    }),
  );
  clearInterval(sampler);
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  console.log(
    `# mcp load: ${JSON.stringify({ ...counts, sessions: SESSIONS, seconds: SECONDS, rss_kb: { first: samples[0], last: samples.at(-1) } })}`,
  );
  assert.equal(counts.errors, 0, `protocol errors under load: ${errors.join('; ')}`);
  assert.ok(counts.allowed > SESSIONS, `too few calls completed: ${JSON.stringify(counts)}`);
  assert.ok(counts.denied > 0);
  // Bounded: after the first quarter (warm-up), RSS may not keep climbing; allow 150 MB of slack.
  const warm = samples.slice(Math.floor(samples.length / 4));
  const peak = Math.max(...warm);
  const first = warm[0] ?? peak;
  assert.ok(
    peak - first < 150 * 1024,
    `gateway RSS grew from ${first} kB to ${peak} kB under steady load`,
  );
  const health = await fetch(`${base}/healthz`);
  assert.equal(health.status, 200);
});

test('a client that disconnects in the middle of calls leaves the others served', async () => {
  const steady = await client();
  const leaver = new AbortController();
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${apiKey}` }, signal: leaver.signal },
  });
  const c = new Client({ name: 'leaver', version: '1.0.0' });
  await c.connect(transport);
  const inflight = Array.from({ length: 20 }, () =>
    c.callTool({ name: 'get_order', arguments: { order_id: 'ORD-004211' } }).catch(() => null),
  );
  leaver.abort();
  await Promise.all(inflight);
  await c.close().catch(() => {});
  const result = (await steady.callTool({
    name: 'get_order',
    arguments: { order_id: 'ORD-004211' },
  })) as CallToolResult;
  assert.notEqual(result.isError, true);
  await steady.close();
  assert.equal((await fetch(`${base}/healthz`)).status, 200);
});
