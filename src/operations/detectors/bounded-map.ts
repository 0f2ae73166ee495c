/** @module A Map that forgets its least recently used entries past a size: detector state stays bounded. */
export class BoundedMap<K, V> {
  readonly #max: number;
  readonly #map = new Map<K, V>();

  constructor(max: number) {
    this.#max = Math.max(1, max);
  }

  get size(): number {
    return this.#map.size;
  }

  get(key: K): V | undefined {
    const v = this.#map.get(key);
    if (v !== undefined) {
      // Re-inserting moves the key to the young end of the insertion order.
      this.#map.delete(key);
      this.#map.set(key, v);
    }
    return v;
  }

  /** The value under key, created by `make` when absent. */
  upsert(key: K, make: () => V): V {
    const v = this.get(key);
    if (v !== undefined) return v;
    const created = make();
    this.set(key, created);
    return created;
  }

  set(key: K, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    while (this.#map.size > this.#max) {
      const oldest = this.#map.keys().next();
      if (oldest.done) break;
      this.#map.delete(oldest.value);
    }
  }

  delete(key: K): void {
    this.#map.delete(key);
  }
}

/** A set capped in size: once full, new members are still reported as new but not kept. */
export function addBounded<T>(set: Set<T>, value: T, max: number): void {
  if (set.size < max) set.add(value);
}
