/**
 * @module The repository explains itself: no source file, document or test cites a document a
 * reader of the repository does not have (a design file or style guide kept elsewhere, a sibling
 * folder, an issue tracker's numbers). Comments cite docs/architecture.md by section instead.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

// Spelled in pieces so that this file does not match its own patterns.
const OUTSIDE: readonly { name: string; pattern: RegExp }[] = [
  { name: 'the design file', pattern: new RegExp(`\\b${'DESIGN'}(?:\\.md\\b| §| C\\d)`) },
  { name: 'the style guide', pattern: new RegExp(`\\b${'STYLE'}\\.md\\b`) },
  { name: 'a folder beside the repository', pattern: new RegExp(`\\.\\./${'shared'}\\b`) },
  { name: 'an issue number', pattern: new RegExp(`\\b${'issue'} #?\\d+`, 'i') },
];

/** Every file under the repository's own folders, and README.md, as repository-relative paths. */
function files(): string[] {
  const out = ['README.md'];
  for (const folder of ['src', 'docs', 'test', 'bench', 'demo', 'examples', 'scripts', 'deploy']) {
    for (const entry of readdirSync(join(ROOT, folder), { recursive: true, withFileTypes: true })) {
      if (entry.isFile()) out.push(relative(ROOT, join(entry.parentPath, entry.name)));
    }
  }
  return out.sort();
}

/** What a file cites from outside, as "line N: <which> (<text>)"; empty when it cites nothing. */
function outsideReferences(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  if (text.includes('\u0000')) return [];
  const found: string[] = [];
  text.split('\n').forEach((line, i) => {
    for (const { name, pattern } of OUTSIDE) {
      const m = pattern.exec(line);
      if (m) found.push(`${file}:${i + 1}: ${name} (${m[0]})`);
    }
  });
  return found;
}

test('no file in src/, docs/, test/, bench/, demo/, examples/, scripts/, deploy/ or README.md cites a document outside the repository', () => {
  const found = files().flatMap(outsideReferences);
  assert.deepEqual(found, [], `cite docs/architecture.md §N instead:\n${found.join('\n')}`);
});

test('the patterns find what they are meant to find', () => {
  const samples = [
    `see ${'DESIGN'}.md §1`,
    `(${'DESIGN'} C2)`,
    `per ${'STYLE'}.md habit 6`,
    `../${'shared'}/notes`,
    `(${'issue'} 11 point 3)`,
  ];
  for (const sample of samples)
    assert.ok(
      OUTSIDE.some(({ pattern }) => pattern.test(sample)),
      `no pattern matches "${sample}"`,
    );
  // Words that only look alike are not references.
  for (const sample of ['github.create_issue', 'IssuedKey', 'docs/architecture.md §3', 'C13'])
    assert.ok(!OUTSIDE.some(({ pattern }) => pattern.test(sample)), `"${sample}" matched`);
});
