/**
 * @module The fronts (src/edge/rest, src/edge/mcp, src/edge/cli, src/edge/console) import neither store/ nor sandbox/, by any path,
 * nor credentials/ internals: the lint rule refuses such an import (run on probe files with the
 * repository's own biome.json), and no front file imports one today (their import graph, read
 * with the TypeScript parser, including dynamic imports and re-exports).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIOME = join(ROOT, 'node_modules', '.bin', 'biome');
const FRONTS = ['src/edge/rest', 'src/edge/mcp', 'src/edge/cli', 'src/edge/console'];

interface Diagnostic {
  readonly category: string;
  readonly message: string;
  readonly location: { readonly path: string };
}

/** Lints files laid out under a scratch copy of the repository's biome.json; never throws. */
async function lint(files: Record<string, string>): Promise<Diagnostic[]> {
  const dir = mkdtempSync(join(tmpdir(), 'tg-front-lint-'));
  try {
    const config = JSON.parse(readFileSync(join(ROOT, 'biome.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    // The scratch folder is no git checkout and has no node_modules: only the VCS integration
    // and the schema hint go; every rule and override is the repository's own.
    delete config.vcs;
    delete config.$schema;
    writeFileSync(join(dir, 'biome.json'), JSON.stringify(config));
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    const stdout = await new Promise<string>((done, fail) => {
      execFile(
        BIOME,
        ['lint', '--reporter=json', ...Object.keys(files)],
        { cwd: dir, timeout: 60_000 },
        (err, out) => {
          // Exit code 1 is "errors found", which is what most probes expect.
          if (err && typeof err.code !== 'number') fail(err);
          else done(out);
        },
      );
    });
    return (JSON.parse(stdout) as { diagnostics: Diagnostic[] }).diagnostics;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const probe = (spec: string) => `import { x } from '${spec}';\n\nexport const y = x;\n`;

test('the lint rule refuses store/, sandbox/ and credentials/ internals in every front, by any path', async () => {
  const refused = [
    '../store/index.js',
    '../store/open-store.js',
    '../store/sqlite/sqlite-append.js',
    '../sandbox/index.js',
    '../sandbox/egress/egress-proxy.js',
    '../credentials/credential-broker.js',
  ];
  const files: Record<string, string> = {};
  for (const front of FRONTS) {
    refused.forEach((spec, i) => {
      files[`${front}/probe-${i}.ts`] = probe(spec);
    });
    // One level deeper (src/edge/rest/routes, src/edge/cli/commands) and through a dynamic import.
    files[`${front}/deeper/probe-store.ts`] = probe('../../store/index.js');
    files[`${front}/deeper/probe-dynamic.ts`] =
      "export async function f() {\n  return import('../../sandbox/index.js');\n}\n";
  }
  // What fronts may import, and the same store import outside the fronts: no finding.
  files['src/edge/cli/allowed-credentials.ts'] = probe('../credentials/index.js');
  files['src/edge/rest/allowed-api.ts'] = probe('../api/index.js');
  files['src/edge/rest/allowed-root.ts'] = probe('../toolgate.js');
  files['src/domain/catalog/elsewhere.ts'] = probe('../store/index.js');

  const found = new Map<string, string[]>();
  for (const d of await lint(files)) {
    if (d.category !== 'lint/style/noRestrictedImports') continue;
    found.set(d.location.path, [...(found.get(d.location.path) ?? []), d.message]);
  }
  for (const path of Object.keys(files)) {
    const messages = found.get(path) ?? [];
    if (path.includes('allowed') || path.startsWith('src/domain/catalog/')) {
      assert.deepEqual(messages, [], `${path} may import what it does`);
    } else {
      assert.equal(messages.length, 1, `${path} is refused`);
      // The message says what to use instead.
      assert.match(messages[0] ?? '', /admin API|agent API/);
    }
  }
});

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sourceFiles(join(dir, e.name))
      : e.name.endsWith('.ts')
        ? [join(dir, e.name)]
        : [],
  );
}

test('no file under src/edge/rest, src/edge/mcp, src/edge/cli or src/edge/console imports store/, sandbox/ or credentials/ internals', () => {
  const files = FRONTS.flatMap((front) => sourceFiles(join(ROOT, front)));
  // The scan covers the command groups and the routes, not just the top folders.
  const names = files.map((f) => relative(ROOT, f));
  assert.ok(names.includes(join('src', 'edge', 'cli', 'commands', 'doctor.ts')));
  assert.ok(names.includes(join('src', 'edge', 'rest', 'routes', 'sessions.ts')));
  assert.ok(names.includes(join('src', 'edge', 'mcp', 'gateway-server.ts')));
  assert.ok(names.includes(join('src', 'edge', 'console', 'register-console.ts')));
  const offending: string[] = [];
  let relativeImports = 0;
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith('.')) continue;
      relativeImports += 1;
      const target = relative(join(ROOT, 'src'), resolve(dirname(file), fileName));
      const [top] = target.split(/[\\/]/);
      const credentialInternal =
        top === 'credentials' && target !== join('credentials', 'index.js');
      if (top === 'store' || top === 'sandbox' || credentialInternal) {
        offending.push(`${relative(ROOT, file)} imports ${fileName}`);
      }
    }
  }
  assert.ok(relativeImports > 100, 'the parser found the fronts’ imports');
  assert.deepEqual(offending, []);
});

test('the console imports api/, operators/, core/ and other services only through their public index', () => {
  const files = sourceFiles(join(ROOT, 'src', 'edge', 'console'));
  assert.ok(files.length >= 5);
  const offending: string[] = [];
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const target = relative(join(ROOT, 'src'), resolve(dirname(file), fileName));
      // A wing's room (edge/console, domain/operators) or a single-room wing (api, core).
      const parts = target.split(/[\\/]/);
      const room = (
        ['api', 'core'].includes(parts[0] ?? '') ? parts.slice(0, 1) : parts.slice(0, 2)
      ).join('/');
      // Its own folder, the facades, operators and core freely; a service's types and pure
      // helpers (the audit proof checks) only through that service's index, never its internals.
      const free = ['edge/console', 'api', 'domain/operators', 'core'].includes(room);
      const viaIndex =
        ['records/audit', 'domain/catalog', 'domain/sessions'].includes(room) &&
        target === join(room, 'index.js');
      if (!free && !viaIndex) offending.push(`${relative(ROOT, file)} imports ${fileName}`);
    }
  }
  assert.deepEqual(offending, []);
});
