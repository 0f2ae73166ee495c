/**
 * Owner-notice caps hold for the fleet (docs/operations.md, "Replicas"): two gateways on one
 * PostgreSQL database — two replicas, each with its own pool and notice service — send a team's
 * notices at the same time. The team's cap per hour counts both: of 40 distinct notices, 20 from
 * each replica at once, exactly the cap are sent and delivered, the rest recorded `rate_limited`
 * (a cap per replica would have sent all 40). The benign neighbour: another team's notices, sent
 * through the same replicas meanwhile, are under its own cap and all delivered.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { validTool } from '../support/tools.js';
import { LOOPBACK_OUTBOUND, webhookReceiver } from '../support/webhook-receiver.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const CAP = 12;
const KINDS = ['deprecated', 'retiring', 'quarantined', 'orphaned', 'unhealthy'] as const;
const postgres = backends().find((b) => b.name === 'postgres');

test('two replicas sending one team’s notices at once send the team’s cap between them, no more', {
  skip: postgres
    ? false
    : 'TOOLGATE_TEST_PG_URL is not set (scripts/run-tests.mjs --with-postgres)',
}, async () => {
  assert.ok(postgres);
  const db = await postgres.fresh();
  const capped = await webhookReceiver();
  const neighbour = await webhookReceiver();
  const masterKey = MasterKey.generate();
  const replica = () =>
    openGateway({
      outbound: LOOPBACK_OUTBOUND,
      masterKey,
      db: db.url,
      executor: demoExecutor().register('test.lookup_invoice', () => ({ status: 'paid' })),
      notify: { publicUrl: 'https://toolgate.example.com', backoffMs: 5 },
      detectors: false,
      health: false,
      teams: ['busy-team', 'quiet-team'],
      owners: { perTeamPerHour: CAP, checkIntervalMs: 3_600_000 },
    });
  let a: Gateway | null = null;
  let b: Gateway | null = null;
  try {
    a = await replica();
    b = await replica();
    const tools = Array.from({ length: 8 }, (_, i) => ({
      kind: 'Tool',
      spec: validTool({
        id: `busy_${i}`,
        name: `busy_${i}`,
        owner: i < 4 ? 'busy-team' : 'quiet-team',
      }),
    }));
    await a.config.apply(tools, admin);
    await a.ownerChannels.add({ team: 'busy-team', url: capped.url }, admin);
    await a.ownerChannels.add({ team: 'quiet-team', url: neighbour.url }, admin);
    // 4 busy tools x 5 kinds = 20 distinct notices, each sent by both replicas' half of them.
    const busy = KINDS.flatMap((kind) =>
      [0, 1, 2, 3].map((i) => ({ kind, tool_id: `busy_${i}`, version: '1.0.0' })),
    );
    const quiet = [4, 5].map((i) => ({
      kind: 'unhealthy' as const,
      tool_id: `busy_${i}`,
      version: '1.0.0',
    }));
    const ra = a;
    const rb = b;
    const outcomes = await Promise.all([
      ...busy.map((e, i) => (i % 2 === 0 ? ra : rb).ownerNotices.toolEvent(e)),
      // The same 20 again from the other replica: deduplicated, never a second send.
      ...busy.map((e, i) => (i % 2 === 0 ? rb : ra).ownerNotices.toolEvent(e)),
      ...quiet.map((e, i) => (i % 2 === 0 ? ra : rb).ownerNotices.toolEvent(e)),
    ]);
    await Promise.all([ra.ownerNotices.settled(), rb.ownerNotices.settled()]);
    const count = (o: string) => outcomes.filter((x) => x === o).length;
    assert.equal(count('sent'), CAP + quiet.length, `outcomes: ${outcomes.join(', ')}`);
    assert.equal(count('rate_limited'), busy.length - CAP, `outcomes: ${outcomes.join(', ')}`);
    assert.equal(count('deduplicated'), busy.length, `outcomes: ${outcomes.join(', ')}`);
    await capped.received(CAP);
    await neighbour.received(quiet.length);
    // Nothing more arrives after the deliveries settled: the cap is the fleet's.
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(capped.bodies.length, CAP);
    assert.equal(neighbour.bodies.length, quiet.length);
    const recorded = (await a.events.list({ limit: 10_000 }))
      .filter((e) => e.action === 'owner.notice')
      .map((e) => (JSON.parse(e.details) as { outcome: string }).outcome);
    assert.equal(recorded.filter((o) => o === 'sent').length, CAP + quiet.length);
    assert.equal(recorded.filter((o) => o === 'rate_limited').length, busy.length - CAP);
  } finally {
    await a?.close();
    await b?.close();
    await capped.close();
    await neighbour.close();
    await db.drop();
  }
});
