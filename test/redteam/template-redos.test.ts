/**
 * @module Attack round 10 F2: an upstream provider's listing of many crafted resource templates
 * must never hold the event loop while toolgate decides which templates share URIs
 * (src/domain/sessions/template-shadows.ts). The computation is bounded per pair and per run (a
 * pair not decided counts as sharing: both withheld), and a provider's templates are capped at
 * import (count, length, expressions), the excess skipped with the reason. A real upstream
 * (test/fixtures/mcp/many-templates-server.mjs) lists a benign set, then a pathological one,
 * while /healthz is polled; the reviewed template of another provider stays offered and read.
 * Its assertions bound latency, so it runs alone (scripts/run-tests.mjs, `redos.test`).
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type GovernedUriEntry, shadowedTemplates } from '../../src/domain/sessions/index.js';
import { FIXTURES, nodeProvider } from '../providers/provider-support.js';
import { backends } from '../support/backends.js';
import { approvePendingReviews } from '../support/reviews.js';
import { connectMcp, openWorld, slowestHealthz, type World } from '../support/world.js';

/** The bar for /healthz beside a control run (as test/redteam/redos.test.ts). */
const HEALTHZ_BUDGET_MS = 100;
const TOPIC = 'notes://topics/{topic}';

/** The attack's shapes: alternating path and reserved expressions, and adjacent variables. */
const alt = (i: number, n: number) =>
  `notes://${Array.from({ length: n }, (_, j) => (j % 2 ? `{+r${j}}` : `{/s${j}}`)).join('')}{?q${i}}{#f}`;
const adjacent = (i: number, n: number) =>
  `notes://${Array.from({ length: n }, (_, j) => `{a${j}}`).join('')}x${i}`;

const t = (id: string, key: string): GovernedUriEntry => ({
  id,
  kind: 'resource_template',
  key,
  listed: true,
});

test('two providers of a hundred crafted templates each are decided within a bounded time', () => {
  const entries = [
    t('zz.template.c', 'notes://customer/{id}'),
    ...Array.from({ length: 100 }, (_, i) => t(`up.template.alt${i}`, alt(i, 8))),
    ...Array.from({ length: 100 }, (_, i) => t(`xx.template.adj${i}`, adjacent(i, 10))),
  ];
  const started = performance.now();
  const shadowed = shadowedTemplates(entries);
  const took = performance.now() - started;
  // A few tens of milliseconds of work (the old search took seconds); a loaded host stretches it.
  assert.ok(took < 250, `took ${Math.round(took)} ms`);
  // The reviewed template shares no URI with them (`notes:///…`, and no `/` after `notes://{a0}`):
  // its pairs come first and are decided. The alternating ones overlap one another: withheld.
  assert.equal(shadowed.has('zz.template.c'), false);
  assert.equal(shadowed.has('up.template.alt0'), true);
  assert.equal(shadowed.get('up.template.alt0')?.template, alt(0, 8));
});

const sqlite = backends().find((b) => b.name === 'sqlite') ?? backends()[0];

describe('a crafted template listing never stalls the gateway (attack round 10 F2)', () => {
  let world: World;
  let stateDir: string;
  let listing = '';

  before(async () => {
    stateDir = mkdtempSync(join(tmpdir(), 'toolgate-template-redos-'));
    chmodSync(stateDir, 0o755);
    listing = join(stateDir, 'templates.json');
    writeFileSync(join(stateDir, 'notes-mode'), 'benign');
    writeFileSync(listing, JSON.stringify(['memo://{kind}/{id}']));
    world = await openWorld({
      ...(sqlite ? { backend: sqlite } : {}),
      agents: [{ id: 'reader', capabilities: ['notes:read'] }],
      rest: true,
    });
    const binds = { binds: [{ source: FIXTURES }, { source: stateDir }] };
    await world.tg.providers.register(
      nodeProvider(
        'notes',
        join(FIXTURES, 'resources-server.mjs'),
        [join(stateDir, 'notes-mode')],
        binds,
      ),
      world.admin,
    );
    await world.tg.providers.register(
      nodeProvider('many', join(FIXTURES, 'many-templates-server.mjs'), [listing], binds),
      world.admin,
    );
    const res = await world.send('POST', '/v1/providers/notes/entries/classify', {
      kind: 'resource_template',
      key: TOPIC,
      classification: {
        data_access: 'public',
        access_tier: 'public',
        required_capabilities: ['notes:read'],
      },
    });
    assert.equal(res.status, 200, res.text);
    await approvePendingReviews(world.tg);
  });

  after(async () => {
    await world.close();
    rmSync(stateDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });

  /** Refreshes `many` with `templates` listed and opens a session, polling /healthz meanwhile. */
  async function refreshWith(templates: readonly string[]) {
    writeFileSync(listing, JSON.stringify(templates));
    const work = (async () => {
      const report = await world.tg.providers.refresh('many', world.admin);
      const session = await world.send('POST', '/v1/sessions', {}, world.keys.reader);
      return { report, session };
    })();
    const slowest = await slowestHealthz(world.base, work);
    return { slowest, ...(await work) };
  }

  test('/healthz stays fast while 600 crafted templates are refreshed; the excess is skipped with the reason', async (t) => {
    // The control: as many templates, as long, sharing no URI with one another, replacing as
    // many as the crafted ones replace (each change is quarantined and alerted). Two rounds of
    // each, fresh templates every time (decided pairs are remembered); a loaded shared host's own
    // delays vary by hundreds of ms, so the better attack round is held to the worse control's
    // bar (the unbounded search stalled for 24–29 s).
    const tail = [alt(9999, 20), `notes://long/${'x'.repeat(600)}/{id}`];
    await refreshWith(Array.from({ length: 100 }, (_, i) => `memo://first${i}/{id}`));
    const controls: number[] = [];
    const attacks: number[] = [];
    let last: Awaited<ReturnType<typeof refreshWith>> | undefined;
    for (const round of [1, 2]) {
      const control = await refreshWith([
        ...Array.from({ length: 600 }, (_, i) => `memo://r${round}k${i}/${alt(i, 8).slice(8)}`),
        ...tail,
      ]);
      controls.push(control.slowest);
      last = await refreshWith([
        ...Array.from({ length: 600 }, (_, i) => alt(round * 1000 + i, 8)),
        ...tail,
      ]);
      attacks.push(last.slowest);
    }
    const best = Math.min(...attacks);
    const bar = Math.max(...controls) + HEALTHZ_BUDGET_MS;
    t.diagnostic(
      `slowest /healthz: ${attacks.map((x) => x.toFixed(1)).join(', ')} ms (controls ${controls.map((x) => x.toFixed(1)).join(', ')} ms)`,
    );
    assert.ok(
      best < bar,
      `/healthz took ${best.toFixed(1)} ms while a listing was decided (bar ${bar.toFixed(1)} ms)`,
    );
    assert.ok(last !== undefined);
    const attack = last;
    const skipped = attack.report.entries.skipped;
    const reasons = (prefix: string) =>
      skipped.filter((s) => s.reason.startsWith(prefix)).map((s) => s.name);
    assert.equal(
      reasons('more than 100 resource templates').length,
      502,
      JSON.stringify(skipped.slice(0, 3)),
    );
    assert.equal(attack.report.entries.added.length, 100);
    // The benign neighbour: the reviewed template shares no URI with any of them.
    assert.equal(attack.session.status, 201, attack.session.text);
    const offered = (attack.session.body.tools as { id: string }[]).map((x) => x.id);
    assert.ok(
      offered.some((id) => id.startsWith('notes.template.')),
      offered.join(),
    );
    const reader = await connectMcp(world.base, world.keys.reader, 'redos');
    try {
      const read = await reader.readResource({ uri: 'notes://topics/tea' });
      assert.equal((read.contents[0] as { text: string }).text, 'notes about tea');
    } finally {
      await reader.close();
    }
  });

  test('templates too long or of too many expressions are skipped with the reason', async () => {
    const { report } = await refreshWith([
      'memo://{kind}/{id}',
      alt(1, 20),
      `notes://long/${'x'.repeat(600)}/{id}`,
    ]);
    const reasons = new Map(report.entries.skipped.map((s) => [s.name, s.reason]));
    assert.match(
      reasons.get(`resource_template:${alt(1, 20)}`) ?? '',
      /more than 10 expressions or variables/,
    );
    assert.match(
      reasons.get(`resource_template:notes://long/${'x'.repeat(600)}/{id}`) ?? '',
      /longer than 512 characters/,
    );
    assert.equal(report.entries.skipped.length, 2);
  });
  test('entries past the listing cap are counted in the refresh record, not dropped silently (round 11 F9)', async () => {
    const refreshed = async () => {
      const events = await world.tg.admin.events.list({ limit: 100_000 });
      const last = events.filter((e) => e.action === 'provider.refreshed').at(-1);
      return (JSON.parse(last?.details ?? '{}') as { entries: Record<string, unknown> }).entries;
    };
    // A key past 2048 characters, then 1001 templates: 1000 entries are read, 900 of them
    // skipped past the templates' cap with the reason; the long key and the 1001st are counted.
    const { report } = await refreshWith([
      `memo://long/${'x'.repeat(2100)}/{id}`,
      ...Array.from({ length: 1001 }, (_, i) => `memo://many${i}/{id}`),
    ]);
    assert.equal(report.entries.skipped.length, 900);
    assert.equal((report.entries as { skipped_more?: number }).skipped_more, 2);
    const entries = await refreshed();
    assert.equal((entries.skipped as unknown[]).length, 900);
    assert.equal(entries.skipped_more, 2);
    // The benign neighbour: a listing within the caps counts none.
    const within = await refreshWith(['memo://{kind}/{id}']);
    assert.equal((within.report.entries as { skipped_more?: number }).skipped_more, 0);
    assert.equal((await refreshed()).skipped_more, 0);
  });
});
