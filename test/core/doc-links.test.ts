/**
 * @module The documents lead somewhere real: every relative link in README.md and docs/*.md points
 * at a file that exists (and, into a Markdown file, at a heading it has), and every repository
 * path a document names in its text (`src/…`, `docs/…`, `test/…`, `scripts/…`, `bench/…`,
 * `demo/…`, `examples/…`) exists. docs/architecture.md is checked here too, beside its own test.
 * Every test docs/security-model.md names for an invariant exists, by file and by name.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** README.md and every Markdown page under docs/, repository-relative. */
function documents(): string[] {
  const pages = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
  return ['README.md', ...pages.sort()];
}

/** The text outside fenced code blocks, line numbers kept (fenced lines are blanked). */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').map((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line;
  });
}

/** A heading's anchor as GitHub spells it: lower case, punctuation dropped, spaces as dashes. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(file: string): Set<string> {
  const out = new Set<string>();
  for (const line of prose(readFileSync(file, 'utf8'))) {
    const m = /^#{1,6} (.+)$/.exec(line);
    if (m?.[1]) out.add(slug(m[1]));
  }
  return out;
}

const LINK = /\]\(([^)\s]*)\)/g;
// A repository path in running text or code spans: not part of a URL or of a longer path.
const PATH = /(?<![\w./-])((?:src|docs|test|scripts|bench|demo|examples)\/[\w./-]*[\w/])/g;

/** What a document links to or names that does not exist, as "file:line: what". */
function brokenReferences(doc: string, text = readFileSync(join(ROOT, doc), 'utf8')): string[] {
  const found: string[] = [];
  const lines = text.split('\n');
  const here = dirname(join(ROOT, doc));
  lines.forEach((line, i) => {
    const where = `${doc}:${i + 1}`;
    for (const m of line.matchAll(LINK)) {
      const target = m[1] ?? '';
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      const [path = '', fragment] = target.split('#');
      const file = path === '' ? join(ROOT, doc) : normalize(join(here, path));
      if (!existsSync(file)) {
        found.push(`${where}: link to ${target} (no such file)`);
        continue;
      }
      if (fragment !== undefined && file.endsWith('.md') && !anchorsOf(file).has(fragment))
        found.push(`${where}: link to ${target} (${relative(ROOT, file)} has no such heading)`);
    }
    for (const m of line.matchAll(PATH)) {
      const path = m[1] ?? '';
      if (!existsSync(join(ROOT, path))) found.push(`${where}: names ${path} (no such file)`);
    }
  });
  return found;
}

test('every link and repository path in README.md and docs/*.md exists', () => {
  const docs = documents();
  assert.ok(docs.includes('docs/architecture.md') && docs.length > 10, 'the pages are found');
  const named = docs
    .map((doc) => readFileSync(join(ROOT, doc), 'utf8'))
    .reduce((n, text) => n + [...text.matchAll(LINK)].length + [...text.matchAll(PATH)].length, 0);
  assert.ok(named > 100, `only ${named} links and paths found: the scan is broken`);
  const found = docs.flatMap((doc) => brokenReferences(doc));
  assert.deepEqual(found, [], `fix or remove these references:\n${found.join('\n')}`);
});

test('README links every concept page under docs/', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const missing = documents()
    .filter((doc) => doc !== 'README.md')
    .filter((doc) => !readme.includes(`](${doc})`));
  assert.deepEqual(missing, [], 'README "Where to read next" should link each page');
});

test('the checker finds a missing file, a missing heading and a missing path', () => {
  assert.equal(
    slug("An agent's call through the gate (the support-desk story)"),
    'an-agents-call-through-the-gate-the-support-desk-story',
  );
  const sample = [
    '[fine](docs/policies.md#runs-budgets-and-ceilings) and `src/host/toolgate.ts`',
    '[gone](docs/nope.md)',
    '[no heading](docs/policies.md#no-such-heading)',
    'see `src/nope/gone.ts`, and https://example.com/docs/x is a URL',
  ].join('\n');
  assert.deepEqual(brokenReferences('README.md', sample), [
    'README.md:2: link to docs/nope.md (no such file)',
    'README.md:2: names docs/nope.md (no such file)',
    'README.md:3: link to docs/policies.md#no-such-heading (docs/policies.md has no such heading)',
    'README.md:4: names src/nope/gone.ts (no such file)',
  ]);
});

/** A test file named in backticks, then the names of its tests in quotes: `f` ("a", "b…"). */
const PINNED = /`(test\/[\w./-]+\.test\.ts)`\s*\(((?:"[^"]+"(?:,\s*)?)+)\)/g;

/** Every test docs/security-model.md's invariants name that its file does not hold. */
function missingPinnedTests(text: string): string[] {
  const start = text.indexOf('## One operator authority');
  const end = text.indexOf('\n## ', start + 1);
  const section = text
    .slice(start, end < 0 ? undefined : end)
    .split('\n')
    .map((line) => line.trim())
    .join(' ');
  const missing: string[] = [];
  for (const m of section.matchAll(PINNED)) {
    const file = m[1] ?? '';
    const source = existsSync(join(ROOT, file)) ? readFileSync(join(ROOT, file), 'utf8') : '';
    for (const quoted of (m[2] ?? '').matchAll(/"([^"]+)"/g)) {
      // A name that ends in "…" is the start of the test's name.
      const name = (quoted[1] ?? '').replace(/…$/, '');
      if (!source.includes(name)) missing.push(`${file}: "${quoted[1]}"`);
    }
  }
  return missing;
}

test('every test docs/security-model.md names for an invariant exists, by file and name', () => {
  const text = readFileSync(join(ROOT, 'docs', 'security-model.md'), 'utf8');
  const named = [...text.matchAll(PINNED)].length;
  assert.ok(named >= 10, `only ${named} pinned tests found: the scan is broken`);
  const missing = missingPinnedTests(text);
  assert.deepEqual(
    missing,
    [],
    `docs/security-model.md names tests that do not exist:\n${missing.join('\n')}`,
  );
  assert.deepEqual(
    missingPinnedTests(
      '## One operator authority\n`test/core/house-rules.test.ts` ("no such test")',
    ),
    ['test/core/house-rules.test.ts: "no such test"'],
  );
});
