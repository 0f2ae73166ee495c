/**
 * The built command is one bundle (scripts/bundle-cli.mjs: main.js and its chunks): it imports none of tsc's modules
 * and none of the packages bundled into it, only node's own modules and the packages left outside
 * (native, WebAssembly, workers and assets), and it runs from there (its version from package.json).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { ensureBuilt, MAIN, ROOT } from '../support/cli.js';

test('dist/edge/cli/main.js is one file holding tsc’s modules and the pure packages', () => {
  ensureBuilt();
  // The entry and its chunks (scripts/bundle-cli.mjs splits what a command loads only when run).
  const folder = dirname(MAIN);
  const text = [
    MAIN,
    ...readdirSync(folder)
      .filter((f) => f.startsWith('chunk-'))
      .map((f) => join(folder, f)),
  ]
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n');
  const imported = [
    ...text.matchAll(/^import\s[^'"]*?from\s*["']([^"']+)["']|^import\s*["']([^"']+)["']/gm),
  ].map((m) => m[1] ?? m[2]);
  assert.ok(imported.length > 0, 'the bundle imports what stays outside it');
  assert.deepEqual(
    imported.filter((s) => s?.startsWith('.') && !/^\.\/chunk-[A-Z0-9]+\.js$/.test(s)),
    [],
    'no module of dist/ is imported, only the bundle’s own chunks beside it',
  );
  for (const inlined of ['kysely', 'yaml', 'commander', 'zod', '@modelcontextprotocol/sdk']) {
    assert.ok(
      !imported.some((s) => s === inlined || s?.startsWith(`${inlined}/`)),
      `${inlined} is bundled, not imported`,
    );
  }
  assert.ok(imported.includes('better-sqlite3'), 'a native package stays outside');
  const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;
  assert.equal(
    execFileSync(process.execPath, [MAIN, '--version'], { encoding: 'utf8' }).trim(),
    version,
  );
});
