/**
 * The run's destination literals table (migration 0026) on every backend: insert-or-ignore keeps
 * the first sighting, a look-up answers only the run's own hashes, oldest first, and large
 * batches are written whole; the (agent, user) principal's rows answer any run of that principal
 * within the window, are renewed once older than it, and answer no other principal.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  principalScope,
  recordRunLiterals,
  runLiteralSightings,
} from '../../src/domain/sessions/run-literals.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';

/** A run of its own agent, so that only the run scope can answer. */
const own = (runId: string) => ({
  runId,
  principal: principalScope(`agent-of-${runId}`, null),
  since: new Date(0),
});

for (const backend of backends()) {
  describe(`destination literals of a run (${backend.name})`, () => {
    let store: Store;
    let drop: () => Promise<void>;
    before(async () => {
      const fresh = await backend.fresh();
      drop = fresh.drop;
      store = await openStore(fresh.url);
    });
    after(async () => {
      await store.close();
      await drop();
    });

    test('the first sighting wins; other runs and unknown hashes are not answered', async () => {
      const t1 = new Date('2026-03-01T12:01:00Z');
      const t2 = new Date('2026-03-01T12:05:00Z');
      await recordRunLiterals(
        store.db,
        { ...own('r1'), toolId: 'read_email', callId: 'c1', at: t1 },
        [
          { hash: 'h-iban', kind: 'iban' },
          { hash: 'h-mail', kind: 'email' },
        ],
      );
      await recordRunLiterals(
        store.db,
        { ...own('r1'), toolId: 'read_file', callId: 'c2', at: t2 },
        [
          { hash: 'h-iban', kind: 'iban' },
          { hash: 'h-host', kind: 'host' },
        ],
      );
      await recordRunLiterals(
        store.db,
        { ...own('r2'), toolId: 'read_file', callId: 'c3', at: t1 },
        [{ hash: 'h-other', kind: 'url' }],
      );
      const seen = await runLiteralSightings(store.db, own('r1'), [
        'h-host',
        'h-iban',
        'h-other',
        'h-none',
      ]);
      assert.deepEqual(seen, [
        {
          hash: 'h-iban',
          kind: 'iban',
          tool_id: 'read_email',
          call_id: 'c1',
          first_seen_at: t1.toISOString(),
        },
        {
          hash: 'h-host',
          kind: 'host',
          tool_id: 'read_file',
          call_id: 'c2',
          first_seen_at: t2.toISOString(),
        },
      ]);
      assert.deepEqual(await runLiteralSightings(store.db, own('r1'), []), []);
    });

    test('a result of many literals is written whole', async () => {
      const literals = Array.from({ length: 450 }, (_, i) => ({ hash: `m-${i}`, kind: 'email' }));
      const at = new Date('2026-03-01T13:00:00Z');
      await recordRunLiterals(store.db, { ...own('big'), toolId: 't', callId: 'c', at }, literals);
      const seen = await runLiteralSightings(
        store.db,
        own('big'),
        literals.map((l) => l.hash),
      );
      assert.equal(seen.length, 450);
    });

    test("a principal's rows answer its other runs within the window, and no other principal", async () => {
      const mallory = principalScope('clerk', 'alice');
      const t0 = new Date('2026-03-02T10:00:00Z');
      const day = 86_400_000;
      const scopes = (runId: string, principal: string, now: Date) => ({
        runId,
        principal,
        since: new Date(now.getTime() - day),
      });
      await recordRunLiterals(
        store.db,
        { ...scopes('run-1', mallory, t0), toolId: 'read_email', callId: 'c1', at: t0 },
        [{ hash: 'p-iban', kind: 'iban' }],
      );
      const later = new Date(t0.getTime() + day / 2);
      // Another run of the same principal sees it; another user of the same agent does not.
      const seen = await runLiteralSightings(store.db, scopes('run-2', mallory, later), ['p-iban']);
      assert.deepEqual(
        seen.map((r) => [r.kind, r.call_id]),
        [['iban', 'c1']],
      );
      const other = principalScope('clerk', 'bob');
      assert.deepEqual(
        await runLiteralSightings(store.db, scopes('run-3', other, later), ['p-iban']),
        [],
      );
      // Past the window it is forgotten, and a new sighting renews it.
      const gone = new Date(t0.getTime() + 2 * day);
      assert.deepEqual(
        await runLiteralSightings(store.db, scopes('run-4', mallory, gone), ['p-iban']),
        [],
      );
      await recordRunLiterals(
        store.db,
        { ...scopes('run-4', mallory, gone), toolId: 'read_file', callId: 'c9', at: gone },
        [{ hash: 'p-iban', kind: 'iban' }],
      );
      const renewed = await runLiteralSightings(store.db, scopes('run-5', mallory, gone), [
        'p-iban',
      ]);
      assert.deepEqual(
        renewed.map((r) => [r.call_id, r.first_seen_at]),
        [['c9', gone.toISOString()]],
      );
    });
  });
}
