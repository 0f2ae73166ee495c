/**
 * @module @modelcontextprotocol/server-filesystem (from npm) as an upstream provider, sandboxed
 * (namespace) with a workspace folder as its only writable mount. Reads and writes inside work;
 * `..` traversal and a symlink escape are denied by the gate's path policy; and a provider that
 * skips the gate's path policy and tells the server it may touch `/` still cannot read or write
 * outside the workspace: the sandbox holds. An agent's MCP roots never reach the upstream.
 */
import assert from 'node:assert/strict';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import type { Actor } from '../../src/core/index.js';
import { upstreamResult } from '../../src/edge/mcp/index.js';
import { buildServer } from '../../src/edge/rest/index.js';
import type { GateDecision } from '../../src/gate/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { classifyReviewed } from '../support/reviews.js';
import { FILESYSTEM, nodeProvider } from './provider-support.js';

const admin: Actor = { id: 'test-admin', via: 'library' };

function textOf(decision: GateDecision): string {
  if (decision.kind !== 'allow') return '';
  return (upstreamResult(decision)?.content ?? []).map((c) => String(c.text ?? '')).join('\n');
}

describe('server-filesystem as a sandboxed provider', () => {
  let tg: Gateway;
  let app: FastifyInstance;
  let base: string;
  let key: string;
  let dir: string;
  let workspace: string;
  let outside: string;
  let sessionId: string;
  const ctx = () => ({ agentId: 'fs-bot', sessionId });

  before(async () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'toolgate-fs-')));
    chmodSync(dir, 0o755);
    workspace = join(dir, 'workspace');
    outside = join(dir, 'outside');
    mkdirSync(workspace);
    mkdirSync(outside);
    // The sandbox user is unprivileged: the workspace is made writable for it.
    chmodSync(workspace, 0o777);
    writeFileSync(join(workspace, 'notes.txt'), 'inside the workspace');
    writeFileSync(join(outside, 'secret.txt'), 'outside secret');
    chmodSync(join(outside, 'secret.txt'), 0o644);
    symlinkSync(join(outside, 'secret.txt'), join(workspace, 'escape'));
    tg = await openGateway({ db: `sqlite:${join(dir, 'tg.db')}` });
    await tg.config.apply(
      [
        {
          kind: 'Agent',
          spec: {
            id: 'fs-bot',
            display_name: 'Files agent',
            description: 'Works on files.',
            owner: 'platform-team',
          },
        },
        { kind: 'Grant', spec: { agent: 'fs-bot', capabilities: ['files:read', 'files:write'] } },
      ],
      admin,
    );
    const fs = (name: string, allowed: string) =>
      nodeProvider(name, FILESYSTEM, [allowed], {
        workspace: { source: workspace },
      });
    await tg.providers.register(fs('files', workspace), admin);
    // The same server told it may touch everything, and classified without the path policy:
    // what it can reach is then only what the sandbox lets it see.
    await tg.providers.register(fs('wide', '/'), admin);
    const read = (caps: string[], paths: boolean) => ({
      action_class: 'read',
      data_access: 'private',
      egress: { mode: 'none' },
      access_tier: 'public',
      required_capabilities: caps,
      ...(paths ? { path_arguments: ['path'], path_roots: [workspace] } : {}),
    });
    const write = (paths: boolean) => ({
      ...read(['files:write'], paths),
      action_class: 'reversible_write',
    });
    for (const [provider, tool, classification] of [
      ['files', 'read_text_file', read(['files:read'], true)],
      ['files', 'list_allowed_directories', read(['files:read'], false)],
      ['files', 'write_file', write(true)],
      ['wide', 'read_text_file', read(['files:read'], false)],
      ['wide', 'write_file', write(false)],
    ] as const) {
      await classifyReviewed(tg, provider, tool, classification, admin);
    }
    sessionId = (await tg.sessions.open('fs-bot')).id;
    key = (await tg.keys.issue('fs-bot', admin)).apiKey;
    app = await buildServer(tg, { adminToken: 'fs-admin-token-0123456789abcdef0123456789' });
    base = await app.listen({ host: '127.0.0.1', port: 0 });
  });

  after(async () => {
    await app.close();
    await tg.close();
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });

  test('a read inside the workspace works', async () => {
    const decision = await tg.gate.invoke(ctx(), 'files.read_text_file', { path: 'notes.txt' });
    assert.equal(decision.kind, 'allow', JSON.stringify(decision));
    assert.equal(textOf(decision), 'inside the workspace');
  });

  test('a write inside the workspace lands in the workspace folder', async () => {
    const decision = await tg.gate.invoke(ctx(), 'files.write_file', {
      path: 'new.txt',
      content: 'written by the upstream',
    });
    assert.equal(decision.kind, 'allow', JSON.stringify(decision));
    assert.notEqual(
      decision.kind === 'allow' && upstreamResult(decision)?.isError,
      true,
      textOf(decision),
    );
    assert.equal(readFileSync(join(workspace, 'new.txt'), 'utf8'), 'written by the upstream');
  });

  test('`..` traversal is denied by the gate before the upstream sees it', async () => {
    const decision = await tg.gate.invoke(ctx(), 'files.read_text_file', {
      path: '../outside/secret.txt',
    });
    assert.equal(decision.kind, 'deny');
    assert.equal(decision.kind === 'deny' && decision.code, 'POLICY_DENIED');
    assert.equal(decision.kind === 'deny' && decision.rule, 'path.escape');
  });

  test('a symlink escape is denied by the gate', async () => {
    const decision = await tg.gate.invoke(ctx(), 'files.read_text_file', { path: 'escape' });
    assert.equal(decision.kind === 'deny' && decision.rule, 'path.escape');
    const absolute = await tg.gate.invoke(ctx(), 'files.read_text_file', {
      path: join(outside, 'secret.txt'),
    });
    assert.equal(absolute.kind === 'deny' && absolute.code, 'POLICY_DENIED');
  });

  test('without the gate policy the sandbox still contains the server', async () => {
    // The server believes it may read `/`; the sandbox shows it no /etc/shadow, no outside folder.
    for (const path of ['/etc/shadow', join(outside, 'secret.txt'), join(workspace, 'escape')]) {
      const decision = await tg.gate.invoke(ctx(), 'wide.read_text_file', { path });
      assert.equal(decision.kind, 'allow', JSON.stringify(decision));
      assert.equal(decision.kind === 'allow' && upstreamResult(decision)?.isError, true, path);
      assert.ok(!textOf(decision).includes('outside secret'));
    }
    // Its own files are visible (the benign neighbour): the workspace is mounted.
    const inside = await tg.gate.invoke(ctx(), 'wide.read_text_file', {
      path: join(workspace, 'notes.txt'),
    });
    assert.equal(textOf(inside), 'inside the workspace');
    // And nothing outside the workspace is writable.
    const write = await tg.gate.invoke(ctx(), 'wide.write_file', {
      path: join(outside, 'planted.txt'),
      content: 'x',
    });
    assert.equal(write.kind === 'allow' && upstreamResult(write)?.isError, true);
    assert.throws(() => readFileSync(join(outside, 'planted.txt')));
  });

  test("an agent's MCP roots never reach the upstream", async () => {
    const client = new Client(
      { name: 'roots-agent', version: '1.0.0' },
      { capabilities: { roots: { listChanged: true } } },
    );
    let asked = 0;
    client.setRequestHandler(ListRootsRequestSchema, async () => {
      asked += 1;
      return { roots: [{ uri: 'file:///', name: 'everything' }] };
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    try {
      await client.sendRootsListChanged();
      const listed = (await client.callTool({
        name: 'list_allowed_directories',
        arguments: {},
      })) as CallToolResult;
      const text = (listed.content as { text?: string }[]).map((c) => c.text ?? '').join('\n');
      assert.match(text, new RegExp(workspace.replaceAll('/', '\\/')));
      assert.doesNotMatch(text, /^\/$/m);
      // Two providers offer read_text_file: the session names them by id.
      const names = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes('files__read_text_file'), names.join(','));
      const read = (await client.callTool({
        name: 'files__read_text_file',
        arguments: { path: 'notes.txt' },
      })) as CallToolResult;
      assert.equal((read.content as { text?: string }[])[0]?.text, 'inside the workspace');
      assert.equal(asked, 0, 'nobody asked the agent for its roots');
    } finally {
      await client.close();
    }
  });
});
