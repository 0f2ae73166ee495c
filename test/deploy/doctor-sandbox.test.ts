/**
 * `toolgate doctor --sandbox DRIVER` (or TOOLGATE_SANDBOX): the report says which drivers work,
 * and the exit code says whether the one a deployment relies on does, so a container's or a
 * unit's start check can run it. No database is opened.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { cleanEnv, ensureBuilt, MAIN } from '../support/cli.js';

function doctor(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) =>
    execFile(process.execPath, [MAIN, ...args], { env }, (err, stdout, stderr) =>
      done({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

test('doctor --sandbox exits 0 when that driver works here and says so; an unknown driver is a usage error', async () => {
  ensureBuilt();
  const works = await doctor(['--json', 'doctor', '--sandbox', 'namespace'], cleanEnv());
  assert.equal(works.code, 0, works.stderr);
  assert.deepEqual(JSON.parse(works.stdout).configured, { driver: 'namespace', available: true });

  // A driver missing here is the image test's case (test/deploy/image.test.ts): the drivers
  // look in the system folders too, so a narrowed PATH cannot hide them on this host.
  const report = await doctor(['doctor'], cleanEnv());
  assert.equal(report.code, 0, report.stderr);
  assert.match(report.stdout, /namespace\s+works/);
  const unknown = await doctor(['doctor', '--sandbox', 'chroot'], cleanEnv());
  assert.notEqual(unknown.code, 0);
  assert.match(unknown.stderr, /chroot/);
});
