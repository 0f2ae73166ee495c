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
  return new Promise((done) => {
    const tsc = spawn(
      process.execPath,
      [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.test-build.json'],
      { cwd: out, stdio: 'inherit' },
    );
    tsc.on('exit', (code) => done(code ?? 1));
  });
}

/** Removes this run's copy. */
export function removeTestBuild(root = process.cwd()) {
  rmSync(join(root, TEST_BUILD), { recursive: true, force: true });
}
