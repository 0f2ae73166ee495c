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
  connectMcp,
  connectModernMcp,
  eventDetails,
  openWorld,
  restClient,
  type World,
} from '../support/world.js';
import { fixtureProvider } from './provider-support.js';

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

const textOf = (r: { contents: unknown[] }) => (r.contents[0] as { text: string }).text;

async function refused(promise: Promise<unknown>, what: string): Promise<void> {
  let err: { code?: number } | undefined;
  try {
    const read = await promise;
    assert.fail(`${what} was answered: ${JSON.stringify(read)}`);
  } catch (caught) {
    if (caught instanceof assert.AssertionError) throw caught;
    err = caught as typeof err;
  }
  assert.equal(err?.code, -32084, what);
}

const sqlite = backends().find((b) => b.name === 'sqlite') ?? backends()[0];

describe('a broad template of one provider shadows another provider reviewed one (attack round 9 F2)', () => {
  let world: World;
  let stateDir: string;
  const ids: Record<string, string> = {};
  const clients: Reader[] = [];

  async function eras(): Promise<(readonly [string, Reader])[]> {
    const key = world.keys.reader;
    const legacy = (await connectMcp(world.base, key, 'shadow')) as unknown as Reader;
    const modern = (await connectModernMcp(world.base, key, 'shadow')) as unknown as Reader;
    clients.push(legacy, modern);
    return [
      ['2025-11-25', legacy],
      ['2026-07-28', modern],
    ];
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
      const listed = (await client.listResourceTemplates()).resourceTemplates.map(
        (t) => t.uriTemplate,
      );
      assert.deepEqual(listed, [PAGE, TOPIC], era);
      assert.equal(
        textOf(await client.readResource({ uri: 'notes://topics/tea' })),
        'notes about tea',
      );
      assert.equal(textOf(await client.readResource({ uri: 'docs://pages/intro' })), 'page intro');
    }
    const rest = await restSession();
    assert.ok(rest.tools.includes(ids[TOPIC] ?? '?'), rest.tools.join());
    assert.ok(rest.tools.includes(ids[PAGE] ?? '?'), rest.tools.join());
  });

  test('after the broad template: the shadowed one is offered nowhere and alerted; the neighbour is read', async () => {
    writeFileSync(join(stateDir, 'other-mode'), 'broad');
    const report = await world.tg.providers.refresh('other', world.admin);
    assert.deepEqual(report.entries.added, [`resource_template:${BROAD}`]);
    for (const [era, client] of await eras()) {
      const listed = (await client.listResourceTemplates()).resourceTemplates.map(
        (t) => t.uriTemplate,
      );
      assert.deepEqual(listed, [PAGE], era);
      // Reads stay fail-closed: the narrower template does not win.
      await refused(client.readResource({ uri: 'notes://topics/tea' }), `${era} shadowed`);
      assert.equal(textOf(await client.readResource({ uri: 'docs://pages/intro' })), 'page intro');
    }
    const rest = await restSession();
    assert.ok(!rest.tools.includes(ids[TOPIC] ?? '?'), rest.tools.join());
    assert.ok(rest.tools.includes(ids[PAGE] ?? '?'), rest.tools.join());
    const reason = rest.withheld.get(ids[TOPIC] ?? '?') ?? '';
    assert.ok(reason.includes(BROAD) && reason.includes('other'), reason);
    assert.ok(!rest.withheld.has(ids[PAGE] ?? '?'));
    const alerts = await eventDetails(world.inspector as Store, 'alert.template_shadowed');
    assert.equal(alerts.length, 1, JSON.stringify(alerts));
    assert.equal(alerts[0]?.provider, 'other');
    assert.equal(alerts[0]?.template, BROAD);
    assert.deepEqual(alerts[0]?.shadowed, {
      provider: 'notes',
      template: TOPIC,
      tool_id: ids[TOPIC],
    });
  });

  test('a partly covering template (round 10 F4): the reviewed one is withheld, the alert names it and the cause', async () => {
    writeFileSync(join(stateDir, 'other-mode'), 'partial');
    const report = await world.tg.providers.refresh('other', world.admin);
    assert.deepEqual(report.entries.added, [`resource_template:${PARTIAL}`]);
    for (const [era, client] of await eras()) {
      const listed = (await client.listResourceTemplates()).resourceTemplates.map(
        (t) => t.uriTemplate,
      );
      assert.deepEqual(listed, [PAGE], era);
      await refused(client.readResource({ uri: 'notes://topics/tea' }), `${era} partly shadowed`);
      assert.equal(textOf(await client.readResource({ uri: 'docs://pages/intro' })), 'page intro');
    }
    const rest = await restSession();
    assert.ok(!rest.tools.includes(ids[TOPIC] ?? '?'), rest.tools.join());
    const reason = rest.withheld.get(ids[TOPIC] ?? '?') ?? '';
    assert.ok(reason.includes(PARTIAL) && reason.includes('other'), reason);
    // A new cause for a template already withheld is alerted too, naming the reviewed one.
    const alerts = await eventDetails(world.inspector as Store, 'alert.template_shadowed');
    assert.equal(alerts.length, 2, JSON.stringify(alerts));
    assert.equal(alerts[1]?.provider, 'other');
    assert.equal(alerts[1]?.template, PARTIAL);
    assert.deepEqual(alerts[1]?.shadowed, {
      provider: 'notes',
      template: TOPIC,
      tool_id: ids[TOPIC],
    });
  });

  test('after the overlapping templates are gone: the reviewed one is offered and read again', async () => {
    writeFileSync(join(stateDir, 'other-mode'), 'first');
    await world.tg.providers.refresh('other', world.admin);
    for (const [era, client] of await eras()) {
      const listed = (await client.listResourceTemplates()).resourceTemplates.map(
        (t) => t.uriTemplate,
      );
      assert.deepEqual(listed, [PAGE, TOPIC], era);
      assert.equal(
        textOf(await client.readResource({ uri: 'notes://topics/tea' })),
        'notes about tea',
      );
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
      const listed = (await client.listResourceTemplates()).resourceTemplates.map(
        (t) => t.uriTemplate,
      );
      assert.deepEqual(listed, [TOPIC], era);
      await refused(client.readResource({ uri: 'docs://pages/intro' }), `${era} listed twice`);
      assert.equal(
        textOf(await client.readResource({ uri: 'notes://topics/tea' })),
        'notes about tea',
      );
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
      await refused(client.readResource({ uri: 'docs://pages/intro' }), `${era} listed again`);
      assert.equal(
        textOf(await client.readResource({ uri: 'notes://topics/tea' })),
        'notes about tea',
      );
    }
  });
});
