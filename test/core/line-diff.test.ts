/**
 * The reviewers' line diff at the sizes definitions reach (attack round 27 F1: a tool with 1,200
 * input properties was "too long to compare line by line", so a changed `maximum` deep in its
 * schema did not stand out): a few thousand lines, and up to MAX_DIFF_LINES a side, diff with a
 * few changes; only past its edit bound does it give up (null), and the page lists the changed
 * paths instead (json-diff). The result is always a shortest edit script: its kept lines are a
 * longest common subsequence (checked against the plain table on small random texts). No timing
 * is asserted here.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  canonicalJson,
  type DiffLine,
  lineDiff,
  MAX_DIFF_EDITS,
  MAX_DIFF_LINES,
  withContext,
} from '../../src/core/index.js';
import { fc } from '../support/property.js';
import { wideDefinition } from './wide-definition.js';

/** The text reviewers compare: canonical JSON, indented (as the console's change page shows it). */
const textOf = (value: unknown) => JSON.stringify(JSON.parse(canonicalJson(value)), null, 2);

const changedOf = (lines: readonly DiffLine[]) => lines.filter((l) => l.op !== 'same');

/** Both texts read back from a diff: its kept and removed lines, its kept and added lines. */
function sides(lines: readonly DiffLine[]): [string, string] {
  const before = lines.filter((l) => l.op !== 'add').map((l) => l.text);
  const after = lines.filter((l) => l.op !== 'remove').map((l) => l.text);
  return [before.join('\n'), after.join('\n')];
}

/** The length of a longest common subsequence, by the plain quadratic table (small inputs only). */
function lcsLength(a: readonly string[], b: readonly string[]): number {
  let row = new Array<number>(b.length + 1).fill(0);
  for (const x of a) {
    const next = [0];
    for (let j = 0; j < b.length; j++) {
      next.push(x === b[j] ? (row[j] ?? 0) + 1 : Math.max(row[j + 1] ?? 0, next[j] ?? 0));
    }
    row = next;
  }
  return row[b.length] ?? 0;
}

test('a 1,200-property definition with one changed maximum diffs to that one line, removed and added', () => {
  const before = textOf(wideDefinition(1200));
  const after = textOf(wideDefinition(1200, { f0600: 250 }));
  assert.ok(before.split('\n').length > 3000, 'past the old quadratic table’s bound');
  const lines = lineDiff(before, after);
  assert.ok(lines, 'compared');
  assert.deepEqual(changedOf(lines), [
    { op: 'remove', text: '        "maximum": 100,' },
    { op: 'add', text: '        "maximum": 250,' },
  ]);
  assert.deepEqual(sides(lines), [before, after]);
  // The change is found where it is: the lines just above it name the property.
  const at = lines.findIndex((l) => l.op !== 'same');
  assert.equal(lines[at - 1]?.text, '      "f0600": {');
});

test(`up to ${MAX_DIFF_LINES} lines a side, scattered changes, insertions and deletions all diff exactly`, () => {
  const a = Array.from({ length: MAX_DIFF_LINES }, (_, i) => `line ${i}`);
  const b = [...a];
  for (const i of [19_990, 15_000, 10_000, 7_777, 5_000, 2_500, 1, 0]) b[i] = `changed ${i}`;
  b.splice(12_345, 3); // three lines gone
  b.splice(3_000, 0, 'new a', 'new b'); // two lines new
  const lines = lineDiff(a.join('\n'), b.join('\n'));
  assert.ok(lines, 'compared');
  assert.deepEqual(sides(lines), [a.join('\n'), b.join('\n')]);
  const changed = changedOf(lines);
  assert.equal(changed.filter((l) => l.op === 'remove').length, 8 + 3);
  assert.equal(changed.filter((l) => l.op === 'add').length, 8 + 2);
});

test('past the edit bound or the line bound it gives up (null) rather than spend without end', () => {
  const n = MAX_DIFF_LINES;
  const a = Array.from({ length: n }, (_, i) => `old ${i}`).join('\n');
  const b = Array.from({ length: n }, (_, i) => `new ${i}`).join('\n');
  assert.equal(lineDiff(a, b), null, 'every line differs');
  // Just inside the edit bound it still diffs: half the bound in changed lines (each costs two).
  const some = Array.from({ length: n }, (_, i) => `old ${i}`);
  for (let i = 0; i < MAX_DIFF_EDITS / 2; i++) some[i * 7] = `new ${i}`;
  const near = lineDiff(a, some.join('\n'));
  assert.ok(near, 'compared');
  assert.equal(changedOf(near).length, MAX_DIFF_EDITS);
  const long = `${a}\nand one more`;
  assert.equal(lineDiff(long, long), null, `over ${MAX_DIFF_LINES} lines`);
});

test('a small diff is as it was: kept, removed and added lines in order', () => {
  assert.deepEqual(lineDiff('a\nb\nc', 'a\nx\nc'), [
    { op: 'same', text: 'a' },
    { op: 'remove', text: 'b' },
    { op: 'add', text: 'x' },
    { op: 'same', text: 'c' },
  ]);
  assert.deepEqual(lineDiff('same', 'same'), [{ op: 'same', text: 'same' }]);
  assert.deepEqual(lineDiff('', 'x'), [
    { op: 'remove', text: '' },
    { op: 'add', text: 'x' },
  ]);
});

test('the kept lines are always a longest common subsequence, and both texts read back', () => {
  const line = fc.constantFrom('a', 'b', 'c', 'd', '');
  fc.assert(
    fc.property(fc.array(line, { maxLength: 30 }), fc.array(line, { maxLength: 30 }), (a, b) => {
      const lines = lineDiff(a.join('\n'), b.join('\n'));
      assert.ok(lines);
      const [before, after] = sides(lines);
      assert.equal(before, a.join('\n'));
      assert.equal(after, b.join('\n'));
      const kept = lines.filter((l) => l.op === 'same').length;
      assert.equal(kept, lcsLength(a.join('\n').split('\n'), b.join('\n').split('\n')));
    }),
    { numRuns: 300 },
  );
});

test('unchanged runs beyond the context around each change are counted, not shown', () => {
  const a = Array.from({ length: 100 }, (_, i) => `l${i}`);
  const b = [...a];
  b[50] = 'changed';
  const lines = lineDiff(a.join('\n'), b.join('\n'));
  assert.ok(lines);
  const rows = withContext(lines, 3);
  assert.deepEqual(rows, [
    { op: 'skip', count: 47 },
    { op: 'same', text: 'l47' },
    { op: 'same', text: 'l48' },
    { op: 'same', text: 'l49' },
    { op: 'remove', text: 'l50' },
    { op: 'add', text: 'changed' },
    { op: 'same', text: 'l51' },
    { op: 'same', text: 'l52' },
    { op: 'same', text: 'l53' },
    { op: 'skip', count: 46 },
  ]);
  // A run no longer than what it would hide is shown whole (a skip row hides at least two lines).
  const near = lineDiff('a\nb\nc\nd\ne', 'x\nb\nc\nd\ny');
  assert.ok(near);
  assert.equal(
    withContext(near, 1).filter((r) => r.op === 'skip').length,
    0,
    'b, c, d stay: a run of three between changes, context one each side',
  );
});
