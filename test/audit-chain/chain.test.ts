/**
 * The audit chain's arithmetic on its own, with no database: a record's hash against a vector
 * computed independently (SHA-256 of 0x00 and the RFC 8785 text, written out by hand below), and
 * chains of records that verify until any one field of any record changes.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import {
  chainRows,
  firstBreak,
  GENESIS_HEAD,
  GENESIS_PREV_HASH,
  linkInPlace,
  recordHash,
} from '../../src/records/audit-chain/index.js';

const ZEROS = '0'.repeat(64);

function row(i: number): Record<string, string | number | null> {
  return {
    at: `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}.000Z`,
    kind: i % 2 === 0 ? 'call.pre' : 'call.post',
    call_id: `call_${i}`,
    session_id: i % 3 === 0 ? null : `ses_${i % 3}`,
    tool_id: 'weather_lookup',
    decision: 'allow',
    duration_ms: i / 7,
    bytes_out: i * 13,
    details: JSON.stringify({ n: i, note: 'ünïcödé ✓' }),
  };
}

describe('record hash', () => {
  test('matches a vector written out by hand: SHA-256(0x00 || canonical JSON), NULLs left out', () => {
    const record = {
      seq: 1,
      prev_hash: ZEROS,
      at: '2026-01-01T00:00:00.000Z',
      kind: 'call.pre',
      call_id: 'c1',
      decision: 'allow',
      details: '{}',
      duration_ms: 1.5,
      tool_id: null,
    };
    const text = `{"at":"2026-01-01T00:00:00.000Z","call_id":"c1","decision":"allow","details":"{}","duration_ms":1.5,"kind":"call.pre","prev_hash":"${ZEROS}","seq":1}`;
    const expected = createHash('sha256')
      .update(Buffer.concat([Buffer.from([0]), Buffer.from(text, 'utf8')]))
      .digest('hex');
    assert.equal(expected, '5314073b2264478cdd8ece01cd76b23d321c8c7e4edb911aff4d58b282a80e7e');
    assert.equal(recordHash(record), expected);
    // `hash` itself is never hashed: a stored row hashes to its own hash.
    assert.equal(recordHash({ ...record, hash: 'anything' }), expected);
  });

  test('the genesis link is 64 zeros and the empty chain starts at seq 0', () => {
    assert.equal(GENESIS_PREV_HASH, ZEROS);
    assert.deepEqual(GENESIS_HEAD, { seq: 0, hash: ZEROS });
  });
});

describe('chaining', () => {
  const N = 50;
  const chained = chainRows(
    GENESIS_HEAD,
    Array.from({ length: N }, (_, i) => row(i)),
  );

  test('a chain of N records links each onto the one before, gap-free from seq 1, and verifies', () => {
    assert.equal(chained.length, N);
    chained.forEach((r, i) => {
      assert.equal(r.seq, i + 1);
      assert.equal(r.prev_hash, i === 0 ? ZEROS : chained[i - 1]?.hash);
      assert.equal(r.hash, recordHash(r));
      assert.match(r.hash, /^[0-9a-f]{64}$/);
    });
    assert.equal(firstBreak(GENESIS_HEAD, chained), null);
  });

  test('chainRows leaves its input alone; linkInPlace completes the rows given', () => {
    const input = [row(1), row(2)];
    const copy = chainRows(GENESIS_HEAD, input);
    assert.equal('hash' in (input[0] as object), false);
    const same = linkInPlace(GENESIS_HEAD, input);
    assert.equal(same[0], input[0]);
    assert.deepEqual(same, copy);
  });

  test('a chain continues from any head: two halves chained in turn equal one chain', () => {
    const rows = Array.from({ length: N }, (_, i) => row(i));
    const first = chainRows(GENESIS_HEAD, rows.slice(0, 20));
    const last = first[first.length - 1] as { seq: number; hash: string };
    const second = chainRows({ seq: last.seq, hash: last.hash }, rows.slice(20));
    assert.deepEqual([...first, ...second], chained);
    assert.equal(firstBreak(last, second), null);
  });

  test('changing any field of any record breaks the chain at that record', () => {
    for (const at of [0, 17, N - 1]) {
      const victim = chained[at] as Record<string, unknown>;
      for (const field of Object.keys(victim)) {
        if (field === 'hash') continue;
        const value = victim[field];
        const changed =
          typeof value === 'number' ? value + 1 : value === null ? 'x' : `${String(value)}x`;
        const rows = chained.map((r, i) => (i === at ? { ...r, [field]: changed } : r));
        assert.equal(firstBreak(GENESIS_HEAD, rows), at + 1, `${field} of record ${at + 1}`);
      }
      // A NULL column filled in, or a new column, changes the hash too.
      const added = chained.map((r, i) => (i === at ? { ...r, model: 'gpt' } : r));
      assert.equal(firstBreak(GENESIS_HEAD, added), at + 1);
    }
  });

  test('a removed, reordered or re-hashed record breaks the chain', () => {
    const removed = chained.filter((_, i) => i !== 10);
    assert.equal(firstBreak(GENESIS_HEAD, removed), 11);
    const swapped = [...chained];
    [swapped[4], swapped[5]] = [
      swapped[5] as (typeof chained)[number],
      swapped[4] as (typeof chained)[number],
    ];
    assert.equal(firstBreak(GENESIS_HEAD, swapped), 5);
    // Re-hashing a changed record in place still breaks its successor's link.
    const forged = chained.map((r) => ({ ...r }));
    const f = forged[30] as Record<string, unknown>;
    f.decision = 'deny';
    f.hash = recordHash(f);
    assert.equal(firstBreak(GENESIS_HEAD, forged), 32);
  });
});
