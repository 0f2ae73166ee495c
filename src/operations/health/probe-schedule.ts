/**
 * @module When each tool's next probe is due (C14): a binary min-heap of (due time, key), with
 * stale entries skipped by generation, so rescheduling is O(log n) and finding what is due costs
 * nothing for tools that are not. The spread of first probes over an interval is the caller's.
 */

interface Slot {
  readonly due: number;
  readonly key: string;
  readonly gen: number;
}

export class ProbeSchedule {
  readonly #heap: Slot[] = [];
  readonly #gens = new Map<string, number>();

  get size(): number {
    return this.#gens.size;
  }

  /** Sets (or moves) the key's due time; an earlier entry for the key is ignored from now on. */
  set(key: string, due: number): void {
    const gen = (this.#gens.get(key) ?? 0) + 1;
    this.#gens.set(key, gen);
    this.#push({ due, key, gen });
  }

  /** Forgets the key (its entries in the heap are skipped when they surface). */
  delete(key: string): void {
    this.#gens.delete(key);
  }

  /** The key's due time is no longer tracked until `set` again (it is being probed). */
  #take(slot: Slot): boolean {
    if (this.#gens.get(slot.key) !== slot.gen) return false;
    this.#gens.set(slot.key, slot.gen + 1);
    return true;
  }

  /** The earliest due time still live, or Infinity. */
  peek(): number {
    this.#dropStale();
    return this.#heap[0]?.due ?? Number.POSITIVE_INFINITY;
  }

  /** Removes and returns up to `max` keys due at `now`, earliest first. */
  popDue(now: number, max: number): string[] {
    const out: string[] = [];
    while (out.length < max) {
      const top = this.#heap[0];
      if (!top || top.due > now) break;
      this.#pop();
      if (this.#take(top)) out.push(top.key);
    }
    return out;
  }

  #dropStale(): void {
    for (;;) {
      const top = this.#heap[0];
      if (!top || this.#gens.get(top.key) === top.gen) return;
      this.#pop();
    }
  }

  #push(slot: Slot): void {
    const h = this.#heap;
    h.push(slot);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = h[parent] as Slot;
      if (p.due <= slot.due) break;
      h[i] = p;
      i = parent;
    }
    h[i] = slot;
  }

  #pop(): void {
    const h = this.#heap;
    const last = h.pop();
    if (!last || h.length === 0) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= h.length) break;
      const r = l + 1;
      const c = r < h.length && (h[r] as Slot).due < (h[l] as Slot).due ? r : l;
      if ((h[c] as Slot).due >= last.due) break;
      h[i] = h[c] as Slot;
      i = c;
    }
    h[i] = last;
  }
}

/** A stable offset in [0, interval) for a key: first probes of many tools spread over an interval. */
export function spreadOffset(key: string, intervalMs: number): number {
  let h = 2166136261;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return (h >>> 0) % intervalMs;
}
