/**
 * RFC 9162 proofs over random trees: every inclusion and consistency proof the tree produces
 * verifies against its root, the root equals the RFC's recursive definition, and altering any one
 * hash (leaf, proof element or root) or the index makes verification fail.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import {
  leafHash,
  MerkleFrontier,
  MerkleTree,
  nodeHash,
  recordBytes,
  recordHash,
  verifyConsistency,
  verifyInclusion,
} from '../../src/records/audit/index.js';
import {
  byteOrder,
  checkRange,
  RecordEncoder,
  rangeColumns,
} from '../../src/records/audit-chain/index.js';
import {
  columnOrder,
  recordBytesReference,
  recordHashOfValues,
} from '../../src/records/audit-chain/record-hash.js';
import { fc } from '../support/property.js';

function mth(leaves: readonly Buffer[]): Buffer {
  if (leaves.length === 0) return createHash('sha256').digest();
  if (leaves.length === 1) return leaves[0] as Buffer;
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return nodeHash(mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}

function build(n: number): { tree: MerkleTree; leaves: Buffer[] } {
  const tree = new MerkleTree();
  const leaves: Buffer[] = [];
  for (let i = 0; i < n; i++) {
    const leaf = leafHash(Buffer.from(`record ${i}`));
    leaves.push(leaf);
    tree.append(leaf);
  }
  return { tree, leaves };
}

function flip(buf: Buffer, bit: number): Buffer {
  const copy = Buffer.from(buf);
  copy[(bit >> 3) % copy.length] = (copy[(bit >> 3) % copy.length] as number) ^ (1 << (bit & 7));
  return copy;
}

const { tree: big, leaves: bigLeaves } = build(300);

/** A value an audit row's cell may hold as a verify worker reads it, and `extra` ones. */
const cellValue = (...extra: fc.Arbitrary<unknown>[]) =>
  fc.oneof(
    fc.string({ unit: 'grapheme' }),
    fc.string({ unit: 'binary' }),
    ...extra,
    fc.double(),
    fc.integer(),
    fc.constant(null),
    fc.constant(-0),
    fc.constant(1e21),
    fc.constant(Buffer.from('blob')),
    fc.bigInt(),
  );

describe('audit Merkle proofs (property)', () => {
  test('roots match the RFC 9162 definition; the frontier agrees with the tree', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 300 }), (n) => {
        assert.ok(big.root(n).equals(mth(bigLeaves.slice(0, n))));
        const f = new MerkleFrontier();
        for (const l of bigLeaves.slice(0, n)) f.append(l);
        assert.ok(f.root().equals(big.root(n)));
        assert.ok(big.frontier(n).root().equals(big.root(n)));
      }),
      { numRuns: 200 },
    );
  });

  test('a leaf is found by its hash at its own index; a match across two leaves is no leaf', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 300 }),
        fc.nat(),
        fc.integer({ min: 1, max: 31 }),
        (n, pick, cut) => {
          const { tree, leaves } = build(n);
          const i = pick % n;
          assert.equal(tree.indexOf(leaves[i] as Buffer), i);
          // The tail of one leaf followed by the head of the next is in the leaf bytes, yet no leaf.
          if (n >= 2) {
            const j = pick % (n - 1);
            const straddle = Buffer.concat([
              (leaves[j] as Buffer).subarray(cut),
              (leaves[j + 1] as Buffer).subarray(0, cut),
            ]);
            assert.equal(tree.indexOf(straddle), -1);
          }
          assert.equal(tree.indexOf(leafHash(Buffer.from('never appended'))), -1);
          assert.equal(tree.indexOf(Buffer.alloc(31)), -1);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('inclusion proofs verify for random sizes and fail for any altered hash or index', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 300 })
          .chain((size) =>
            fc.tuple(fc.constant(size), fc.integer({ min: 0, max: size - 1 }), fc.nat(), fc.nat()),
          ),
        ([size, index, pick, bit]) => {
          const root = big.root(size);
          const leaf = bigLeaves[index] as Buffer;
          const proof = big.inclusionProof(index, size);
          assert.ok(verifyInclusion(index, size, leaf, proof, root));
          assert.equal(verifyInclusion(index, size, flip(leaf, bit), proof, root), false);
          assert.equal(verifyInclusion(index, size, leaf, proof, flip(root, bit)), false);
          if (proof.length > 0) {
            const altered = [...proof];
            const at = pick % proof.length;
            altered[at] = flip(altered[at] as Buffer, bit);
            assert.equal(verifyInclusion(index, size, leaf, altered, root), false);
            assert.equal(verifyInclusion(index, size, leaf, proof.slice(1), root), false);
          }
          if (size > 1) {
            const other = (index + 1 + (pick % (size - 1))) % size;
            assert.equal(verifyInclusion(other, size, leaf, proof, root), false);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  test('consistency proofs verify for random size pairs and fail for any altered hash', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 300 })
          .chain((to) =>
            fc.tuple(fc.integer({ min: 1, max: to }), fc.constant(to), fc.nat(), fc.nat()),
          ),
        ([from, to, pick, bit]) => {
          const r1 = big.root(from);
          const r2 = big.root(to);
          const proof = big.consistencyProof(from, to);
          assert.ok(verifyConsistency(from, to, r1, r2, proof));
          if (from !== to) {
            assert.equal(verifyConsistency(from, to, flip(r1, bit), r2, proof), false);
            assert.equal(verifyConsistency(from, to, r1, flip(r2, bit), proof), false);
            const altered = [...proof];
            const at = pick % proof.length;
            altered[at] = flip(altered[at] as Buffer, bit);
            assert.equal(verifyConsistency(from, to, r1, r2, altered), false);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  test('names objects would reorder (array indexes, __proto__) still give the canonical bytes', () => {
    for (const names of [
      ['b', '10', 'a', '2'],
      ['0', 'z'],
      ['4294967294', 'x', '4294967295'],
      ['01', '1', 'a'],
      ['__proto__', 'a'],
    ]) {
      const row = JSON.parse(
        `{${names.map((n, i) => `${JSON.stringify(n)}:${i % 2 ? i : JSON.stringify(`v${i}`)}`).join(',')}}`,
      ) as Record<string, unknown>;
      assert.ok(recordBytes(row).equals(recordBytesReference(row)), names.join(','));
    }
  });

  test('the fast canonical form of a record is byte for byte what canonicalize (RFC 8785) gives', () => {
    const value = fc.oneof(
      fc.string({ unit: 'grapheme' }),
      fc.string({ unit: 'binary' }),
      fc.string(),
      fc.double(),
      fc.integer(),
      fc.constant(null),
      fc.constant(-0),
      fc.constant(1e21),
      fc.constant(0.1 + 0.2),
      fc.dictionary(fc.string(), fc.string(), { maxKeys: 3 }),
    );
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: 'binary' }), value, { maxKeys: 30 }), (row) => {
        let reference: Buffer | null = null;
        try {
          reference = recordBytesReference(row);
        } catch {
          assert.throws(() => recordBytes(row));
          return;
        }
        assert.ok(recordBytes(row).equals(reference));
        assert.equal(recordHash(row), leafHash(reference).toString('hex'));
      }),
      { numRuns: 2000 },
    );
  });

  test('the hash of a row read as values (verify workers) is the canonical one, or declined', () => {
    const value = cellValue();
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ unit: 'binary' }), { maxLength: 30 }),
        fc.array(value, { minLength: 30, maxLength: 30 }),
        (names, values) => {
          const row = Object.fromEntries(names.map((n, i) => [n, values[i]]));
          const fast = recordHashOfValues(columnOrder(names), values.slice(0, names.length));
          const simple = Object.entries(row).every(
            ([k, v]) =>
              k === 'hash' ||
              v === null ||
              typeof v === 'string' ||
              (typeof v === 'number' && Number.isFinite(v)),
          );
          if (!simple) {
            assert.equal(fast, null);
            return;
          }
          assert.equal(fast, leafHash(recordBytesReference(row)).toString('hex'));
        },
      ),
      { numRuns: 2000 },
    );
  });

  test('the bytes a verify worker hashes (one reused buffer) are the canonical ones, or declined', () => {
    const value = cellValue(
      fc.string({ unit: fc.constantFrom('"', '\\', '\n', '\u0000', '\u001f', '\u007f', 'a') }),
    );
    // One encoder for every run: what a longer row left in its buffer must not leak into the next.
    const encoder = new RecordEncoder();
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ unit: 'binary' }), { maxLength: 30 }),
        fc.array(value, { minLength: 30, maxLength: 30 }),
        (names, values) => {
          const row = Object.fromEntries(names.map((n, i) => [n, values[i]]));
          const order = columnOrder(names);
          const length = encoder.encode(byteOrder(order), values.slice(0, names.length));
          if (recordHashOfValues(order, values.slice(0, names.length)) === null) {
            assert.equal(length, -1);
            return;
          }
          const reference = Buffer.concat([Buffer.from([0]), recordBytesReference(row)]);
          assert.ok(encoder.bytes.subarray(0, length).equals(reference));
        },
      ),
      { numRuns: 2000 },
    );
    // A row larger than the buffer it starts with (64 KiB) grows it.
    const big = ['x'.repeat(50_000), 'é\n'.repeat(20_000), 7];
    const names = ['a', 'b', 'c'];
    const length = encoder.encode(byteOrder(columnOrder(names)), big);
    const reference = recordBytesReference(Object.fromEntries(names.map((n, i) => [n, big[i]])));
    assert.ok(encoder.bytes.subarray(1, length).equals(reference));
  });

  test('a clean range comes back with every aligned subtree of it (the levels a worker builds)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 300 }),
        fc.integer({ min: 1, max: 80 }),
        (from, count) => {
          const names = ['seq', 'prev_hash', 'hash', 'note'];
          const order = columnOrder(names);
          const rows: unknown[][] = [];
          let prev = createHash('sha256').update(`before ${from}`).digest('hex');
          for (let i = 0; i < count; i++) {
            const row: unknown[] = [from + 1 + i, prev, null, `n"${i}é`];
            row[2] = recordHashOfValues(order, row);
            rows.push(row);
            prev = row[2] as string;
          }
          const columns = rangeColumns(order, names);
          assert.ok(columns);
          const result = checkRange(rows, columns, from, from + count);
          assert.ok(result.clean);
          const leaves = rows.map((r) => Buffer.from(r[2] as string, 'hex'));
          assert.ok(Buffer.from(result.leaves).equals(Buffer.concat(leaves)));
          const levels = result.levels ?? [];
          levels.forEach((level, index) => {
            const span = 2 ** (index + 1);
            assert.equal(from % span, 0, 'a node starts where a node of its level starts');
            assert.equal(level.length, Math.floor(count / span) * 32);
            for (let m = 0; m < level.length / 32; m++) {
              const node = Buffer.from(level.subarray(m * 32, m * 32 + 32));
              assert.ok(node.equals(mth(leaves.slice(m * span, (m + 1) * span))));
            }
          });
          // As high as alignment and size allow.
          const next = 2 ** (levels.length + 1);
          assert.ok(from % next !== 0 || next > count);
          // A changed record, or a broken link, is not clean.
          const changed = rows.map((r) => [...r]);
          (changed[count - 1] as unknown[])[3] = 'changed';
          assert.equal(checkRange(changed, columns, from, from + count).clean, false);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('a tree grown by subtrees has the roots of one grown leaf by leaf', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 70 }),
        fc.integer({ min: 1, max: 70 }),
        fc.uniqueArray(fc.integer({ min: 1, max: 140 }), { maxLength: 4 }),
        (before, count, stops) => {
          const leaves = Array.from({ length: before + count }, (_, i) =>
            leafHash(Buffer.from(`r${i}`)),
          );
          const expected = new MerkleFrontier();
          const grown = new MerkleFrontier();
          for (const leaf of leaves.slice(0, before)) {
            expected.append(leaf);
            grown.append(leaf);
          }
          const ends = [...stops.filter((s) => s > before && s < before + count), before + count];
          ends.sort((a, b) => a - b);
          let at = before;
          for (const end of ends) {
            while (at < end) {
              let level = 0;
              while (at % 2 ** (level + 1) === 0 && at + 2 ** (level + 1) <= end) level += 1;
              grown.appendSubtree(mth(leaves.slice(at, at + 2 ** level)), level);
              at += 2 ** level;
            }
            while (expected.size < end) expected.append(leaves[expected.size] as Buffer);
            assert.equal(grown.size, expected.size);
            assert.ok(grown.root().equals(expected.root()));
          }
        },
      ),
      { numRuns: 300 },
    );
    const f = new MerkleFrontier();
    f.append(leafHash(Buffer.from('one')));
    assert.throws(() => f.appendSubtree(leafHash(Buffer.from('two')), 1), RangeError);
  });
});
