/**
 * @module A line diff for reviewers (a four-eyes change page shows a definition against the active
 * version): the longest common subsequence of two texts' lines, as kept, removed and added lines
 * in order. Bounded: past MAX_DIFF_LINES on either side it gives up (`null`), and the page shows
 * both texts whole instead of a diff it could not afford.
 */

export interface DiffLine {
  readonly op: 'same' | 'add' | 'remove';
  readonly text: string;
}

/** Lines per side past which no diff is computed (the table is the product of both sides). */
export const MAX_DIFF_LINES = 3000;

/** The lines of `after` against `before`, or null when either is too long to compare. */
export function lineDiff(before: string, after: string): DiffLine[] | null {
  const a = before.split('\n');
  const b = after.split('\n');
  if (a.length > MAX_DIFF_LINES || b.length > MAX_DIFF_LINES) return null;
  // lcs[i][j]: the common subsequence length of a[i..] and b[j..], one flat row-major table.
  const width = b.length + 1;
  const lcs = new Uint16Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i * width + j] =
        a[i] === b[j]
          ? (lcs[(i + 1) * width + j + 1] ?? 0) + 1
          : Math.max(lcs[(i + 1) * width + j] ?? 0, lcs[i * width + j + 1] ?? 0);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push({ op: 'same', text: a[i] as string });
      i++;
      j++;
    } else if ((lcs[(i + 1) * width + j] ?? 0) >= (lcs[i * width + j + 1] ?? 0)) {
      out.push({ op: 'remove', text: a[i++] as string });
    } else {
      out.push({ op: 'add', text: b[j++] as string });
    }
  }
  while (i < a.length) out.push({ op: 'remove', text: a[i++] as string });
  while (j < b.length) out.push({ op: 'add', text: b[j++] as string });
  return out;
}
