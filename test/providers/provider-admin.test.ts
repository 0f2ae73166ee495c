/**
 * @module Administering providers: `kind: Provider` through `apply -f`, the CLI (`toolgate
 * providers list|show|refresh|classify`) and REST share one code path; bad specs and
 * classifications are refused with structured errors and change nothing; pins are stable
 * canonical hashes. Runs against SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { stringify } from 'yaml';
import type { Actor } from '../../src/core/index.js';
import { pinOf } from '../../src/execution/providers/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { cleanEnv, ensureBuilt, MAIN } from '../support/cli.js';
import { approveReview } from '../support/reviews.js';
import { openWorld, restClient, type World } from '../support/world.js';
import { EVERYTHING, nodeProvider, READ_PUBLIC } from './provider-support.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const TOKEN = 'provider-admin-token-0123456789abcdef012345';
/** A Provider document for the everything server, as a file holds it. */
const EVERYTHING_DOCUMENT = stringify({
  apiVersion: 'toolgate/v1',
  kind: 'Provider',
  spec: nodeProvider('everything', EVERYTHING, ['stdio']),
});

describe('tool pins', () => {
  test('a pin is the same for the same definition in any key order, and moves with any change', () => {
    const tool = {
      name: 'echo',
      description: 'Echo it.',
      inputSchema: { type: 'object', properties: { m: { type: 'string' } } },
    };
    const reordered = {
      inputSchema: { properties: { m: { type: 'string' } }, type: 'object' },
      description: 'Echo it.',
      name: 'echo',
    };
    assert.equal(pinOf(tool), pinOf(reordered));
    assert.match(pinOf(tool), /^sha256:[0-9a-f]{64}$/);
    assert.notEqual(pinOf(tool), pinOf({ ...tool, description: 'Echo it!' }));
    assert.notEqual(pinOf(tool), pinOf({ ...tool, inputSchema: { type: 'object' } }));
    assert.notEqual(pinOf(tool), pinOf({ ...tool, outputSchema: { type: 'object' } }));
  });
});

for (const backend of backends()) {
  describe(`providers administered by apply, REST and CLI (${backend.name})`, () => {
    let tg: Gateway;
    let world: World;
    let base: string;
    let url: string;
    let dir: string;

    const call = restClient(() => base, TOKEN);

    before(async () => {
      world = await openWorld({ backend, rest: { adminToken: TOKEN } });
      ({ tg, base } = world);
      url = world.db;
      dir = mkdtempSync(join(tmpdir(), 'toolgate-padmin-'));
    });

    after(async () => {
      await world.close();
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    });

    test('a bad Provider document refuses the whole file and writes nothing', async () => {
      await assert.rejects(
        tg.config.apply(
          [
            { kind: 'Provider', spec: { name: 'Bad Name', owner: 'x', command: [] } },
            {
              kind: 'Provider',
              spec: { ...nodeProvider('ok', EVERYTHING), binds: [{ source: '/srv/../etc' }] },
            },
          ],
          admin,
        ),
        (err: { code?: string; details?: { problems: { document: number }[] } }) => {
          assert.equal(err.code, 'CONFIG_INVALID');
          const docs = new Set(err.details?.problems.map((p) => p.document));
          assert.deepEqual([...docs].sort(), [0, 1]);
          return true;
        },
      );
      assert.deepEqual(await tg.providers.list(), []);
    });

    test('a dry run plans the provider and imports nothing', async () => {
      const text = EVERYTHING_DOCUMENT;
      const plan = await tg.config.applyText(text, admin, { dryRun: true });
      assert.equal(plan.changes[0]?.action, 'create');
      assert.deepEqual(await tg.providers.list(), []);
    });

    test('apply registers the provider and imports its tools; applying again changes nothing', async () => {
      const text = EVERYTHING_DOCUMENT;
      const first = await tg.config.applyText(text, admin);
      assert.equal(first.changes[0]?.action, 'create');
      assert.match(first.changes[0]?.summary ?? '', /tools imported, unclassified/);
      const again = await tg.config.applyText(text, admin);
      assert.equal(again.changes[0]?.action, 'unchanged');
      const [summary] = await tg.providers.list();
      assert.equal(summary?.name, 'everything');
      assert.ok((summary?.tools.unclassified ?? 0) >= 10);
      assert.equal(summary?.tools.classified, 0);
    });

    test('REST lists, shows, refreshes and classifies; refusals are structured', async () => {
      const list = await call('GET', '/v1/providers');
      assert.equal(list.status, 200);
      const shown = await call('GET', '/v1/providers/everything');
      assert.equal(shown.status, 200);
      assert.ok((shown.body.tools as { name: string }[]).some((t) => t.name === 'echo'));
      const refreshed = await call('POST', '/v1/providers/everything/refresh');
      assert.equal(refreshed.status, 200);
      assert.deepEqual(refreshed.body.changed, []);
      assert.ok((refreshed.body.unchanged as string[]).includes('echo'));

      const missing = await call('GET', '/v1/providers/nope');
      assert.equal(missing.status, 404);
      assert.equal(missing.body.code, 'PROVIDER_NOT_FOUND');
      const badClass = await call('POST', '/v1/providers/everything/tools/echo/classify', {
        ...READ_PUBLIC,
        action_class: 'launch_missiles',
      });
      assert.equal(badClass.status, 400);
      assert.equal(badClass.body.code, 'INPUT_INVALID');
      const noTool = await call(
        'POST',
        '/v1/providers/everything/tools/no-such-tool/classify',
        READ_PUBLIC,
      );
      assert.equal(noTool.status, 409);
      assert.equal(noTool.body.code, 'PROVIDER_TOOL_STATE');
      assert.equal((await tg.catalog.list()).length, 0, 'refusals registered nothing');

      const ok = await call('POST', '/v1/providers/everything/tools/echo/classify', READ_PUBLIC);
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal((ok.body.tool as { id: string }).id, 'everything.echo');
      // An imported tool is third-party code: a draft, never offered, until an approver reviews it.
      assert.equal((ok.body.tool as { lifecycle: string }).lifecycle, 'draft');
      assert.deepEqual((ok.body.review as { reasons: string[] }).reasons, [
        'third_party',
        'upstream',
      ]);
      assert.ok(!(await tg.catalog.offered()).some((t) => t.id === 'everything.echo'));
      const activate = await call('POST', '/v1/tools/everything.echo/versions/1.0.0/activate');
      assert.equal(activate.status, 409);
      assert.equal(activate.body.code, 'REVIEW_REQUIRED');
      const reviewed = await approveReview(tg, 'everything.echo', '1.0.0');
      assert.equal(reviewed.tool.lifecycle, 'active');
      const events = await tg.events.list({ subject: 'provider:everything/echo', limit: 20 });
      assert.ok(events.some((e) => e.action === 'provider.tool_classified'));
    });

    test('the CLI lists, shows and classifies over the same store', async () => {
      if (backend.name !== 'sqlite') return;
      ensureBuilt();
      const cli = (...args: string[]) =>
        execFileSync(process.execPath, [MAIN, '--db', url, '--data-dir', dir, '--json', ...args], {
          env: cleanEnv(),
          encoding: 'utf8',
          timeout: 60_000,
        });
      const listed = JSON.parse(cli('providers', 'list')) as { providers: { name: string }[] };
      assert.deepEqual(
        listed.providers.map((p) => p.name),
        ['everything'],
      );
      const file = join(dir, 'sum.yaml');
      writeFileSync(file, stringify(READ_PUBLIC));
      const classified = JSON.parse(
        cli('providers', 'classify', 'everything', 'get-sum', '-f', file),
      ) as {
        tool: { id: string; lifecycle: string };
        review: { id: string };
      };
      assert.equal(classified.tool.id, 'everything.get-sum');
      assert.equal(classified.tool.lifecycle, 'draft');
      assert.match(classified.review.id, /^rev_/);
      const shown = JSON.parse(cli('providers', 'show', 'everything')) as {
        tools: { name: string; state: string }[];
      };
      assert.equal(shown.tools.find((t) => t.name === 'get-sum')?.state, 'classified');
    });
  });
}
