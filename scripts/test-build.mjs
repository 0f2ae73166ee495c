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
  config.compilerOptions.declaration = false;
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
  if (code === 0) await bundleKysely(root, out);
  return code;
}

/**
 * Kysely's ESM build is some 260 files, loaded by every test file at start (about 85 ms of each
 * file's start-up; one bundled file loads in about 10). The copy gets kysely bundled into one
 * module by esbuild (as the shipped CLI has it, scripts/bundle-cli.mjs), and a `node_modules`
 * beside each folder's sources that holds only it, so every import of `kysely` in the copy —
 * src/, test/, bench/, scripts/ alike — resolves to that one module; every other package resolves
 * on to the checkout's node_modules as before. The links are not followed by the house rules'
 * folder walks, and src/'s own top level stays the wing table.
 */
async function bundleKysely(root, out) {
  const { build } = await import('esbuild');
  const vendor = join(out, '.vendor-modules');
  const pkg = JSON.parse(
    readFileSync(join(root, 'node_modules', 'kysely', 'package.json'), 'utf8'),
  );
  await build({
    entryPoints: [join(root, 'node_modules', 'kysely', 'dist', 'esm', 'index.js')],
    bundle: true,
    format: 'esm',
    platform: 'node',
    outfile: join(vendor, 'kysely', 'index.js'),
    logLevel: 'warning',
  });
  writeFileSync(
    join(vendor, 'kysely', 'package.json'),
    JSON.stringify({
      name: 'kysely',
      version: pkg.version,
      type: 'module',
      exports: { '.': './index.js' },
    }),
  );
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

/** Removes this run's copy. */
export function removeTestBuild(root = process.cwd()) {
  rmSync(join(root, TEST_BUILD), { recursive: true, force: true });
}
