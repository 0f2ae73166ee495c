/**
 * @module An upstream MCP server over Streamable HTTP (the SDK's McpServer behind node:https with
 * a test certificate) as a provider: its tools are imported, classified and called through the
 * gate, and the connection goes out under the egress rules — https only, the exact host, one
 * checked DNS answer, no private, loopback or metadata address (the test upstream on loopback is
 * reached only because the test names its ip:port in `unsafeTestTargets`).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { upstreamResult } from '../../src/edge/mcp/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { openStore } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { ROOT } from '../support/cli.js';
import { tableResolver } from '../support/egress.js';
import { classifyReviewed } from '../support/reviews.js';
import { openWorld, type World } from '../support/world.js';
import { publicRead } from './provider-support.js';
import { lookupServer, serveStatelessMcp } from './stateless-mcp.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const TLS = join(ROOT, 'test', 'fixtures', 'egress-tls');

for (const backend of backends()) {
  describe(`an upstream over Streamable HTTP (${backend.name})`, () => {
    let tg: Gateway;
    let world: World;
    let server: https.Server;
    let port: number;
    let hits = 0;
    let url = '';
    const bodies: string[] = [];

    before(async () => {
      server = https.createServer(
        {
          key: readFileSync(join(TLS, 'server.key')),
          cert: readFileSync(join(TLS, 'server.pem')),
        },
        (req, res) => {
          hits += 1;
          serveStatelessMcp(req, res, lookupServer, (text) => bodies.push(text));
        },
      );
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
      world = await openWorld({
        backend,
        options: {
          providers: {
            onError: (err) => {
              if (process.env.DEBUG_PROVIDERS) console.error(err);
            },
            http: {
              resolver: tableResolver({
                'api.example.test': ['127.0.0.1'],
                'other.example.test': ['10.1.2.3'],
                'meta.example.test': ['169.254.169.254'],
              }),
              unsafeTestTargets: [`127.0.0.1:${port}`],
              unsafeTestCa: readFileSync(join(TLS, 'ca.pem'), 'utf8'),
            },
          },
        },
      });
      tg = world.tg;
      url = world.db;
      await tg.config.apply(
        [
          {
            kind: 'Agent',
            spec: {
              id: 'remote-bot',
              display_name: 'Remote',
              description: 'Uses the remote provider.',
              owner: 'platform-team',
            },
          },
          { kind: 'Grant', spec: { agent: 'remote-bot', capabilities: ['records:read'] } },
          { kind: 'Agent', spec: { id: 'frugal', owner: 'qa', budgets: { egress_bytes: 60 } } },
          { kind: 'Grant', spec: { agent: 'frugal', capabilities: ['records:read'] } },
          {
            kind: 'Agent',
            spec: { id: 'roomy', owner: 'qa', budgets: { egress_bytes: 1_000_000 } },
          },
          { kind: 'Grant', spec: { agent: 'roomy', capabilities: ['records:read'] } },
        ],
        admin,
      );
    });

    after(async () => {
      await world.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    test('its tools are imported, classified and called through the gate', async () => {
      const { refresh } = await tg.providers.register(
        {
          name: 'remote',
          owner: 'platform-team',
          transport: 'http',
          url: `https://api.example.test:${port}/mcp`,
        },
        admin,
      );
      assert.deepEqual(refresh.imported, ['lookup']);
      await classifyReviewed(tg, 'remote', 'lookup', publicRead(['records:read']), admin);
      const session = await tg.sessions.open('remote-bot');
      const decision = await tg.gate.invoke(
        { agentId: 'remote-bot', sessionId: session.id },
        'lookup',
        { key: 'k1' },
      );
      assert.equal(decision.kind, 'allow', JSON.stringify(decision));
      assert.deepEqual(decision.kind === 'allow' && upstreamResult(decision)?.content, [
        { type: 'text', text: 'record k1' },
      ]);
    });

    test('a call whose arguments carry a secret is never sent upstream; the benign neighbour is', async () => {
      const session = await tg.sessions.open('remote-bot');
      const ctx = { agentId: 'remote-bot', sessionId: session.id };
      const secret = 'AKIAZ7QWERTYUIOPASDF';
      const leak = await tg.gate.invoke(ctx, 'lookup', { key: `creds ${secret}` });
      assert.equal(leak.kind, 'deny', JSON.stringify(leak));
      assert.equal(leak.kind === 'deny' ? leak.code : '', 'EGRESS_DENIED');
      assert.match(leak.kind === 'deny' ? leak.rule : '', /^egress\.secret\./);
      assert.ok(!bodies.some((b) => b.includes(secret)), 'the secret never reached the upstream');
      const benign = await tg.gate.invoke(ctx, 'lookup', { key: 'k2' });
      assert.equal(benign.kind, 'allow', JSON.stringify(benign));
    });

    test('the connection’s bytes count against the session’s egress budget; a spent budget stops the call', async () => {
      const roomy = await tg.sessions.open('roomy');
      const ok = await tg.gate.invoke({ agentId: 'roomy', sessionId: roomy.id }, 'lookup', {
        key: 'k3',
      });
      assert.equal(ok.kind, 'allow', JSON.stringify(ok));
      const store = await openStore(url);
      try {
        const row = await store.db
          .selectFrom('sessions')
          .select('egress_bytes')
          .where('id', '=', roomy.id)
          .executeTakeFirstOrThrow();
        // At least this call's request and answer (the connection's set-up too).
        assert.ok(Number(row.egress_bytes) > 200, `charged ${row.egress_bytes} bytes`);
      } finally {
        await store.close();
      }
      const before = hits;
      const frugal = await tg.sessions.open('frugal');
      const cut = await tg.gate.invoke({ agentId: 'frugal', sessionId: frugal.id }, 'lookup', {
        key: 'k4',
      });
      assert.equal(cut.kind, 'deny', JSON.stringify(cut));
      assert.equal(cut.kind === 'deny' ? cut.code : '', 'BUDGET_EXCEEDED');
      assert.equal(cut.kind === 'deny' ? cut.rule : '', 'egress.budget');
      assert.equal(hits, before, 'a budget too small for the first request sends nothing');
    });

    test('a provider host that resolves to a private or metadata address is never reached', async () => {
      const cases = [
        ['other', `https://other.example.test:${port}/mcp`],
        ['meta', `https://meta.example.test:${port}/mcp`],
        // Loopback on a port the test did not exempt: the address rule holds.
        ['loop', `https://api.example.test:${port + 1}/mcp`],
      ] as const;
      for (const [name, url] of cases) {
        const before = hits;
        await assert.rejects(
          tg.providers.register({ name, owner: 'platform-team', transport: 'http', url }, admin),
          (err: { code?: string }) => err.code === 'PROVIDER_UNAVAILABLE',
        );
        assert.equal(hits, before, `${name}: no request reached any server`);
        const view = await tg.providers.show(name);
        assert.equal(view.refreshed_at, null, 'nothing was imported');
      }
    });

    test('plain http, IP literals, userinfo and a command on an http provider are refused', async () => {
      for (const url of [
        `http://api.example.test:${port}/mcp`,
        `https://127.0.0.1:${port}/mcp`,
        `https://user:pw@api.example.test:${port}/mcp`,
      ]) {
        await assert.rejects(
          tg.providers.register(
            { name: 'bad', owner: 'platform-team', transport: 'http', url },
            admin,
          ),
          (err: { code?: string }) => err.code === 'INPUT_INVALID',
          url,
        );
      }
      await assert.rejects(
        tg.providers.register(
          {
            name: 'bad',
            owner: 'platform-team',
            transport: 'http',
            url: `https://api.example.test:${port}/mcp`,
            command: ['/bin/sh'],
          },
          admin,
        ),
        (err: { code?: string }) => err.code === 'INPUT_INVALID',
      );
      assert.deepEqual(
        (await tg.providers.list()).map((p) => p.name),
        ['loop', 'meta', 'other', 'remote'],
      );
    });
  });
}
