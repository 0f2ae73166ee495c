/**
 * Deciding a four-eyes change is atomic on SQLite and PostgreSQL: two approvers approving at the
 * same moment apply it exactly once (never left pending at 2 of 2), and a rejection racing the
 * approval that applies it leaves one consistent outcome (never "rejected" with its grant made).
 * On PostgreSQL the moment is made certain, not likely: a session holding the change's row lock
 * keeps both decisions inside their transactions until both have started.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import type { Actor } from '../../src/core/index.js';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { totpAt } from '../../src/domain/decisions/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { confirmDeciders, enrol, operator } from '../support/operators.js';
import { wipeDiskTool } from '../support/tools.js';
import { openWorld, type World } from '../support/world.js';

const admin: Actor = { id: 'cli:admin', via: 'cli' };
const ops = { alice: operator('alice'), bob: operator('bob'), carol: operator('carol') };

/**
 * On PostgreSQL: holds the change's row lock from another session while `start` runs, until
 * `waiting` sessions wait on a row (each decision has begun its transaction and reached the
 * change), then releases it. Only row waits count: the audit sequencer's advisory lock is not one.
 */
async function heldTogether<T>(
  url: string | null,
  changeId: string,
  start: (waitFor: (waiting: number) => Promise<void>, release: () => Promise<void>) => Promise<T>,
): Promise<T> {
  if (url === null)
    return start(
      async () => {},
      async () => {},
    );
  const holder = new pg.Client(url);
  await holder.connect();
  try {
    await holder.query('begin');
    await holder.query('select id from change_requests where id = $1 for update', [changeId]);
    const waitFor = async (waiting: number) => {
      for (;;) {
        const { rows } = await holder.query(
          "select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and wait_event in ('transactionid', 'tuple')",
        );
        if (Number(rows[0]?.n) >= waiting) return;
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    const release = async () => {
      await holder.query('commit');
    };
    return await start(waitFor, release);
  } finally {
    await holder.end();
  }
}

for (const backend of backends()) {
  describe(`concurrent four-eyes decisions on ${backend.name}`, () => {
    let tg: Gateway;
    let world: World;
    let url: string | null = null;
    const now = new Date('2026-03-01T12:00:00Z');
    const secrets: Record<string, string> = {};

    before(async () => {
      world = await openWorld({
        backend,
        options: { clock: () => now, masterKey: MasterKey.generate() },
      });
      if (backend.name === 'postgres') url = world.db;
      tg = world.tg;
      for (const [id, op] of Object.entries(ops)) secrets[id] = (await enrol(tg.admin, op)).secret;
      await confirmDeciders(
        tg.admin,
        Object.values(ops).map((op) => op.id),
        now,
      );
      await tg.config.apply(
        [
          { kind: 'Agent', spec: { id: 'ops', owner: 'qa', tier: 'privileged' } },
          { kind: 'Agent', spec: { id: 'ops2', owner: 'qa', tier: 'privileged' } },
          { kind: 'Tool', spec: wipeDiskTool() },
          { kind: 'Grant', spec: { agent: 'ops', capabilities: ['disk:wipe'] } },
          { kind: 'Grant', spec: { agent: 'ops2', capabilities: ['disk:wipe'] } },
        ],
        admin,
      );
    });
    after(async () => {
      await world?.close();
    });

    async function pendingGrant(agent: string) {
      const change = (await tg.changes.list('pending')).find(
        (c) => c.subject === `grant disk:wipe to ${agent}`,
      );
      assert.ok(change, `the grant to ${agent} waits for two approvers`);
      assert.equal(change.required, 2);
      return change;
    }

    test('two approvers approving at the same moment apply the change once', async () => {
      const change = await pendingGrant('ops');
      const results = await heldTogether(url, change.id, async (waitFor, release) => {
        const a = tg.changes.approve(change.id, ops.alice, totpAt(secrets.alice ?? '', now));
        await waitFor(1);
        const b = tg.changes.approve(change.id, ops.bob, totpAt(secrets.bob ?? '', now));
        await waitFor(2);
        await release();
        const out = await Promise.allSettled([a, b]);
        return out;
      });
      assert.deepEqual(
        results.map((r) => r.status),
        ['fulfilled', 'fulfilled'],
        JSON.stringify(results),
      );
      const after = await tg.changes.get(change.id);
      assert.equal(after.status, 'applied', 'not left pending at 2 of 2');
      assert.deepEqual([...after.approvers].sort(), ['operator:alice', 'operator:bob']);
      assert.deepEqual((await tg.agents.get('ops')).capabilities, ['disk:wipe']);
      const events = await tg.admin.events.list({ subject: `change:${change.id}`, limit: 10 });
      assert.equal(events.filter((e) => e.action === 'change.approved').length, 2);
    });

    test('a rejection racing the approval that applies a change never overturns it', async () => {
      const change = await pendingGrant('ops2');
      const later = new Date(now.getTime() + 30_000);
      await tg.changes.approve(change.id, ops.alice, totpAt(secrets.alice ?? '', later));
      const [approved, rejected] = await heldTogether(url, change.id, async (waitFor, release) => {
        const a = tg.changes.approve(change.id, ops.bob, totpAt(secrets.bob ?? '', later));
        await waitFor(1);
        const r = tg.changes.reject(change.id, ops.carol, 'not needed');
        await waitFor(2);
        await release();
        const out = await Promise.allSettled([a, r]);
        return out;
      });
      const after = await tg.changes.get(change.id);
      const granted = (await tg.agents.get('ops2')).capabilities.includes('disk:wipe');
      // One outcome, and the record agrees with what took effect.
      assert.equal(after.status === 'applied', granted, `${after.status} / granted ${granted}`);
      if (backend.name === 'postgres') {
        // The approval queued for the row first: it applied, and the rejection found nothing pending.
        assert.equal(approved?.status, 'fulfilled');
        assert.equal(after.status, 'applied');
        assert.equal(rejected?.status, 'rejected');
        assert.equal(
          rejected?.status === 'rejected' && (rejected.reason as { code?: string }).code,
          'APPROVAL_STATE',
        );
      }
    });
  });
}
