/**
 * The import graph of src/ has no cycle, type-only imports included (docs/architecture.md §2): a
 * folder's dependencies can be read from the folder table, and a file can be understood without
 * the files that import it.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { cycles } from '../support/cycles.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SRC = join(ROOT, 'src');
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'(\.[^']+)'/g;

/** Each src/ file's relative imports, as repository-relative paths of .ts files. */
function graph(): Map<string, string[]> {
  const g = new Map<string, string[]>();
  for (const entry of readdirSync(SRC, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const file = join(entry.parentPath, entry.name);
    const text = readFileSync(file, 'utf8');
    const deps = [...text.matchAll(IMPORT)].map((m) =>
      relative(ROOT, normalize(join(dirname(file), (m[1] as string).replace(/\.js$/, '.ts')))),
    );
    g.set(relative(ROOT, file), deps);
  }
  return g;
}

test('no two files of src/ import each other, directly or through others', () => {
  const g = graph();
  assert.ok(g.size > 100, 'the scan found the source files');
  assert.deepEqual(cycles(g), []);
});

test('the cycle finder finds a cycle', () => {
  const g = new Map([
    ['a.ts', ['b.ts']],
    ['b.ts', ['c.ts']],
    ['c.ts', ['a.ts']],
    ['d.ts', ['a.ts']],
  ]);
  assert.deepEqual(cycles(g), [['a.ts', 'b.ts', 'c.ts']]);
});
