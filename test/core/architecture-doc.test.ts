/**
 * @module docs/architecture.md is the document code comments cite by section: its numbered
 * sections are fixed, and every `docs/architecture.md §N` in the repository names one of them.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOC = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');

/** The sections comments cite; renumbering one breaks every citation, so they never move. */
const SECTIONS = [
  'The path of one call',
  'Folders and what each may import',
  "The gate's step list",
  'The runtime port',
  'The store and its slots',
  'Fronts: agent API and admin API',
  'Errors',
  'Capabilities C1–C20',
];

test('docs/architecture.md has exactly its eight numbered sections, in order', () => {
  const headings = [...DOC.matchAll(/^## (\d+)\. (.+)$/gm)].map((m) => `${m[1]}. ${m[2]}`);
  assert.deepEqual(
    headings,
    SECTIONS.map((title, i) => `${i + 1}. ${title}`),
  );
});

test('every capability C1–C20 has its paragraph in §8', () => {
  const s8 = DOC.slice(DOC.indexOf('## 8. '));
  for (let n = 1; n <= 20; n += 1)
    assert.match(s8, new RegExp(`^\\*\\*C${n} `, 'm'), `C${n} has no paragraph in §8`);
});

test('every citation of docs/architecture.md names a section it has', () => {
  const cited: string[] = [];
  for (const folder of ['src', 'test', 'docs', 'bench', 'demo']) {
    for (const entry of readdirSync(join(ROOT, folder), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const path = join(entry.parentPath, entry.name);
      const text = readFileSync(path, 'utf8');
      for (const m of text.matchAll(/architecture\.md §(\d+)/g)) {
        const n = Number(m[1]);
        cited.push(`${relative(ROOT, path)} §${n}`);
        assert.ok(n >= 1 && n <= SECTIONS.length, `${relative(ROOT, path)} cites §${n}`);
      }
    }
  }
  assert.ok(cited.length > 0, 'no citation found: the scan is broken');
});
