/**
 * @module A line diff for reviewers (a four-eyes change page shows a definition against the
 * active version): a shortest edit script of two texts' lines — kept, removed and added lines in
 * order, each block of changes its removed lines first — by Myers' O((N+M)·D) algorithm in
 * linear space (the middle-snake bisection), after the common head and tail are set aside.
 * Bounded: up to MAX_DIFF_LINES lines a side and MAX_DIFF_EDITS removed plus added lines it
 * always answers; past either it gives up (`null`) instead of spending without end, and the page
 * lists the changed JSON paths (json-diff.ts), which it can always afford. A definition of a
 * few thousand lines with a few changes costs a few milliseconds (attack round 27 F1: the
 * quadratic table this replaced gave up at 3,000 lines, so a changed `maximum` in a 1,200-property
 * schema did not stand out).
 */

export interface DiffLine {
  readonly op: 'same' | 'add' | 'remove';
  readonly text: string;
}

/** A row as a page shows a diff: a line, or a run of unchanged lines counted, not shown. */
export type DiffRow = DiffLine | { readonly op: 'skip'; readonly count: number };

/** Lines per side past which no diff is computed. */
export const MAX_DIFF_LINES = 20_000;

/** Removed plus added lines past which no diff is computed (the D of Myers' bound). */
export const MAX_DIFF_EDITS = 2_000;

/** The lines of `after` against `before`, or null when either is too long or they differ too much. */
export function lineDiff(before: string, after: string): DiffLine[] | null {
  const a = before.split('\n');
  const b = after.split('\n');
  if (a.length > MAX_DIFF_LINES || b.length > MAX_DIFF_LINES) return null;
  // Lines as small integers: the search compares numbers, not strings.
  const ids = new Map<string, number>();
  const idOf = (line: string) => {
    const known = ids.get(line);
    if (known !== undefined) return known;
    ids.set(line, ids.size);
    return ids.size - 1;
  };
  const diff = new MyersDiff(Int32Array.from(a, idOf), Int32Array.from(b, idOf));
  const ops = diff.run(MAX_DIFF_EDITS);
  if (ops === null) return null;
  return linesOf(ops, a, b);
}

/** One step of the edit script: keep, remove from `a` or add from `b`. */
const SAME = 0;
const REMOVE = 1;
const ADD = 2;

/** The script as lines, each block of changes with its removed lines before its added ones. */
function linesOf(ops: readonly number[], a: readonly string[], b: readonly string[]): DiffLine[] {
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  for (let k = 0; k < ops.length; ) {
    if (ops[k] === SAME) {
      out.push({ op: 'same', text: a[i++] as string });
      j++;
      k++;
      continue;
    }
    const added: DiffLine[] = [];
    for (; k < ops.length && ops[k] !== SAME; k++) {
      if (ops[k] === REMOVE) out.push({ op: 'remove', text: a[i++] as string });
      else added.push({ op: 'add', text: b[j++] as string });
    }
    out.push(...added);
  }
  return out;
}

/**
 * Myers' diff of two id arrays in linear space. `run` answers the edit script (SAME, REMOVE, ADD
 * per step), or null when the shortest one is longer than the bound: the first bisection, whose
 * middle snake lies at half the edit distance, searches no further than half the bound, and each
 * part it splits into has a shorter script than the whole, so the bound holds for all of it.
 */
class MyersDiff {
  readonly #a: Int32Array;
  readonly #b: Int32Array;
  readonly #ops: number[] = [];
  #forward = new Int32Array(0);
  #backward = new Int32Array(0);

  constructor(a: Int32Array, b: Int32Array) {
    this.#a = a;
    this.#b = b;
  }

  run(maxEdits: number): number[] | null {
    return this.#range(0, this.#a.length, 0, this.#b.length, Math.floor(maxEdits / 2))
      ? this.#ops
      : null;
  }

  /** Diffs a[aLo..aHi) against b[bLo..bHi), appending to the script; false past `maxD`. */
  #range(aLo: number, aHi: number, bLo: number, bHi: number, maxD: number): boolean {
    const a = this.#a;
    const b = this.#b;
    let head = 0;
    while (aLo + head < aHi && bLo + head < bHi && a[aLo + head] === b[bLo + head]) head++;
    let tail = 0;
    while (
      aHi - tail > aLo + head &&
      bHi - tail > bLo + head &&
      a[aHi - tail - 1] === b[bHi - tail - 1]
    )
      tail++;
    const [x0, x1, y0, y1] = [aLo + head, aHi - tail, bLo + head, bHi - tail];
    const middle = x0 === x1 || y0 === y1 ? null : this.#middleSnake(x0, x1, y0, y1, maxD);
    if (middle === false) return false;
    for (let k = 0; k < head; k++) this.#ops.push(SAME);
    if (middle === null) {
      for (let k = x0; k < x1; k++) this.#ops.push(REMOVE);
      for (let k = y0; k < y1; k++) this.#ops.push(ADD);
    } else {
      // Each half's script is no longer than this one's, so its middle snake lies no further out
      // than this one's (`d`): within the bound, and each search's arrays that short.
      // (A half past it would be a fault of this search: the whole answers null, never a part.)
      if (!this.#range(x0, middle.x, y0, middle.y, middle.d)) return false;
      if (!this.#range(middle.x, x1, middle.y, y1, middle.d)) return false;
    }
    for (let k = 0; k < tail; k++) this.#ops.push(SAME);
    return true;
  }

  /**
   * A point on a shortest path through a[x0..x1) × b[y0..y1) (both non-empty, ends differing):
   * where a furthest-reaching forward path and a backward one overlap, searching d steps out
   * from both corners at once (Myers 1986, section 4b), and that d (half the edit distance,
   * rounded up); false when none within `maxD` steps.
   */
  #middleSnake(
    x0: number,
    x1: number,
    y0: number,
    y1: number,
    maxD: number,
  ): { x: number; y: number; d: number } | false {
    const a = this.#a;
    const b = this.#b;
    const n = x1 - x0;
    const m = y1 - y0;
    const limit = Math.min(Math.ceil((n + m) / 2), maxD);
    const offset = limit + 1;
    const size = 2 * limit + 3;
    if (this.#forward.length < size) {
      this.#forward = new Int32Array(size);
      this.#backward = new Int32Array(size);
    }
    // v[offset + k]: how far along a the furthest path on diagonal k (x - y) reached; -1 none.
    const vf = this.#forward.fill(-1, 0, size);
    const vb = this.#backward.fill(-1, 0, size);
    vf[offset + 1] = 0;
    vb[offset + 1] = 0;
    const delta = n - m;
    const odd = (delta & 1) !== 0;
    // Diagonals off the grid at either end are skipped once a path runs past them.
    let kfStart = 0;
    let kfEnd = 0;
    let kbStart = 0;
    let kbEnd = 0;
    for (let d = 0; d <= limit; d++) {
      for (let k = -d + kfStart; k <= d - kfEnd; k += 2) {
        const i = offset + k;
        let x =
          k === -d || (k !== d && (vf[i - 1] as number) < (vf[i + 1] as number))
            ? (vf[i + 1] as number)
            : (vf[i - 1] as number) + 1;
        let y = x - k;
        while (x < n && y < m && a[x0 + x] === b[y0 + y]) {
          x++;
          y++;
        }
        vf[i] = x;
        if (x > n) kfEnd += 2;
        else if (y > m) kfStart += 2;
        else if (odd) {
          const j = offset + delta - k;
          if (j >= 0 && j < size && (vb[j] as number) !== -1 && x >= n - (vb[j] as number))
            return { x: x0 + x, y: y0 + y, d };
        }
      }
      for (let k = -d + kbStart; k <= d - kbEnd; k += 2) {
        const i = offset + k;
        // Backward: x counts from the end of a, y from the end of b.
        let x =
          k === -d || (k !== d && (vb[i - 1] as number) < (vb[i + 1] as number))
            ? (vb[i + 1] as number)
            : (vb[i - 1] as number) + 1;
        let y = x - k;
        while (x < n && y < m && a[x1 - x - 1] === b[y1 - y - 1]) {
          x++;
          y++;
        }
        vb[i] = x;
        if (x > n) kbEnd += 2;
        else if (y > m) kbStart += 2;
        else if (!odd) {
          const j = offset + delta - k;
          if (j >= 0 && j < size && (vf[j] as number) !== -1) {
            const fx = vf[j] as number;
            const fy = fx - (j - offset);
            if (fx >= n - x) return { x: x0 + fx, y: y0 + fy, d };
          }
        }
      }
    }
    return false;
  }
}

/**
 * The rows a page shows: every changed line with up to `context` unchanged lines either side;
 * a longer run of unchanged lines is one `skip` row with its count (a single line is shown, as a
 * row hiding it would take its place).
 */
export function withContext(lines: readonly DiffLine[], context: number): DiffRow[] {
  const near = new Uint8Array(lines.length);
  let last = -Infinity;
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]?.op !== 'same') last = i;
    else if (i - last <= context) near[i] = 1;
  }
  last = Infinity;
  for (let i = lines.length - 1; i >= 0; i--) {
    if (lines[i]?.op !== 'same') last = i;
    else if (last - i <= context) near[i] = 1;
  }
  const rows: DiffRow[] = [];
  for (let i = 0; i < lines.length; ) {
    let run = 0;
    while (i + run < lines.length && lines[i + run]?.op === 'same' && near[i + run] === 0) run++;
    if (run >= 2) {
      rows.push({ op: 'skip', count: run });
      i += run;
    } else {
      rows.push(lines[i] as DiffLine);
      i++;
    }
  }
  return rows;
}
