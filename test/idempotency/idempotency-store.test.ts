/** Idempotency records on every backend: claim once, replay the finished result, expire, sweep. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  IDEMPOTENCY_GRACE_MS,
  IDEMPOTENCY_TTL_MS,
  IdempotencyStore,
  idempotencyScope,
  isIdempotencyKey,
} from '../../src/domain/idempotency/index.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';

/** The scope of `key` for the `tool` tool, as agent `bot` (acting for `userId`) calls it. */
const botKey = (key: string, userId: string | null = null) =>
  idempotencyScope({ agentId: 'bot', userId, credential: null }, 'tool', key);

for (const backend of backends()) {
  describe(`idempotency store on ${backend.name}`, () => {
    let store: Store;
    let drop: () => Promise<void>;
    let now = new Date('2026-06-01T10:00:00Z');
    let records: IdempotencyStore;

    before(async () => {
      const fresh = await backend.fresh();
      drop = fresh.drop;
      store = await openStore(fresh.url);
      records = new IdempotencyStore(store.db, () => now);
    });
    after(async () => {
      await store.close();
      await drop();
    });

    test('a free key is claimed once; the same arguments are in progress, others conflict', async () => {
      const key = botKey('k1');
      assert.deepEqual(await records.lookup(key, 'h1'), { kind: 'claimed' });
      assert.deepEqual(await records.claim(key, 'h1', 'call_1', now), { kind: 'claimed' });
      assert.equal((await records.claim(key, 'h1', 'call_2', now)).kind, 'conflict');
      const other = await records.lookup(key, 'h2');
      assert.equal(other.kind === 'conflict' ? other.rule : '', 'idempotency.arguments_differ');
    });

    test('a stored result is replayed under its first call id', async () => {
      const key = botKey('k2');
      await records.claim(key, 'h1', 'call_first', now);
      await records.storeResult(key, { status: 'ok' });
      assert.deepEqual(await records.lookup(key, 'h1'), {
        kind: 'replay',
        callId: 'call_first',
        output: { status: 'ok' },
        trust: null,
      });
    });

    test('past the TTL a key is free again and the sweep removes it', async () => {
      const key = botKey('k3', 'alice');
      await records.claim(key, 'h1', 'call_old', now);
      now = new Date(now.getTime() + IDEMPOTENCY_TTL_MS + 1000);
      assert.deepEqual(await records.lookup(key, 'other'), { kind: 'claimed' });
      assert.deepEqual(await records.claim(key, 'other', 'call_new', now), { kind: 'claimed' });
      now = new Date(now.getTime() + IDEMPOTENCY_TTL_MS + 1000);
      assert.ok((await records.sweep(now)) >= 1);
      assert.deepEqual(await records.lookup(key, 'other'), { kind: 'claimed' });
    });

    test('a claim is given back only by its own call, and only while it has no outcome', async () => {
      const key = botKey('k-release');
      await records.claim(key, 'h1', 'call_a', now);
      await records.release(key, 'call_other');
      assert.equal((await records.claim(key, 'h1', 'call_b', now)).kind, 'conflict', 'still held');
      await records.release(key, 'call_a');
      assert.deepEqual(await records.claim(key, 'h1', 'call_c', now), { kind: 'claimed' });
      await records.storeFailure(key, {
        code: 'EXECUTION_FAILED',
        rule: 'runtime.error',
        message: 'x',
      });
      await records.release(key, 'call_c');
      const replay = await records.lookup(key, 'h1');
      assert.equal(replay.kind, 'replay_failure', 'a call that ran keeps its key');
      assert.equal((await records.outcome(key))?.state, 'failed');
    });

    test('an unfinished claim is running until its call must have ended, then unknown; never "use a new key"', async () => {
      const key = botKey('k-overdue');
      await records.claim(key, 'h1', 'call_slow', now, 1_000);
      const running = await records.lookup(key, 'h1');
      assert.equal(running.kind === 'conflict' ? running.rule : '', 'idempotency.in_progress');
      assert.doesNotMatch(running.kind === 'conflict' ? running.message : '', /use a new key/);
      assert.deepEqual(await records.outcome(key), { state: 'running', callId: 'call_slow' });
      now = new Date(now.getTime() + 1_000 + IDEMPOTENCY_GRACE_MS + 1);
      const overdue = await records.lookup(key, 'h1');
      assert.equal(overdue.kind === 'conflict' ? overdue.rule : '', 'idempotency.outcome_unknown');
      assert.deepEqual(await records.outcome(key), { state: 'unknown', callId: 'call_slow' });
      assert.equal(
        await records.outcome(
          idempotencyScope({ agentId: 'bot', userId: null, credential: null }, 'tool', 'nope'),
        ),
        null,
      );
    });

    test('keys are scoped per user and only of the allowed form', () => {
      assert.notEqual(
        idempotencyScope({ agentId: 'bot', userId: 'alice', credential: null }, 'tool', 'k'),
        idempotencyScope({ agentId: 'bot', userId: 'bob', credential: null }, 'tool', 'k'),
      );
      assert.ok(isIdempotencyKey('order-42:retry.1'));
      assert.ok(!isIdempotencyKey(''));
      assert.ok(!isIdempotencyKey('a b'));
      assert.ok(!isIdempotencyKey('x'.repeat(129)));
    });
  });
}
