/**
 * The run's destination literals table (migration 0026) on every backend: insert-or-ignore keeps
 * the first sighting, a look-up answers only the run's own hashes, oldest first, and large
 * batches are written whole.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { recordRunLiterals, runLiteralSightings } from '../../src/sessions/run-literals.js';
import { openStore, type Store } from '../../src/store/index.js';
import { backends } from '../support/backends.js';

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
        { runId: 'r1', toolId: 'read_email', callId: 'c1', at: t1 },
        [
          { hash: 'h-iban', kind: 'iban' },
          { hash: 'h-mail', kind: 'email' },
        ],
      );
      await recordRunLiterals(
        store.db,
        { runId: 'r1', toolId: 'read_file', callId: 'c2', at: t2 },
        [
          { hash: 'h-iban', kind: 'iban' },
          { hash: 'h-host', kind: 'host' },
        ],
      );
      await recordRunLiterals(
        store.db,
        { runId: 'r2', toolId: 'read_file', callId: 'c3', at: t1 },
        [{ hash: 'h-other', kind: 'url' }],
      );
      const seen = await runLiteralSightings(store.db, 'r1', [
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
      assert.deepEqual(await runLiteralSightings(store.db, 'r1', []), []);
    });

    test('a result of many literals is written whole', async () => {
      const literals = Array.from({ length: 450 }, (_, i) => ({ hash: `m-${i}`, kind: 'email' }));
      const at = new Date('2026-03-01T13:00:00Z');
      await recordRunLiterals(store.db, { runId: 'big', toolId: 't', callId: 'c', at }, literals);
      const seen = await runLiteralSightings(
        store.db,
        'big',
        literals.map((l) => l.hash),
      );
      assert.equal(seen.length, 450);
    });
  });
}
