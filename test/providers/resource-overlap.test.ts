/**
 * @module One URI, one governed thing (docs/security-model.md "Resources and templates: one URI,
 * one governed thing"), with two real upstream MCP servers (test/fixtures/mcp/
 * overlap-resources-server.mjs, in the namespace sandbox) and the official SDK client over
 * Streamable HTTP: a broad public template never reads a provider's restricted static resource,
 * whatever the spelling or the front; a URI two providers' templates match, or another
 * provider's static, is refused (and since attack round 10 F4 both templates are then withheld
 * from lists: `wiki` lists its template only for that test); what the template alone governs is
 * still read. The upstream's
 * template reads a URI as a URL parser would (userinfo and port dropped, `;params` and a trailing
 * dot stripped), so every spelling the gateway let through would read the secret; both MCP eras
 * (v1 SDK on 2025-11-25, v2 client pinned to 2026-07-28) are refused alike.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client as ClientV2 } from '@modelcontextprotocol/client';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { FastifyInstance } from 'fastify';
import type { Actor } from '../../src/core/index.js';
import { buildServer } from '../../src/edge/rest/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { approvePendingReviews } from '../support/reviews.js';
import { connectMcp, connectModernMcp, openWorld, type World } from '../support/world.js';
import { FIXTURES, mcpRefusal, nodeProvider, textOf } from './provider-support.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const ADMIN_TOKEN = 'overlap-admin-token-0123456789abcdef0123456';
const SERVER = join(FIXTURES, 'overlap-resources-server.mjs');
const PUBLIC = {
  data_access: 'public',
  access_tier: 'public',
  required_capabilities: ['docs:read'],
};
const SECRET = {
  data_access: 'private',
  access_tier: 'restricted',
  required_capabilities: ['docs:read', 'rt:admin'],
};

/** The MCP error a request is refused with. */
const refusal = (promise: Promise<unknown>) => mcpRefusal(promise, 'the read');

for (const backend of backends()) {
  describe(`a resource URI names one governed thing (${backend.name})`, () => {
    let tg: Gateway;
    let world: World;
    let stateDir = '';
    let app: FastifyInstance;
    let base: string;
    let inspector: Store;
    const keys: Record<string, string> = {};
    const ids: Record<string, string> = {};
    const clients: { close(): Promise<void> }[] = [];

    async function connect(agent: string): Promise<Client> {
      const client = await connectMcp(base, keys[agent], 'overlap-test');
      clients.push(client);
      return client;
    }

    async function connectModern(agent: string): Promise<ClientV2> {
      const client = await connectModernMcp(base, keys[agent], 'overlap-test');
      clients.push(client);
      return client;
    }

    async function classify(provider: string, kind: string, key: string, c: object) {
      const res = await app.inject({
        method: 'POST',
        url: `/v1/providers/${provider}/entries/classify`,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        payload: { kind, key, classification: c },
      });
      assert.equal(res.statusCode, 200, res.body);
      ids[key] = (res.json() as { tool: { id: string } }).tool.id;
    }

    before(async () => {
      world = await openWorld({ backend });
      tg = world.tg;
      inspector = await openStore(world.db);
      const agent = (id: string) => ({
        kind: 'Agent',
        spec: { id, display_name: id, description: 'Reads docs.', owner: 'platform-team' },
      });
      await tg.config.apply(
        [
          agent('reader'),
          agent('root-reader'),
          { kind: 'Grant', spec: { agent: 'reader', capabilities: ['docs:read'] } },
          {
            kind: 'Grant',
            spec: { agent: 'root-reader', capabilities: ['docs:read', 'rt:admin'] },
          },
        ],
        admin,
      );
      keys.reader = (await tg.keys.issue('reader', admin)).apiKey;
      keys['root-reader'] = (await tg.keys.issue('root-reader', admin)).apiKey;
      app = await buildServer(tg, { adminToken: ADMIN_TOKEN });
      base = await app.listen({ host: '127.0.0.1', port: 0 });
      stateDir = mkdtempSync(join(tmpdir(), 'toolgate-resource-overlap-'));
      chmodSync(stateDir, 0o755);
      writeFileSync(join(stateDir, 'wiki-mode'), 'none');
      for (const name of ['docs', 'wiki']) {
        await tg.providers.register(
          nodeProvider(name, SERVER, [name, join(stateDir, 'wiki-mode')], {
            binds: [{ source: FIXTURES }, { source: stateDir }],
          }),
          admin,
        );
      }
      await classify('docs', 'resource', 'docs://internal/secret', SECRET);
      await classify('docs', 'resource', 'docs://public/readme', PUBLIC);
      await classify('docs', 'resource_template', 'docs://{+path}', PUBLIC);
      await approvePendingReviews(tg);
    });

    after(async () => {
      await Promise.all(clients.map((c) => c.close().catch(() => {})));
      await app.close();
      await inspector.close();
      await world.close();
      rmSync(stateDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    });

    test('a public template never reads a restricted static resource, in any spelling', async () => {
      const client = await connect('reader');
      const offered = (await client.listResources()).resources.map((r) => r.uri);
      assert.deepEqual(offered, ['docs://public/readme']);
      for (const uri of [
        'docs://internal/secret',
        'docs://internal/./secret',
        'docs://public/../internal/secret',
        'docs://internal//secret',
        'docs://INTERNAL/Secret',
        'docs://internal/secret/',
        'docs://internal/secret?x=1',
      ]) {
        const err = await refusal(client.readResource({ uri }));
        assert.equal(err.code, -32084, uri);
        assert.equal((err.data as { code: string }).code, 'RESOURCE_NOT_FOUND', uri);
      }
      // The benign neighbours: the public static, and a page only the template governs.
      assert.equal(
        textOf(await client.readResource({ uri: 'docs://public/readme' })),
        'the public readme',
      );
      assert.equal(
        textOf(await client.readResource({ uri: 'docs://notes/today' })),
        'page notes/today',
      );
    });

    test('another spelling of a static URI through the template names nothing, in both eras', async () => {
      const eras = [
        ['2025-11-25', await connect('reader')],
        ['2026-07-28', await connectModern('reader')],
      ] as const;
      for (const [era, client] of eras) {
        for (const uri of [
          // Any port, an empty one included: a URL parser drops it.
          'docs://internal:80/secret',
          'docs://internal:443/secret',
          'docs://internal:0/secret',
          'docs://internal:/secret',
          'docs://internal%3A80/secret',
          'docs://INTERNAL.:8080/secret',
          // Userinfo in the authority, refused outright.
          'docs://user@internal/secret',
          'docs://u:p@internal/secret',
          'docs://@internal/secret',
          'docs://user%40internal/secret',
          'docs://user@public/other',
          // Path parameters, trailing dots, format and compatibility characters.
          'docs://internal/secret;x',
          'docs://internal/secret.',
          'docs://internal/..;/internal/secret',
          'docs://internal/sec%E2%80%8Bret',
          'docs://ｉｎｔｅｒｎａｌ/secret',
        ]) {
          let err: { code?: number; data?: { code?: string } } | undefined;
          try {
            const read = await client.readResource({ uri });
            assert.fail(`${era} ${uri} was read: ${JSON.stringify(read)}`);
          } catch (caught) {
            if (caught instanceof assert.AssertionError) throw caught;
            err = caught as typeof err;
          }
          assert.equal(err?.code, -32084, `${era} ${uri}`);
          assert.equal(err?.data?.code, 'RESOURCE_NOT_FOUND', `${era} ${uri}`);
        }
        // The benign neighbours: the offered static exactly, other pages the template governs
        // (nested too), and a port no static resource canonicalises to.
        const read = async (uri: string) =>
          ((await client.readResource({ uri })).contents[0] as { text: string }).text;
        assert.equal(await read('docs://public/readme'), 'the public readme', era);
        assert.equal(await read('docs://public/other'), 'page public/other', era);
        assert.equal(await read('docs://notes/2026/today.md'), 'page notes/2026/today.md', era);
        assert.equal(await read('docs://public:8080/other'), 'page public/other', era);
      }
    });

    test('the same template named as a tool cannot read the static resource either', async () => {
      const client = await connect('reader');
      const template = ids['docs://{+path}'] ?? '';
      const denied = await client.callTool({
        name: template,
        arguments: { path: 'internal/secret' },
      });
      assert.equal(denied.isError, true);
      const decision = (denied._meta as Record<string, { code: string; rule: string }>)[
        'toolgate/decision'
      ];
      assert.deepEqual(
        [decision?.code, decision?.rule],
        ['POLICY_DENIED', 'resource.not_this_template'],
      );
      assert.ok(!JSON.stringify(denied).includes('s3cr3t'));
      for (const path of ['internal:80/secret', 'user@internal/secret', 'internal/secret;x']) {
        const spelled = await client.callTool({ name: template, arguments: { path } });
        assert.equal(spelled.isError, true, path);
        assert.ok(!JSON.stringify(spelled).includes('s3cr3t'), path);
      }
      const dotted = await client.callTool({
        name: template,
        arguments: { path: 'public/../internal/secret' },
      });
      assert.equal(dotted.isError, true);
      assert.ok(!JSON.stringify(dotted).includes('s3cr3t'));
      // In the chain once integrated (PostgreSQL stages records: docs/architecture.md §5).
      await inspector.audit.settled();
      const records = await inspector.db
        .selectFrom('audit_log')
        .select(['decision', 'rule'])
        .where('tool_id', '=', template)
        .where('rule', '=', 'resource.not_this_template')
        .execute();
      assert.ok(records.length >= 5, 'the refusals are audited');
    });

    test('the holder of rt:admin reads the static resource as the private resource it is', async () => {
      const client = await connect('root-reader');
      const read = await client.readResource({ uri: 'docs://internal/secret' });
      assert.match(textOf(read), /s3cr3t/);
      const secretId = ids['docs://internal/secret'] ?? '';
      await tg.gate.flush();
      const records = await inspector.db
        .selectFrom('audit_log')
        .select(['kind', 'decision'])
        .where('tool_id', '=', secretId)
        .execute();
      assert.ok(records.some((r) => r.kind === 'call.post' && r.decision === 'allow'));
      // Still never through the template, even for a caller offered both.
      const err = await refusal(client.readResource({ uri: 'docs://internal/./secret' }));
      assert.equal(err.code, -32084);
    });

    test("a URI two providers' templates match, or another provider's static, names nothing", async () => {
      // wiki's next release lists `docs://shared/{name}`, classified and reviewed at once.
      writeFileSync(join(stateDir, 'wiki-mode'), 'shared');
      await tg.providers.refresh('wiki', admin);
      await classify('wiki', 'resource_template', 'docs://shared/{name}', PUBLIC);
      await approvePendingReviews(tg);
      const client = await connect('reader');
      // docs://{+path} (docs) and docs://shared/{name} (wiki) both match it.
      const both = await refusal(client.readResource({ uri: 'docs://shared/x' }));
      assert.equal(both.code, -32084);
      // wiki's own static, unclassified: never read through docs' template.
      const other = await refusal(client.readResource({ uri: 'docs://wiki/private' }));
      assert.equal(other.code, -32084);
      // Since attack round 10 F4 neither template is offered (each may match a URI of the other),
      // so what only docs' template matches is not read either.
      const withheld = await refusal(client.readResource({ uri: 'docs://wiki/public' }));
      assert.equal(withheld.code, -32084);
      // The benign neighbour: once wiki lists it no more, docs' template reads it again.
      writeFileSync(join(stateDir, 'wiki-mode'), 'none');
      await tg.providers.refresh('wiki', admin);
      const again = await connect('reader');
      assert.equal(
        textOf(await again.readResource({ uri: 'docs://wiki/public' })),
        'page wiki/public',
      );
    });
  });
}
