/**
 * @module The compiled copy the test run executes: `.test-build/<pid>/` holds src/, test/, bench/ and
 * scripts/ copied with their times, every other entry of the checkout linked, and tsc's JavaScript
 * beside each TypeScript file (the type check of tsconfig.json, emitting). A test file then starts
 * on plain node instead of through tsx's loader, about half of each file's start-up, with every
 * path it computes from its own location (fixtures, demo/, docs/, dist/, the sources the house
 * rules read) the same as in the checkout.
 */
import { spawn } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';

const TEST_BUILDS = '.test-build';
/** This run's copy: one per run, so two runs in one checkout never share one. */
export const TEST_BUILD = join(TEST_BUILDS, String(process.pid));
const COPIED = new Set(['src', 'test', 'bench', 'scripts']);
/** Where in the copy tsc writes the declarations (`<this>/src/…d.ts`). */
const DECLARATIONS = '.declarations';
const SKIPPED = new Set(['.git', TEST_BUILDS]);

/** Makes this run's copy afresh and compiles it; resolves to tsc's exit code. */
export async function makeTestBuild(root = process.cwd()) {
  const out = join(root, TEST_BUILD);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  // dist/ is linked even while the build beside this copy has removed it (`rm -rf dist` first):
  // a copy without the link would make each CLI test build its own dist/ at once.
  const entries = new Set([...readdirSync(root), 'dist']);
  for (const entry of entries) {
    if (SKIPPED.has(entry)) continue;
    if (COPIED.has(entry)) {
      cpSync(join(root, entry), join(out, entry), { recursive: true, preserveTimestamps: true });
    } else {
      symlinkSync(resolve(root, entry), join(out, entry));
    }
  }
  // tsconfig.json's options, emitting beside each source instead of into its outDir.
  const config = JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8'));
  delete config.compilerOptions.outDir;
  // Declarations too, in a folder of their own (the house rules read the copy's src/): dist/ is
  // assembled from this copy in a checked run (distFromTestBuild).
  config.compilerOptions.declaration = true;
  config.compilerOptions.declarationDir = DECLARATIONS;
  config.compilerOptions.sourceMap = false;
  writeFileSync(join(out, 'tsconfig.test-build.json'), JSON.stringify(config));
  const code = await new Promise((done) => {
    const tsc = spawn(
      process.execPath,
      [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.test-build.json'],
      { cwd: out, stdio: 'inherit' },
    );
    tsc.on('exit', (exit) => done(exit ?? 1));
  });
  if (code === 0) await bundleVendored(root, out);
  return code;
}

/**
 * Packages every test file loads at start, each hundreds of small modules (kysely's ESM build some
 * 260 files, ajv with its formats 95, prom-client with the OpenTelemetry API it requires 88, yaml
 * 72, semver 47, jose 46, pg 35): about a third of each file's start-up went into loading them.
 * The copy gets each bundled into one module by esbuild (as the shipped CLI has them,
 * scripts/bundle-cli.mjs) in `.vendor-modules`, and a `node_modules` beside each folder's sources
 * that holds only those, so every import of them in the copy — src/, test/, bench/, scripts/
 * alike — resolves to that one module; every other package (and a package's own imports) resolves
 * on to the checkout's node_modules as before. The links are not followed by the house rules'
 * folder walks, and src/'s own top level stays the wing table.
 *
 * `esm` packages keep their ES module exports. A CommonJS package is bundled as CommonJS
 * (`.bundles/<group>.cjs`), required (an import would have Node lex the whole bundle) by an ES
 * module that exports its `module.exports` as the default and its plain-value properties by name,
 * as Node's own CommonJS import does. Packages of one `group` are
 * bundled together, so a plugin and the package it extends (ajv-formats and ajv) share one copy.
 * `subpaths` are the entry points besides the main one that the sources import.
 */
const VENDORED = [
  { name: 'kysely', esm: 'dist/esm/index.js' },
  { name: 'jose', esm: 'dist/webapi/index.js' },
  { name: 'yaml' },
  { name: 'semver' },
  { name: 'prom-client' },
  { name: 'pg' },
  { name: 'ajv', group: 'ajv', subpaths: { './dist/2020.js': 'dist/2020.js' } },
  { name: 'ajv-formats', group: 'ajv' },
];

async function bundleVendored(root, out) {
  const { build } = await import('esbuild');
  const { createRequire } = await import('node:module');
  const requireReal = createRequire(join(root, 'package.json'));
  const vendor = join(out, '.vendor-modules');
  const write = (file, text) => {
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, text);
  };
  const versionOf = (name) =>
    JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')).version;

  for (const pkg of VENDORED.filter((p) => p.esm)) {
    await build({
      entryPoints: [join(root, 'node_modules', pkg.name, pkg.esm)],
      bundle: true,
      format: 'esm',
      platform: 'node',
      outfile: join(vendor, pkg.name, 'index.js'),
      logLevel: 'warning',
    });
    write(
      join(vendor, pkg.name, 'package.json'),
      JSON.stringify({
        name: pkg.name,
        version: versionOf(pkg.name),
        type: 'module',
        exports: { '.': './index.js' },
      }),
    );
  }

  // CommonJS packages: one bundle per group, each entry point a key of its exports.
  const groups = new Map();
  for (const pkg of VENDORED.filter((p) => !p.esm)) {
    const group = pkg.group ?? pkg.name;
    const entries = groups.get(group) ?? [];
    entries.push({ pkg, key: '.', specifier: pkg.name });
    for (const [key, file] of Object.entries(pkg.subpaths ?? {})) {
      entries.push({ pkg, key, specifier: `${pkg.name}/${file}` });
    }
    groups.set(group, entries);
  }
  for (const [group, entries] of groups) {
    const bundle = join(vendor, '.bundles', `${group}.cjs`);
    const entry = entries
      .map(
        (e, i) => `exports[${i}] = require(${JSON.stringify(requireReal.resolve(e.specifier))});`,
      )
      .join('\n');
    await build({
      stdin: { contents: entry, resolveDir: root, loader: 'js' },
      bundle: true,
      format: 'cjs',
      platform: 'node',
      outfile: bundle,
      logLevel: 'warning',
    });
    const exportsOf = new Map();
    for (const [i, e] of entries.entries()) {
      // The names Node would find on the real module: its plain-value properties (a getter, such
      // as pg's `native`, is left to the default export, where reading it does what it did).
      const real = requireReal(e.specifier);
      const names = Object.entries(Object.getOwnPropertyDescriptors(real))
        .filter(([n, d]) => 'value' in d && n !== 'default' && /^[A-Za-z_$][\w$]*$/.test(n))
        .map(([n]) => n);
      const file = e.key === '.' ? 'index.js' : `${e.key.slice(2).replace(/\//g, '_')}`;
      const lines = [
        // Required, not imported: an import of CommonJS would have Node lex the whole bundle for
        // export names (about 80 ms of every test file's start).
        "import { createRequire } from 'node:module';",
        `const m = createRequire(import.meta.url)('../.bundles/${group}.cjs')[${i}];`,
        'export default m;',
        ...(names.length > 0 ? [`export const { ${names.join(', ')} } = m;`] : []),
      ];
      write(join(vendor, e.pkg.name, file), `${lines.join('\n')}\n`);
      const map = exportsOf.get(e.pkg.name) ?? {};
      map[e.key] = `./${file}`;
      exportsOf.set(e.pkg.name, map);
    }
    for (const [name, exports] of exportsOf) {
      write(
        join(vendor, name, 'package.json'),
        JSON.stringify({ name, version: versionOf(name), type: 'module', exports }),
      );
    }
  }

  const folders = [
    ...readdirSync(join(out, 'src'), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => join('src', e.name)),
    'test',
    'bench',
    'scripts',
  ];
  for (const folder of folders) {
    symlinkSync(resolve(vendor), join(out, folder, 'node_modules'));
  }
}

/**
 * dist/ as `npm run build` makes it, from this copy instead of a second compiler over the same
 * sources: tsc's JavaScript and declarations of the copy's src/, then the CLI bundled
 * (scripts/bundle-cli.mjs). Only the source maps are left out. A checked run (`npm test`) thus
 * type-checks and compiles once; resolves to the exit code.
 */
export async function distFromTestBuild(root = process.cwd()) {
  const dist = join(root, 'dist');
  rmSync(dist, { recursive: true, force: true });
  const copy = (dir, rel, kind) => {
    for (const entry of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const path = join(rel, entry.name);
      if (entry.isDirectory()) copy(dir, path, kind);
      else if (entry.isFile() && kind.test(entry.name)) {
        mkdirSync(join(dist, rel), { recursive: true });
        cpSync(join(dir, path), join(dist, path));
      }
    }
  };
  copy(join(root, TEST_BUILD, 'src'), '', /\.js$/);
  copy(join(root, TEST_BUILD, DECLARATIONS, 'src'), '', /\.d\.ts$/);
  const code = await new Promise((done) => {
    const bundle = spawn(process.execPath, [join(root, 'scripts', 'bundle-cli.mjs')], {
      cwd: root,
      stdio: 'inherit',
    });
    bundle.on('exit', (exit) => done(exit ?? 1));
  });
  if (code === 0) chmodSync(join(dist, 'edge', 'cli', 'main.js'), 0o755);
  return code;
}

/** Removes this run's copy. */
export function removeTestBuild(root = process.cwd()) {
  rmSync(join(root, TEST_BUILD), { recursive: true, force: true });
}
