/**
 * @module RFC 9162 Merkle tree hashing and proofs (leaf = SHA-256(0x00 || data), node =
 * SHA-256(0x01 || left || right)). Pure: depends on node:crypto only, so an offline verifier can
 * carry it. Hashes are 32-byte Buffers; indexes are 0-based leaf positions (leaf i = audit seq i+1).
 */
import * as crypto from 'node:crypto';

const { createHash } = crypto;
type OneShot = (algorithm: string, data: Uint8Array, encoding: 'buffer') => Buffer;
/** crypto.hash (Node ≥ 20.12): one call, no Hash object; the same digest. */
const oneShot = (crypto as unknown as { hash?: OneShot }).hash;

export const HASH_BYTES = 32;
const LEAF = Buffer.from([0]);

export function leafHash(data: Uint8Array): Buffer {
  return createHash('sha256')
    .update(Buffer.concat([LEAF, data]))
    .digest();
}

const nodeInput = Buffer.alloc(1 + 2 * HASH_BYTES);

export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  if (left.length !== HASH_BYTES || right.length !== HASH_BYTES) {
    return createHash('sha256')
      .update(Buffer.from([1]))
      .update(left)
      .update(right)
      .digest();
  }
  // One update of a reused buffer: hashing is synchronous, so the buffer is never shared.
  nodeInput[0] = 1;
  nodeInput.set(left, 1);
  nodeInput.set(right, 1 + HASH_BYTES);
  if (oneShot) return oneShot('sha256', nodeInput, 'buffer');
  return createHash('sha256').update(nodeInput).digest();
}

/** MTH of the empty tree: SHA-256 of the empty string (RFC 9162 §2.1.1). */
export const EMPTY_ROOT = createHash('sha256').digest();

/** Largest power of two strictly smaller than n (n ≥ 2). */
function split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/**
 * The compact range of a growing tree: the roots of its perfect subtrees, largest first. Appending
 * costs O(1) amortised; the root at the current size costs O(log n). Kept in memory by the
 * checkpointer and by the verifier.
 */
export class MerkleFrontier {
  #size = 0;
  /** #nodes[i] is the root of a perfect subtree of 2^levels[i] leaves. */
  readonly #nodes: Buffer[] = [];
  readonly #levels: number[] = [];

  get size(): number {
    return this.#size;
  }

  append(leaf: Buffer): void {
    let node = leaf;
    let level = 0;
    while (this.#levels.length > 0 && this.#levels[this.#levels.length - 1] === level) {
      this.#levels.pop();
      node = nodeHash(this.#nodes.pop() as Buffer, node);
      level += 1;
    }
    this.#nodes.push(node);
    this.#levels.push(level);
    this.#size += 1;
  }

  /**
   * Appends a perfect subtree of 2^level leaves by its root: the same as appending its leaves
   * one by one. The tree's size must be a multiple of 2^level (the subtree starts where a node
   * of that level starts); anything else throws.
   */
  appendSubtree(node: Buffer, level: number): void {
    const span = 2 ** level;
    if (
      !Number.isInteger(level) ||
      level < 0 ||
      node.length !== HASH_BYTES ||
      this.#size % span !== 0
    ) {
      throw new RangeError('a subtree is appended only where a node of its level starts');
    }
    let at = level;
    let hash = node;
    while (this.#levels.length > 0 && this.#levels[this.#levels.length - 1] === at) {
      this.#levels.pop();
      hash = nodeHash(this.#nodes.pop() as Buffer, hash);
      at += 1;
    }
    this.#nodes.push(hash);
    this.#levels.push(at);
    this.#size += span;
  }

  root(): Buffer {
    if (this.#nodes.length === 0) return EMPTY_ROOT;
    let acc = this.#nodes[this.#nodes.length - 1] as Buffer;
    for (let i = this.#nodes.length - 2; i >= 0; i--) acc = nodeHash(this.#nodes[i] as Buffer, acc);
    return acc;
  }

  /** The perfect subtree roots and their levels, for carrying a frontier into an export bundle. */
  toJSON(): { size: number; nodes: string[]; levels: number[] } {
    return {
      size: this.#size,
      nodes: this.#nodes.map((n) => n.toString('hex')),
      levels: [...this.#levels],
    };
  }

  static fromJSON(value: { size: number; nodes: string[]; levels: number[] }): MerkleFrontier {
    const f = new MerkleFrontier();
    let expected = 0;
    if (value.nodes.length !== value.levels.length)
      throw new TypeError('frontier: nodes/levels differ');
    for (let i = 0; i < value.nodes.length; i++) {
      const level = value.levels[i] as number;
      const hex = value.nodes[i] as string;
      if (!/^[0-9a-f]{64}$/.test(hex) || !Number.isInteger(level) || level < 0 || level > 52) {
        throw new TypeError('frontier: malformed node');
      }
      if (i > 0 && level >= (value.levels[i - 1] as number))
        throw new TypeError('frontier: levels must fall');
      f.#nodes.push(Buffer.from(hex, 'hex'));
      f.#levels.push(level);
      expected += 2 ** level;
    }
    if (expected !== value.size) throw new TypeError('frontier: size does not match its subtrees');
    f.#size = value.size;
    return f;
  }
}

/**
 * Every leaf hash plus the roots of every aligned perfect subtree (level k holds subtree j covering
 * leaves [j·2^k, (j+1)·2^k)), in flat buffers. Any subtree hash the RFC's recursion asks for is then
 * assembled from O(log n) stored nodes, so a proof costs O(log² n) hash lookups, never a pass over
 * the leaves. Memory: about 64 bytes per leaf.
 */
export class MerkleTree {
  #levels: Buffer[] = [Buffer.alloc(HASH_BYTES * 1024)];
  #counts: number[] = [0];

  get size(): number {
    return this.#counts[0] as number;
  }

  #node(level: number, index: number): Buffer {
    const buf = this.#levels[level] as Buffer;
    return buf.subarray(index * HASH_BYTES, (index + 1) * HASH_BYTES);
  }

  #put(level: number, hash: Uint8Array): void {
    if (this.#levels.length <= level) {
      this.#levels.push(Buffer.alloc(HASH_BYTES * 64));
      this.#counts.push(0);
    }
    const count = this.#counts[level] as number;
    let buf = this.#levels[level] as Buffer;
    if ((count + 1) * HASH_BYTES > buf.length) {
      const bigger = Buffer.alloc(buf.length * 2);
      buf.copy(bigger);
      this.#levels[level] = bigger;
      buf = bigger;
    }
    buf.set(hash, count * HASH_BYTES);
    this.#counts[level] = count + 1;
  }

  append(leaf: Uint8Array): void {
    this.#put(0, leaf);
    let level = 0;
    let index = (this.#counts[0] as number) - 1;
    // A right child completes its parent.
    while (index % 2 === 1) {
      const parent = nodeHash(this.#node(level, index - 1), this.#node(level, index));
      level += 1;
      index = (index - 1) / 2;
      this.#put(level, parent);
    }
  }

  /** The index of the first leaf equal to `hash`, or -1: a scan of the leaf level in memory. */
  indexOf(hash: Uint8Array): number {
    if (hash.length !== HASH_BYTES) return -1;
    const leaves = (this.#levels[0] as Buffer).subarray(0, this.size * HASH_BYTES);
    let from = 0;
    for (;;) {
      const at = leaves.indexOf(hash, from);
      if (at < 0) return -1;
      // A match across two leaves is no leaf: look again from the next byte.
      if (at % HASH_BYTES === 0) return at / HASH_BYTES;
      from = at + 1;
    }
  }

  leaf(index: number): Buffer {
    if (!Number.isInteger(index) || index < 0 || index >= this.size)
      throw new RangeError('no such leaf');
    return Buffer.from(this.#node(0, index));
  }

  /** MTH(D[start:end]); start must be aligned as the RFC's recursion produces it. */
  #hash(start: number, end: number): Buffer {
    const n = end - start;
    if (n === 0) return EMPTY_ROOT;
    if ((n & (n - 1)) === 0 && start % n === 0) {
      const level = Math.log2(n);
      return this.#node(level, start / n);
    }
    const k = split(n);
    return nodeHash(this.#hash(start, start + k), this.#hash(start + k, end));
  }

  root(size = this.size): Buffer {
    this.#checkSize(size);
    return Buffer.from(this.#hash(0, size));
  }

  #checkSize(size: number): void {
    if (!Number.isInteger(size) || size < 0 || size > this.size) {
      throw new RangeError(`tree size ${size} is outside 0..${this.size}`);
    }
  }

  /** The compact range of the tree at `size` (its perfect subtrees, largest first). */
  frontier(size: number): MerkleFrontier {
    this.#checkSize(size);
    const nodes: string[] = [];
    const levels: number[] = [];
    let start = 0;
    for (let level = 52; level >= 0; level--) {
      const width = 2 ** level;
      if (size - start >= width) {
        nodes.push(this.#node(level, start / width).toString('hex'));
        levels.push(level);
        start += width;
      }
    }
    return MerkleFrontier.fromJSON({ size, nodes, levels });
  }

  /** RFC 9162 §2.1.3.1 PATH(m, D[0:n]). */
  inclusionProof(index: number, size: number): Buffer[] {
    this.#checkSize(size);
    if (!Number.isInteger(index) || index < 0 || index >= size)
      throw new RangeError('leaf index outside the tree');
    const path: Buffer[] = [];
    const walk = (m: number, start: number, end: number): void => {
      const n = end - start;
      if (n <= 1) return;
      const k = split(n);
      if (m < k) {
        walk(m, start, start + k);
        path.push(Buffer.from(this.#hash(start + k, end)));
      } else {
        walk(m - k, start + k, end);
        path.push(Buffer.from(this.#hash(start, start + k)));
      }
    };
    walk(index, 0, size);
    return path;
  }

  /** RFC 9162 §2.1.4.1 PROOF(m, D[0:n]). */
  consistencyProof(from: number, to: number): Buffer[] {
    this.#checkSize(to);
    if (!Number.isInteger(from) || from < 0 || from > to)
      throw new RangeError('from must be within 0..to');
    if (from === 0 || from === to) return [];
    const proof: Buffer[] = [];
    const sub = (m: number, start: number, end: number, complete: boolean): void => {
      const n = end - start;
      if (m === n) {
        if (!complete) proof.push(Buffer.from(this.#hash(start, end)));
        return;
      }
      const k = split(n);
      if (m <= k) {
        sub(m, start, start + k, complete);
        proof.push(Buffer.from(this.#hash(start + k, end)));
      } else {
        sub(m - k, start + k, end, false);
        proof.push(Buffer.from(this.#hash(start, start + k)));
      }
    };
    sub(from, 0, to, true);
    return proof;
  }
}

/** RFC 9162 §2.1.3.2: verifies an inclusion proof; never throws on malformed input, returns false. */
export function verifyInclusion(
  index: number,
  size: number,
  leaf: Uint8Array,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  if (!Number.isInteger(index) || !Number.isInteger(size) || index < 0 || index >= size)
    return false;
  let fn = index;
  let sn = size - 1;
  let r: Buffer = Buffer.from(leaf);
  for (const p of proof) {
    if (p.length !== HASH_BYTES || sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && r.equals(Buffer.from(root));
}

/** RFC 9162 §2.1.4.2: verifies a consistency proof between two tree heads. */
export function verifyConsistency(
  size1: number,
  size2: number,
  root1: Uint8Array,
  root2: Uint8Array,
  proof: readonly Uint8Array[],
): boolean {
  if (!Number.isInteger(size1) || !Number.isInteger(size2) || size1 < 0 || size1 > size2)
    return false;
  if (proof.some((p) => p.length !== HASH_BYTES)) return false;
  if (size1 === size2) return proof.length === 0 && Buffer.from(root1).equals(Buffer.from(root2));
  if (size1 === 0) return proof.length === 0;
  if (proof.length === 0) return false;
  const path = [...proof];
  if ((size1 & (size1 - 1)) === 0) path.unshift(root1);
  if (path.length === 0) return false;
  let fn = size1 - 1;
  let sn = size2 - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr: Buffer = Buffer.from(path[0] as Uint8Array);
  let sr: Buffer = Buffer.from(path[0] as Uint8Array);
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && fr.equals(Buffer.from(root1)) && sr.equals(Buffer.from(root2));
}
