/**
 * @module The files every serious project has are there and agree with package.json: LICENSE is
 * the Apache-2.0 text package.json names and ships in the package, the changelog has an
 * Unreleased section and an entry for the current version, and SECURITY.md supports that
 * version's minor line.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const pkg = JSON.parse(read('package.json')) as { version: string; license: string };

test('LICENSE is the Apache License 2.0 that package.json names', () => {
  assert.equal(pkg.license, 'Apache-2.0');
  const license = read('LICENSE');
  assert.match(license, /^\s*Apache License\s+Version 2\.0, January 2004/);
  assert.match(license, /END OF TERMS AND CONDITIONS/);
});

test('the package ships LICENSE, the changelog and the security policy', async () => {
  // The checkout itself: in the compiled copy the suite runs on, package.json is a link.
  const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json'], {
    cwd: dirname(realpathSync(join(ROOT, 'package.json'))),
    maxBuffer: 64 * 1024 * 1024,
    timeout: 120_000,
  });
  const [packed] = JSON.parse(stdout) as { files: { path: string }[] }[];
  const files = new Set(packed?.files.map((f) => f.path));
  for (const file of ['LICENSE', 'CHANGELOG.md', 'SECURITY.md', 'README.md'])
    assert.ok(files.has(file), `${file} is not in the package`);
});

test('CHANGELOG.md has an Unreleased section and an entry for the current version', () => {
  const changelog = read('CHANGELOG.md');
  assert.match(changelog, /^## \[Unreleased\]$/m);
  const version = pkg.version.replaceAll('.', '\\.');
  assert.match(changelog, new RegExp(`^## \\[${version}\\] - \\d{4}-\\d{2}-\\d{2}$`, 'm'));
});

test("SECURITY.md supports the current version's minor line and says how to report privately", () => {
  const security = read('SECURITY.md');
  const [major, minor] = pkg.version.split('.');
  assert.ok(security.includes(`| ${major}.${minor}.x (latest minor) | yes |`));
  assert.match(security, /^## Reporting a vulnerability$/m);
  assert.match(security, /^## In scope$/m);
});
