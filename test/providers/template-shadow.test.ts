/**
 * @module Attack round 9 F2: a provider's refresh adds a broad template (`notes://{kind}/{name}`,
 * quarantined, never classified) that matches every URI of another provider's reviewed template
 * `notes://topics/{topic}`. Reads stay fail-closed as documented (a URI two different templates
 * match names nothing, whatever their state: docs/security-model.md "Resources and templates: one
 * URI, one governed thing"), and now the lists agree: the shadowed template is offered nowhere
 * (`resources/templates/list` in both MCP eras, the REST session's tools), admins see it withheld
 * with the reason, and the refresh raised `alert.template_shadowed` naming the provider whose
 * listing caused it. The benign neighbour: a second template sharing no URI with anyone
 * (`docs://pages/{page}`) stays offered and readable throughout. Attack round 11 F6: a release
 * that lists that template twice (another name and description) has it skipped "listed more than
 * once" in the refresh record and offered by neither era, while the notes template is still read
 * (like any entry gone from a listing, it is quarantined until reviewed again). Attack round 12
 * N5: when the upstream lists it once again, the refresh reports and alerts it as listed again
 * (`listed_again`), never as `changed` with equal hashes. Real upstreams
 * (test/fixtures/mcp/resources-server.mjs, shadow-resources-server.mjs) in the namespace sandbox.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Store } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { approvePendingReviews } from '../support/reviews.js';
import {
  connectBothEras,
  eventDetails,
  openWorld,
  restClient,
  type World,
} from '../support/world.js';
import { fixtureProvider, refusedWith, textOf } from './provider-support.js';

const PUBLIC = {
  data_access: 'public',
  access_tier: 'public',
  required_capabilities: ['notes:read'],
};
const TOPIC = 'notes://topics/{topic}';
const PAGE = 'docs://pages/{page}';
const BROAD = 'notes://{kind}/{name}';
const PARTIAL = 'notes://topics/{a}{b}';

type Reader = {
  listResourceTemplates(): Promise<{ resourceTemplates: { uriTemplate: string }[] }>;
  readResource(p: { uri: string }): Promise<{ contents: unknown[] }>;
  close(): Promise<void>;
};

/** The URI templates a client is offered, in the order listed. */
async function templatesOf(client: Reader): Promise<string[]> {
  return (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
}

/** Asserts the reviewed notes template is read. */
async function readsTea(client: Reader): Promise<void> {
  assert.equal(textOf(await client.readResource({ uri: 'notes://topics/tea' })), 'notes about tea');
}

const sqlite = backends().find((b) => b.name === 'sqlite') ?? backends()[0];

describe('a broad template of one provider shadows another provider reviewed one (attack round 9 F2)', () => {
  let world: World;
  let stateDir: string;
  const ids: Record<string, string> = {};
  const clients: Reader[] = [];

  function eras(): Promise<(readonly [string, Reader])[]> {
    return connectBothEras<Reader>(world.base, world.keys.reader, 'shadow', clients);
  }

  async function restSession(): Promise<{ tools: string[]; withheld: Map<string, string> }> {
    const send = restClient(() => world.base, world.keys.reader);
    const session = await send('POST', '/v1/sessions', {});
    assert.equal(session.status, 201, session.text);
    const id = session.body.id as string;
    // The session's set as opened (REST lists entries only there; MCP in its own lists).
    const tools = (session.body.tools as { id: string }[]).filter((t) =>
      t.id.includes('.template.'),
    );
    const view = await world.send('GET', `/v1/sessions/${id}`);
    const withheld = view.body.withheld as { id: string; reason: string }[];
    return {
      tools: tools.map((t) => t.id),
      withheld: new Map(withheld.map((w) => [w.id, w.reason])),
    };
  }

  /**
   * Refreshes `other` into `mode`, which adds `template` over TOPIC, and asserts TOPIC is then
   * offered by neither era nor REST (withheld naming the cause) while PAGE is still read.
   */
  async function shadowedBy(mode: string, template: string, label: string) {
    writeFileSync(join(stateDir, 'other-mode'), mode);
    const report = await world.tg.providers.refresh('other', world.admin);
    assert.deepEqual(report.entries.added, [`resource_template:${template}`]);
    for (const [era, client] of await eras()) {
      const listed = await templatesOf(client);
      assert.deepEqual(listed, [PAGE], era);
      // Reads stay fail-closed: the narrower template does not win.
      await refusedWith(client.readResource({ uri: 'notes://topics/tea' }), `${era} ${label}`);
      assert.equal(textOf(await client.readResource({ uri: 'docs://pages/intro' })), 'page intro');
    }
    const rest = await restSession();
    assert.ok(!rest.tools.includes(ids[TOPIC] ?? '?'), rest.tools.join());
    const reason = rest.withheld.get(ids[TOPIC] ?? '?') ?? '';
    assert.ok(reason.includes(template) && reason.includes('other'), reason);
    return rest;
  }

  /** Asserts `count` shadow alerts so far, the last raised by `other`'s `template` over TOPIC. */
  async function assertShadowAlerts(count: number, template: string): Promise<void> {
    const alerts = await eventDetails(world.inspector as Store, 'alert.template_shadowed');
    assert.equal(alerts.length, count, JSON.stringify(alerts));
    const last = count - 1;
    assert.equal(alerts[last]?.provider, 'other');
    assert.equal(alerts[last]?.template, template);
    assert.deepEqual(alerts[last]?.shadowed, {
      provider: 'notes',
      template: TOPIC,
      tool_id: ids[TOPIC],
    });
  }

  before(async () => {
    stateDir = mkdtempSync(join(tmpdir(), 'toolgate-template-shadow-'));
    chmodSync(stateDir, 0o755);
    writeFileSync(join(stateDir, 'notes-mode'), 'benign');
    writeFileSync(join(stateDir, 'other-mode'), 'first');
    world = await openWorld({
      ...(sqlite ? { backend: sqlite } : {}),
      agents: [{ id: 'reader', capabilities: ['notes:read'] }],
      rest: true,
      inspector: true,
    });
    for (const [name, script] of [
      ['notes', 'resources-server.mjs'],
      ['other', 'shadow-resources-server.mjs'],
    ] as const) {
      await world.tg.providers.register(
        fixtureProvider(name, script, [join(stateDir, `${name}-mode`)], stateDir),
        world.admin,
      );
    }
    for (const [provider, key] of [
      ['notes', TOPIC],
      ['other', PAGE],
    ] as const) {
      const res = await world.send('POST', `/v1/providers/${provider}/entries/classify`, {
        kind: 'resource_template',
        key,
        classification: PUBLIC,
      });
      assert.equal(res.status, 200, res.text);
      ids[key] = (res.body as { tool: { id: string } }).tool.id;
    }
    await approvePendingReviews(world.tg);
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await world.close();
    rmSync(stateDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });

  test('before: both reviewed templates are listed and read, on both eras and REST', async () => {
    for (const [era, client] of await eras()) {
      const listed = await templatesOf(client);
      assert.deepEqual(listed, [PAGE, TOPIC], era);
      await readsTea(client);
      assert.equal(textOf(await client.readResource({ uri: 'docs://pages/intro' })), 'page intro');
    }
    const rest = await restSession();
    assert.ok(rest.tools.includes(ids[TOPIC] ?? '?'), rest.tools.join());
    assert.ok(rest.tools.includes(ids[PAGE] ?? '?'), rest.tools.join());
  });

  test('after the broad template: the shadowed one is offered nowhere and alerted; the neighbour is read', async () => {
    const rest = await shadowedBy('broad', BROAD, 'shadowed');
    assert.ok(rest.tools.includes(ids[PAGE] ?? '?'), rest.tools.join());
    assert.ok(!rest.withheld.has(ids[PAGE] ?? '?'));
    await assertShadowAlerts(1, BROAD);
  });

  test('a partly covering template (round 10 F4): the reviewed one is withheld, the alert names it and the cause', async () => {
    await shadowedBy('partial', PARTIAL, 'partly shadowed');
    // A new cause for a template already withheld is alerted too, naming the reviewed one.
    await assertShadowAlerts(2, PARTIAL);
  });

  test('after the overlapping templates are gone: the reviewed one is offered and read again', async () => {
    writeFileSync(join(stateDir, 'other-mode'), 'first');
    await world.tg.providers.refresh('other', world.admin);
    for (const [era, client] of await eras()) {
      const listed = await templatesOf(client);
      assert.deepEqual(listed, [PAGE, TOPIC], era);
      await readsTea(client);
    }
  });

  test('a template listed twice in one listing (round 11 F6): skipped with the reason, offered by neither era', async () => {
    writeFileSync(join(stateDir, 'other-mode'), 'twice');
    const report = await world.tg.providers.refresh('other', world.admin);
    assert.deepEqual(report.entries.skipped, [
      { name: `resource_template:${PAGE}`, reason: 'listed more than once' },
    ]);
    const refreshed = await eventDetails(world.inspector as Store, 'provider.refreshed');
    assert.deepEqual((refreshed.at(-1)?.entries as { skipped?: unknown })?.skipped, [
      { name: `resource_template:${PAGE}`, reason: 'listed more than once' },
    ]);
    for (const [era, client] of await eras()) {
      const listed = await templatesOf(client);
      assert.deepEqual(listed, [TOPIC], era);
      await refusedWith(client.readResource({ uri: 'docs://pages/intro' }), `${era} listed twice`);
      await readsTea(client);
    }
    const rest = await restSession();
    assert.ok(!rest.tools.includes(ids[PAGE] ?? '?'), rest.tools.join());
    assert.ok(rest.tools.includes(ids[TOPIC] ?? '?'), rest.tools.join());
  });

  test('the template listed once again after the duplicate listing (round 12 N5): reported and alerted as listed again, not changed', async () => {
    const before = (await eventDetails(world.inspector as Store, 'alert.provider_changed')).length;
    writeFileSync(join(stateDir, 'other-mode'), 'first');
    const report = await world.tg.providers.refresh('other', world.admin);
    const entries: { listed_again?: unknown; changed: unknown } = report.entries;
    assert.deepEqual(entries.listed_again, [`resource_template:${PAGE}`]);
    assert.deepEqual(report.entries.changed, []);
    const alerts = (await eventDetails(world.inspector as Store, 'alert.provider_changed')).slice(
      before,
    );
    assert.equal(alerts.length, 1, JSON.stringify(alerts));
    assert.equal(alerts[0]?.change, 'listed_again');
    assert.equal(alerts[0]?.pinned, alerts[0]?.listed, 'the same definition came back');
    const refreshed = await eventDetails(world.inspector as Store, 'provider.refreshed');
    assert.deepEqual((refreshed.at(-1)?.entries as { listed_again?: unknown })?.listed_again, [
      `resource_template:${PAGE}`,
    ]);
    // Still quarantined until reviewed again; the neighbour is read as before.
    for (const [era, client] of await eras()) {
      await refusedWith(client.readResource({ uri: 'docs://pages/intro' }), `${era} listed again`);
      await readsTea(client);
    }
  });
});
