/** @module Running the built `toolgate` CLI in tests: build once if stale, then real child processes. */
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const MAIN = join(ROOT, 'dist', 'edge', 'cli', 'main.js');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    // Sources only: the compiled copy a test run executes (scripts/test-build.mjs) holds tsc's
    // JavaScript beside them, newer than dist/ but built from the same sources.
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

const fresh = (): boolean =>
  existsSync(MAIN) && statSync(MAIN).mtimeMs >= newestMtime(join(ROOT, 'src'));

/** Blocks this thread for `ms` (a test file's setup waiting for another file's build). */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Builds dist/ once if it is missing or older than any source file. Test files run side by side:
 * one builds while the others wait for its lock (a folder beside dist/, made atomically), then
 * find the build fresh — two builds at once would each remove the other's dist/.
 */
export function ensureBuilt(): void {
  const lock = join(ROOT, '.dist-build-lock');
  if (fresh() && !existsSync(lock)) return;
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`${lock} was held for 5 minutes: remove it`);
      // Not fresh() here: while another file builds, dist/ can look fresh (tsc wrote main.js)
      // before its bundle and workers are written. The lock is released when they are.
      pause(200);
    }
  }
  try {
    if (fresh()) return;
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'pipe' });
  } catch (err) {
    const out = err as { stdout?: Buffer; stderr?: Buffer };
    throw new Error(`npm run build failed:\n${out.stdout ?? ''}${out.stderr ?? ''}`);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** The environment of the test run without any TOOLGATE_* setting that would steer the CLI. */
export function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(env)) if (key.startsWith('TOOLGATE_')) delete env[key];
  return env;
}

/** The CLI pointed at a test folder: its database `tg.db` and its data folder `data`. */
export function folderArgs(dir: string): string[] {
  return [MAIN, '--db', `sqlite:${join(dir, 'tg.db')}`, '--data-dir', join(dir, 'data')];
}

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs the CLI on a test folder to completion; never rejects (the exit code is in the result).
 * `env` adds settings, e.g. TOOLGATE_TOKEN to act as an operator.
 */
export function runCli(
  dir: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...folderArgs(dir), ...args],
      { cwd: dir, env: { ...cleanEnv(), ...env } },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** `serve --demo` on a test folder, on a free loopback port; `extra` goes after `serve`. */
export function spawnServe(
  dir: string,
  extra: readonly string[] = [],
  env: NodeJS.ProcessEnv = {},
): ChildProcess {
  return spawn(process.execPath, [...folderArgs(dir), 'serve', '--demo', '--port', '0', ...extra], {
    cwd: dir,
    env: { ...cleanEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/**
 * The base URL a `serve` child prints once it listens; rejects after 120 s with what it printed
 * (bounded, with room for a host loaded by other test runs).
 */
export function listeningUrl(server: ChildProcess): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${out}`)), 120_000);
    server.stderr?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    server.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m?.[1] && out.includes('try:')) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
  });
}
