/**
 * An upstream MCP provider is probed by listing it (C14): a real MCP server over Streamable HTTP
 * (the SDK's McpServer behind node:https with a test certificate) whose imported tool is healthy
 * after its first listing, unavailable within an interval once the server stops (and refused fast,
 * nothing sent upstream), and healthy again once it is back on the same port.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import type { HealthState } from '../../src/operations/health/index.js';
import { publicRead } from '../providers/provider-support.js';
import { lookupServer, serveStatelessMcp } from '../providers/stateless-mcp.js';
import { backends } from '../support/backends.js';
import { ROOT } from '../support/cli.js';
import { tableResolver } from '../support/egress.js';
import { classifyReviewed } from '../support/reviews.js';
import { openWorld, type World } from '../support/world.js';
import { FAST_HEALTH, healthReaches, RestartableUpstream } from './health-support.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const TLS = join(ROOT, 'test', 'fixtures', 'egress-tls');

/** A real MCP server over HTTPS that can be stopped and started again on the same port. */
class McpUpstream extends RestartableUpstream {
  requests = 0;

  protected override handle(req: IncomingMessage, res: ServerResponse): void {
    this.requests += 1;
    serveStatelessMcp(req, res, lookupServer);
  }
}

const sqlite = backends().find((b) => b.name === 'sqlite');
assert.ok(sqlite);
const upstream = new McpUpstream();
let tg: Gateway;
let world: World;
let toolId = '';

/** Resolves at the first change of the tool to `state` from now on (or at once if it is there). */
const reaches = async (state: HealthState): Promise<void> => {
  await healthReaches(tg, toolId, state);
};

before(async () => {
  await upstream.start();
  world = await openWorld({
    backend: sqlite,
    options: {
      providers: {
        http: {
          resolver: tableResolver({ 'api.example.test': ['127.0.0.1'] }),
          unsafeTestTargets: [`127.0.0.1:${upstream.port}`],
          unsafeTestCa: readFileSync(join(TLS, 'ca.pem'), 'utf8'),
        },
      },
      health: FAST_HEALTH,
    },
  });
  tg = world.tg;
  await tg.config.apply(
    [
      { kind: 'Agent', spec: { id: 'remote-bot', owner: 'platform-team' } },
      { kind: 'Grant', spec: { agent: 'remote-bot', capabilities: ['records:read'] } },
    ],
    admin,
  );
});

after(async () => {
  await world.close();
  await upstream.stop();
});

test('a provider tool is probed by listing: down, withdrawn and refused fast; back, offered again', async () => {
  await tg.providers.register(
    {
      name: 'remote',
      owner: 'platform-team',
      transport: 'http',
      url: `https://api.example.test:${upstream.port}/mcp`,
    },
    admin,
  );
  const classified = await classifyReviewed(
    tg,
    'remote',
    'lookup',
    publicRead(['records:read']),
    admin,
  );
  toolId = classified.tool.id;
  await reaches('healthy');
  assert.equal(tg.admin.toolHealth.status(toolId, '1.0.0').probe, 'mcp_list');

  const session = await tg.sessions.open('remote-bot');
  const ctx = { agentId: 'remote-bot', sessionId: session.id };
  const down = reaches('unavailable');
  await upstream.stop();
  await down;
  const before = upstream.requests;
  const refused = await tg.gate.invoke(ctx, toolId, { key: 'k1' });
  assert.equal(refused.kind === 'deny' && refused.code, 'TOOL_UNAVAILABLE');
  assert.equal(upstream.requests, before, 'nothing was sent upstream');
  // Withdrawn: the open session's refreshed set (what MCP list_changed follows), and a new one.
  await tg.sessions.refresh(session.id, 'remote-bot');
  assert.deepEqual(await tg.sessions.exportTools(session.id, 'remote-bot', 'mcp'), []);
  const fresh = await tg.sessions.open('remote-bot');
  assert.deepEqual(await tg.sessions.exportTools(fresh.id, 'remote-bot', 'mcp'), []);

  const up = reaches('healthy');
  await upstream.start();
  await up;
  const again = await tg.sessions.open('remote-bot');
  const ok = await tg.gate.invoke({ agentId: 'remote-bot', sessionId: again.id }, toolId, {
    key: 'k2',
  });
  assert.equal(ok.kind, 'allow', JSON.stringify(ok));
});
