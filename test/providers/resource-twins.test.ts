/**
 * @module Attack round 8 F6: a provider's listed, classified, reviewed resource and resource
 * template are read, in both MCP eras, although another provider (here: the same upstream
 * software registered twice, as `notes` and `twin`) lists the very same URI and URI template
 * unclassified. Identical entries of two providers are two copies, each read from its own
 * upstream process; the session reads the copy it is offered (docs/security-model.md "Resources
 * and templates: one URI, one governed thing"). Beside each benign read its attacks stay refused
 * as before: a URI that escapes the template (dot segments, encoded separators, extra segments),
 * a URI two different templates match (since attack round 10 F4 the two templates are then
 * withheld from lists as well: `wide` lists its template only for that test), a resource of a
 * provider the agent is not granted, and a quarantined resource. Real upstreams (test/fixtures/mcp/resources-server.mjs twice,
 * wide-resources-server.mjs) in the namespace sandbox; the v1 SDK client on 2025-11-25 and the
 * v2 client pinned to 2026-07-28.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { backends } from '../support/backends.js';
import { approvePendingReviews } from '../support/reviews.js';
import { connectBothEras, openWorld, type World } from '../support/world.js';
import { fixtureProvider, refusedWith, textOf } from './provider-support.js';

const PUBLIC = {
  data_access: 'public',
  access_tier: 'public',
  required_capabilities: ['notes:read'],
};
const WIDE = { data_access: 'public', access_tier: 'public', required_capabilities: ['wide:read'] };

type Reader = {
  readResource(p: { uri: string }): Promise<{ contents: unknown[]; _meta?: unknown }>;
  getPrompt(p: { name: string; arguments?: Record<string, string> }): Promise<{
    messages: { content: unknown }[];
  }>;
  close(): Promise<void>;
};

const sqlite = backends().find((b) => b.name === 'sqlite') ?? backends()[0];

describe('identical resources of two providers (attack round 8 F6)', () => {
  let world: World;
  let stateDir: string;
  const ids: Record<string, string> = {};
  const clients: Reader[] = [];

  async function classify(provider: string, kind: string, key: string, c: object) {
    const res = await world.send('POST', `/v1/providers/${provider}/entries/classify`, {
      kind,
      key,
      classification: c,
    });
    assert.equal(res.status, 200, res.text);
    ids[`${provider} ${key}`] = (res.body as { tool: { id: string } }).tool.id;
  }

  function eras(agent: string): Promise<(readonly [string, Reader])[]> {
    return connectBothEras<Reader>(world.base, world.keys[agent], 'twins', clients);
  }

  before(async () => {
    stateDir = mkdtempSync(join(tmpdir(), 'toolgate-resource-twins-'));
    chmodSync(stateDir, 0o755);
    writeFileSync(join(stateDir, 'mode'), 'benign');
    writeFileSync(join(stateDir, 'wide-mode'), 'none');
    world = await openWorld({
      ...(sqlite ? { backend: sqlite } : {}),
      agents: [
        { id: 'reader', capabilities: ['notes:read'] },
        { id: 'wide-reader', capabilities: ['notes:read', 'wide:read'] },
      ],
      rest: true,
      inspector: true,
    });
    for (const name of ['notes', 'twin']) {
      await world.tg.providers.register(
        fixtureProvider(name, 'resources-server.mjs', [join(stateDir, 'mode')], stateDir),
        world.admin,
      );
    }
    await world.tg.providers.register(
      fixtureProvider('wide', 'wide-resources-server.mjs', [join(stateDir, 'wide-mode')], stateDir),
      world.admin,
    );
    // Only `notes` is classified: `twin` lists the same entries, unclassified (F6's `zz`).
    await classify('notes', 'resource', 'notes://customers', PUBLIC);
    await classify('notes', 'resource', 'notes://readme', PUBLIC);
    await classify('notes', 'resource_template', 'notes://topics/{topic}', PUBLIC);
    await classify('notes', 'prompt', 'summarize', PUBLIC);
    await approvePendingReviews(world.tg);
    // A quarantined resource: classified and reviewed, then held by an admin.
    await world.tg.catalog.quarantine(
      ids['notes notes://readme'] ?? '',
      '1.0.0',
      world.admin,
      'held',
    );
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await world.close();
    rmSync(stateDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });

  test('the listed, classified, reviewed resource and template are read in both eras', async () => {
    for (const [era, client] of await eras('reader')) {
      const read = await client.readResource({ uri: 'notes://customers' });
      assert.equal(textOf(read), 'alice@example.com, bob@example.com', era);
      const topic = await client.readResource({ uri: 'notes://topics/tea' });
      assert.equal(textOf(topic), 'notes about tea', era);
      // The prompt of the same provider, as before.
      const got = await client.getPrompt({ name: 'summarize', arguments: { text: 'hi' } });
      assert.deepEqual(got.messages[0]?.content, {
        type: 'text',
        text: 'Summarize in one line: hi',
      });
    }
    await world.tg.gate.flush();
    const read = await world.inspector?.db
      .selectFrom('audit_log')
      .select(['tool_id', 'kind', 'decision'])
      .where('kind', '=', 'call.post')
      .where('agent_id', '=', 'reader')
      .execute();
    const reached = new Set(read?.map((r) => r.tool_id));
    // The copy the session is offered, never the twin's.
    assert.ok(reached.has(ids['notes notes://customers'] ?? '?'));
    assert.ok(reached.has(ids['notes notes://topics/{topic}'] ?? '?'));
    assert.ok(![...reached].some((id) => id?.startsWith('twin.')), [...reached].join());
  });

  test('a URI that escapes the template names nothing, twins or not', async () => {
    for (const [era, client] of await eras('reader')) {
      for (const uri of [
        'notes://topics/../customers',
        'notes://topics/..%2Fcustomers',
        'notes://topics/a%2Fb',
        'notes://topics/a/b',
        'notes://topics/',
        'notes://customers/../topics/tea',
        'NOTES://topics/tea',
      ]) {
        const code = await refusedWith(client.readResource({ uri }), `${era} ${uri}`);
        assert.equal(code, 'RESOURCE_NOT_FOUND', `${era} ${uri}`);
      }
    }
  });

  test('a URI two different templates match is refused, even to a caller offered both', async () => {
    // wide's next release lists `notes://{area}/vip`, classified and reviewed at once.
    writeFileSync(join(stateDir, 'wide-mode'), 'vip');
    await world.tg.providers.refresh('wide', world.admin);
    await classify('wide', 'resource_template', 'notes://{area}/vip', WIDE);
    await approvePendingReviews(world.tg);
    for (const agent of ['reader', 'wide-reader']) {
      for (const [era, client] of await eras(agent)) {
        // notes://topics/{topic} (notes) and notes://{area}/vip (wide) both match it.
        await refusedWith(client.readResource({ uri: 'notes://topics/vip' }), `${agent} ${era}`);
      }
    }
    // Since attack round 10 F4 neither template is offered (each may match a URI of the other),
    // so what only the wide template matches is not read either, even by the caller granted it.
    for (const [era, client] of await eras('wide-reader')) {
      await refusedWith(client.readResource({ uri: 'notes://kitchen/vip' }), `${era} withheld`);
    }
    // The benign neighbour: once wide lists it no more, the reviewed topics are read again.
    writeFileSync(join(stateDir, 'wide-mode'), 'none');
    await world.tg.providers.refresh('wide', world.admin);
    for (const [era, client] of await eras('reader')) {
      const topic = await client.readResource({ uri: 'notes://topics/tea' });
      assert.equal(textOf(topic), 'notes about tea', era);
    }
  });

  test('a resource of a provider the agent is not granted, and a quarantined one, are not found', async () => {
    for (const [era, client] of await eras('reader')) {
      // wide's template: reader holds no wide:read.
      await refusedWith(client.readResource({ uri: 'notes://kitchen/vip' }), `${era} ungranted`);
      // notes' readme is quarantined; the twin's copy is unclassified: neither is read.
      await refusedWith(client.readResource({ uri: 'notes://readme' }), `${era} quarantined`);
      // The twin's unclassified entries are not offered by catalog id either.
      await refusedWith(client.readResource({ uri: 'twin.resource.customers' }), `${era} by id`);
    }
    // The gate decided each (its `resolve` step) and audited it, naming no entry.
    await world.tg.gate.flush();
    const denied = await world.inspector?.db
      .selectFrom('audit_log')
      .select(['tool_id', 'rule'])
      .where('kind', '=', 'call.denied')
      .where('agent_id', '=', 'reader')
      .where('code', '=', 'RESOURCE_NOT_FOUND')
      .execute();
    assert.ok((denied?.length ?? 0) >= 6, String(denied?.length));
    assert.ok(denied?.every((r) => r.tool_id === null && r.rule === 'resolve.resource_not_found'));
  });
});
