/** Detector state is bounded: the least recently used keys go first. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addBounded, BoundedMap } from '../../src/operations/detectors/bounded-map.js';

test('a bounded map keeps at most its size, forgetting the least recently used key', () => {
  const m = new BoundedMap<string, number>(3);
  m.set('a', 1);
  m.set('b', 2);
  m.set('c', 3);
  assert.equal(m.get('a'), 1); // a is now the most recent
  m.set('d', 4);
  assert.equal(m.size, 3);
  assert.equal(m.get('b'), undefined);
  assert.deepEqual([m.get('a'), m.get('c'), m.get('d')], [1, 3, 4]);
  for (let i = 0; i < 10_000; i++) m.upsert(`k${i}`, () => i);
  assert.equal(m.size, 3);
});

test('a bounded set stops growing at its cap', () => {
  const s = new Set<number>();
  for (let i = 0; i < 100; i++) addBounded(s, i, 10);
  assert.equal(s.size, 10);
});
