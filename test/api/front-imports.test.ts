/**
 * @module The wings' lint rules, run on probe files with the repository's own biome.json: each
 * wing's rule refuses a wing above or beside it by any relative path, with what to import instead
 * (docs/architecture.md §2). And the fronts (src/edge/rest, src/edge/mcp, src/edge/cli,
 * src/edge/console) import neither the store nor the sandbox, nor credentials internals, today:
 * their import graph, read with the TypeScript parser, including dynamic imports and re-exports.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { MULTI_ROOM, WINGS } from '../support/wings.js';

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

test("each wing's lint rule refuses an import of a wing above it or beside it, with what to do instead", async () => {
  const files: Record<string, string> = {};
  const expected = new Map<string, string | null>();
  for (const [wing, rule] of Object.entries(WINGS)) {
    if (wing === 'index.ts') continue;
    // A probe one room deep (src/edge/rest/…) for a wing of rooms, at the top of the others.
    const at = MULTI_ROOM.has(wing) ? `src/${wing}/probe-room` : `src/${wing}`;
    const up = MULTI_ROOM.has(wing) ? '../../' : '../';
    for (const target of Object.keys(WINGS)) {
      if (target === 'index.ts' || target === wing) continue;
      const path = `${at}/probe-${target}.ts`;
      files[path] = probe(`${up}${target}/index.js`);
      const allowed = target === 'core' || rule.mayImport.includes(target);
      expected.set(path, allowed ? null : rule.instead);
    }
    // Deeper, and through a dynamic import: the same rule.
    if (wing === 'edge') {
      files['src/edge/rest/routes/probe-deep.ts'] = probe('../../../records/store/index.js');
      files['src/edge/mcp/probe-dynamic.ts'] =
        "export async function f() {\n  return import('../../execution/sandbox/index.js');\n}\n";
      expected.set('src/edge/rest/routes/probe-deep.ts', rule.instead);
      expected.set('src/edge/mcp/probe-dynamic.ts', rule.instead);
    }
  }
  const found = new Map<string, string[]>();
  for (const d of await lint(files)) {
    if (d.category !== 'lint/style/noRestrictedImports') continue;
    found.set(d.location.path, [...(found.get(d.location.path) ?? []), d.message]);
  }
  assert.ok(expected.size > 80, 'a probe for every pair of wings');
  for (const [path, instead] of expected) {
    const messages = found.get(path) ?? [];
    if (instead === null) {
      assert.deepEqual(messages, [], `${path} may import what it does`);
    } else {
      assert.equal(messages.length, 1, `${path} is refused`);
      // The message says what to import instead.
      assert.ok(messages[0]?.includes(instead), `${path}: ${messages[0]}`);
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
      const room = target.split(/[\\/]/).slice(0, 2).join('/');
      const credentialInternal =
        room === 'domain/credentials' && target !== join('domain', 'credentials', 'index.js');
      if (room === 'records/store' || room === 'execution/sandbox' || credentialInternal) {
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
