/**
 * @module Governed upstream resources, resource templates and prompts, with a real upstream
 * (test/fixtures/mcp/resources-server.mjs, the SDK's McpServer, in the namespace sandbox) and the
 * official v1 SDK client over Streamable HTTP: imported pinned and unoffered, classified by an
 * admin (REST), offered once reviewed, read through the gate and audited; a poisoned prompt is
 * quarantined; a changed description quarantines its entry, alerts, and the read is refused.
 * On SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ResourceListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import type { Actor } from '../../src/core/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { approvePendingReviews } from '../support/reviews.js';
import { connectMcp, openWorld, type World } from '../support/world.js';
import { fixtureProvider, mcpRefusal, NOTES_BOT } from './provider-support.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const ADMIN_TOKEN = 'resources-admin-token-0123456789abcdef012345';
const PUBLIC = {
  data_access: 'public',
  access_tier: 'public',
  required_capabilities: ['notes:read'],
};

/** The MCP error a request is refused with. */
const refusal = (promise: Promise<unknown>) => mcpRefusal(promise, 'the request');

for (const backend of backends()) {
  describe(`governed upstream resources and prompts (${backend.name})`, () => {
    let tg: Gateway;
    let world: World;
    let app: FastifyInstance;
    let base: string;
    let key: string;
    let inspector: Store;
    let stateDir: string;
    const clients: Client[] = [];
    let templateId = '';

    const setMode = (mode: 'benign' | 'changed') => writeFileSync(join(stateDir, 'mode'), mode);

    async function connect(): Promise<Client> {
      const client = await connectMcp(base, key, 'resources-test');
      clients.push(client);
      return client;
    }

    async function classify(kind: string, entryKey: string, classification: object) {
      const res = await app.inject({
        method: 'POST',
        url: '/v1/providers/notes/entries/classify',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        payload: { kind, key: entryKey, classification },
      });
      assert.equal(res.statusCode, 200, res.body);
      return res.json() as { tool: { id: string; version: string; quarantined: boolean } };
    }

    async function auditOf(toolId: string) {
      return inspector.db
        .selectFrom('audit_log')
        .select(['kind', 'decision', 'code', 'rule', 'outcome'])
        .where('tool_id', '=', toolId)
        .orderBy('seq')
        .execute();
    }

    before(async () => {
      world = await openWorld({ backend, agents: [NOTES_BOT], rest: { adminToken: ADMIN_TOKEN } });
      ({ tg, base } = world);
      app = world.app as FastifyInstance;
      key = String(world.keys['notes-bot']);
      stateDir = mkdtempSync(join(tmpdir(), 'toolgate-resources-'));
      chmodSync(stateDir, 0o755);
      setMode('benign');
      inspector = await openStore(world.db);
      await tg.providers.register(
        fixtureProvider('notes', 'resources-server.mjs', [join(stateDir, 'mode')], stateDir),
        admin,
      );
    });

    after(async () => {
      await Promise.all(clients.map((c) => c.close().catch(() => {})));
      await inspector.close();
      await world.close();
      rmSync(stateDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    });

    test('imported entries are pinned and unoffered; the poisoned prompt is quarantined', async () => {
      const shown = await tg.providers.show('notes');
      const states = Object.fromEntries(shown.entries.map((e) => [`${e.kind}:${e.key}`, e.state]));
      assert.deepEqual(states, {
        'prompt:exfil': 'quarantined',
        'prompt:summarize': 'unclassified',
        'resource:notes://customers': 'unclassified',
        'resource:notes://readme': 'unclassified',
        'resource_template:notes://topics/{topic}': 'unclassified',
      });
      for (const e of shown.entries) assert.match(e.pin_hash, /^sha256:[0-9a-f]{64}$/);
      const exfil = shown.entries.find((e) => e.key === 'exfil');
      assert.ok((exfil?.findings.length ?? 0) > 0, 'the scan flags the poisoned description');

      const client = await connect();
      assert.deepEqual((await client.listResources()).resources, []);
      assert.deepEqual((await client.listResourceTemplates()).resourceTemplates, []);
      assert.deepEqual((await client.listPrompts()).prompts, []);
      const err = await refusal(client.readResource({ uri: 'notes://readme' }));
      assert.equal(err.code, -32084);
      assert.equal((err.data as { code: string }).code, 'RESOURCE_NOT_FOUND');
      assert.equal((await refusal(client.getPrompt({ name: 'summarize' }))).code, -32085);
      // Nothing reached the gate, nothing ran upstream.
      assert.equal(tg.providers.liveProcesses, 0);
    });

    test('classified and reviewed entries are offered, sorted, and read through the gate', async () => {
      const readme = await classify('resource', 'notes://readme', PUBLIC);
      assert.match(readme.tool.id, /^notes\.resource\.readme-[0-9a-f]{8}$/);
      templateId = (await classify('resource_template', 'notes://topics/{topic}', PUBLIC)).tool.id;
      await classify('prompt', 'summarize', PUBLIC);
      // Classified but not yet reviewed (third-party): still not offered.
      const early = await connect();
      assert.deepEqual((await early.listResources()).resources, []);
      await approvePendingReviews(tg);

      const client = await connect();
      const resources = (await client.listResources()).resources;
      assert.deepEqual(
        resources.map((r) => [r.uri, r.name, r.description, r.mimeType]),
        [['notes://readme', 'readme', 'The project readme.', 'text/plain']],
      );
      assert.deepEqual(
        (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate),
        ['notes://topics/{topic}'],
      );
      const prompts = (await client.listPrompts()).prompts;
      assert.deepEqual(
        prompts.map((p) => [p.name, p.arguments?.map((a) => [a.name, a.required])]),
        [['summarize', [['text', true]]]],
      );
      // Governed entries are never offered as tools.
      assert.ok((await client.listTools()).tools.every((t) => !t.name.includes('readme')));

      const read = await client.readResource({ uri: 'notes://readme' });
      assert.deepEqual(read.contents, [
        { uri: 'notes://readme', mimeType: 'text/plain', text: 'hello from the readme' },
      ]);
      const topic = await client.readResource({ uri: 'notes://topics/gardening' });
      assert.equal((topic.contents[0] as { text: string }).text, 'notes about gardening');
      const got = await client.getPrompt({ name: 'summarize', arguments: { text: 'a long day' } });
      assert.deepEqual(got.messages, [
        { role: 'user', content: { type: 'text', text: 'Summarize in one line: a long day' } },
      ]);

      // Audited as gate calls: the pre and post records of each, allowed.
      const records = await auditOf(readme.tool.id);
      assert.deepEqual(
        records.map((r) => [r.kind, r.decision]),
        [
          ['call.pre', 'allow'],
          ['call.post', 'allow'],
        ],
      );
      // Arguments the prompt does not declare are refused by the gate's schema step.
      const bad = await refusal(
        client.getPrompt({ name: 'summarize', arguments: { text: 'x', extra: 'y' } }),
      );
      assert.equal(bad.code, -32086);
      assert.equal((bad.data as { details: { code: string } }).details.code, 'INPUT_INVALID');
      // A resource that is listed upstream but never classified stays unreadable.
      const hidden = await refusal(client.readResource({ uri: 'notes://customers' }));
      assert.equal(hidden.code, -32084);
    });

    test('a template value that needs percent-encoding is read on both paths; escapes that leave the value are not', async () => {
      const client = await connect();
      const read = async (uri: string) =>
        ((await client.readResource({ uri })).contents[0] as { text: string }).text;
      // The URI as sent reaches the upstream (its SDK binds the variable undecoded).
      for (const uri of [
        'notes://topics/a%40b',
        'notes://topics/jane.doe%40mail.example',
        'notes://topics/a%20b',
        'notes://topics/a%3Ab',
        'notes://topics/%C3%A9t%C3%A9',
      ]) {
        assert.equal(await read(uri), `notes about ${uri.slice('notes://topics/'.length)}`, uri);
      }
      for (const uri of [
        'notes://topics/a%2Fb',
        'notes://topics/..%2Freadme',
        'notes://topics/a%2540b',
        'notes://topics/%2e%2e',
        'notes://topics/a%00b',
        'notes://topics/a@b',
        'notes://topics/caf%c3%a9',
      ]) {
        const err = await refusal(client.readResource({ uri }));
        assert.equal(err.code, -32084, uri);
      }
      // The template named as a tool: the arguments expand to the URI that is read.
      for (const topic of ['a@b', 'été', 'a b', 'a:b']) {
        const called = await client.callTool({ name: templateId, arguments: { topic } });
        assert.notEqual(called.isError, true, `${topic}: ${JSON.stringify(called)}`);
        assert.match(JSON.stringify(called), /notes about /, topic);
      }
      for (const topic of ['a/b', '../readme', '%40', '..']) {
        const called = await client.callTool({ name: templateId, arguments: { topic } });
        assert.equal(called.isError, true, topic);
        const decision = (called._meta as Record<string, { rule: string }>)['toolgate/decision'];
        assert.equal(decision?.rule, 'resource.not_this_template', topic);
      }
    });

    test('a classified poisoned prompt stays quarantined and is never offered', async () => {
      const r = await classify('prompt', 'exfil', PUBLIC);
      assert.equal(r.tool.quarantined, true);
      await approvePendingReviews(tg);
      const client = await connect();
      assert.deepEqual(
        (await client.listPrompts()).prompts.map((p) => p.name),
        ['summarize'],
      );
      assert.equal((await refusal(client.getPrompt({ name: 'exfil' }))).code, -32085);
    });

    test('an upstream that changes a description has its entry quarantined, alerted and unreadable', async () => {
      const client = await connect();
      let announced = 0;
      client.setNotificationHandler(ResourceListChangedNotificationSchema, async () => {
        announced += 1;
      });
      assert.equal((await client.listResources()).resources.length, 1);
      setMode('changed');
      // A new session starts its own upstream process, which lists the changed description: the
      // read is refused by its pin before anything is read, and sets off a refresh.
      const started = await connect();
      const pinned = await refusal(started.readResource({ uri: 'notes://readme' }));
      assert.equal(pinned.code, -32086);
      const decision = (pinned.data as { details: { code: string; rule: string } }).details;
      assert.deepEqual(
        [decision.code, decision.rule],
        ['EXECUTION_FAILED', 'provider.pin_mismatch'],
      );
      const stateOf = async () =>
        (await tg.providers.show('notes')).entries.find((e) => e.key === 'notes://readme');
      let entry = await stateOf();
      for (
        const until = Date.now() + 10_000;
        entry?.state !== 'quarantined' && Date.now() < until;
      ) {
        await new Promise((r) => setTimeout(r, 50));
        entry = await stateOf();
      }
      assert.equal(entry?.state, 'quarantined');
      // An admin's refresh finds nothing more to change: the pin is the new one, still quarantined.
      const report = await tg.providers.refresh('notes', admin);
      assert.deepEqual(report.entries.changed, []);
      assert.ok(report.entries.unchanged.includes('resource:notes://readme'));
      assert.equal(entry?.reason, 'definition changed');
      assert.ok((await tg.catalog.versions(entry?.tool_id ?? '')).every((v) => v.quarantined));
      const events = await tg.events.list({
        subject: 'provider:notes/resource:notes://readme',
        limit: 100,
      });
      const alert = events.find((e) => e.action === 'alert.provider_changed');
      assert.ok(alert, 'an alert event is recorded');
      assert.equal((JSON.parse(alert.details) as { change: string }).change, 'changed');

      // The open client is told its resource list changed, and lists it without the readme.
      for (const until = Date.now() + 10_000; announced === 0 && Date.now() < until; ) {
        await new Promise((r) => setTimeout(r, 25));
      }
      assert.ok(announced > 0, 'notifications/resources/list_changed reached the open client');
      assert.deepEqual((await client.listResources()).resources, []);
      const fresh = await connect();
      assert.deepEqual((await fresh.listResources()).resources, []);
      assert.equal((await refusal(fresh.readResource({ uri: 'notes://readme' }))).code, -32084);
      // The other entries were untouched and still read.
      const topic = await fresh.readResource({ uri: 'notes://topics/x' });
      assert.equal((topic.contents[0] as { text: string }).text, 'notes about x');
    });

    test('classifying an entry the upstream never listed is refused', async () => {
      const res = await app.inject({
        method: 'POST',
        url: '/v1/providers/notes/entries/classify',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        payload: { kind: 'resource', key: 'notes://nothing', classification: PUBLIC },
      });
      assert.equal(res.statusCode, 409);
      assert.equal(res.json().code, 'PROVIDER_ENTRY_STATE');
    });
  });
}
