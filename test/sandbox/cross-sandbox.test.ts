/**
 * @module One sandbox cannot reach another's files through the host: a process-driver run (which
 * sees the host filesystem) finds a concurrent namespace run's scratch mount and staged binds in
 * the mount table, but may neither read nor plant anything there; and its own scratch and
 * /dev/shm are private to its run, so the host's /dev/shm stays untouched.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import {
  NamespaceRunner,
  ProcessRunner,
  type SandboxProcess,
} from '../../src/execution/sandbox/index.js';
import { LIMITS } from './drivers.js';

const SECRET = 'cross-sandbox-secret-7c1f';

/** This test's own namespace run's scratch mount: the one whose /tmp holds the secret. */
function holderScratch(): string {
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((m) => m.startsWith('/tmp/toolgate-ns-'));
  for (const m of mounts) {
    try {
      if (readFileSync(join(m, 'tmp', 'secret'), 'utf8').includes(SECRET)) return m;
    } catch {
      // another run's scratch, or not one
    }
  }
  throw new Error('the namespace run has no scratch mount with the secret');
}

describe('sandboxes are apart from each other on the host', { concurrency: 1 }, () => {
  const dirs: string[] = [];
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  test("a process-driver run can neither read nor plant files in a namespace run's scratch or staged binds", async () => {
    // A script in a folder nobody may enter, so the namespace driver stages it under /run/toolgate.
    const hidden = mkdtempSync(join(tmpdir(), 'toolgate-cross-'));
    dirs.push(hidden);
    const script = join(hidden, 'tool.sh');
    writeFileSync(
      script,
      `echo ${SECRET} > /tmp/secret; echo ${SECRET} > /dev/shm/secret; echo ready; cat >/dev/null\n`,
      { mode: 0o644 },
    );
    const holder: SandboxProcess = await new NamespaceRunner().start({
      argv: ['/bin/sh', script],
      limits: { ...LIMITS, wall_time_ms: 20_000 },
      binds: [{ source: script, target: script }],
    });
    try {
      await new Promise<void>((resolve, reject) => {
        holder.stdout.once('data', () => resolve());
        void holder.exited.then((o) => reject(new Error(`holder ended: ${o.kind}`)));
      });
      // Only this test's own run is probed (other sandboxes on the host are left alone).
      const scratch = holderScratch();
      const staged = readdirSync(`/run/toolgate/binds/${process.pid}`).map((n) =>
        join(`/run/toolgate/binds/${process.pid}`, n),
      );
      assert.ok(staged.length > 0, 'the script was not staged');
      const out = await new ProcessRunner().run({
        argv: [
          'sh',
          '-c',
          'grep -qF " $1 " /proc/self/mountinfo && echo "sees $1"; ' +
            'for m in "$@"; do cat "$m" "$m"/tmp/secret "$m"/shm/secret 2>/dev/null; ' +
            'for p in "$m"/tmp/planted "$m"/planted; do (echo x > "$p") 2>/dev/null && echo "PLANTED $p"; done; ' +
            'done; echo done',
          'sh',
          scratch,
          ...staged,
        ],
        limits: LIMITS,
      });
      assert.equal(out.kind, 'ok', out.stderr);
      // The run did look: the namespace run's scratch is in the mount table it sees.
      assert.ok(out.stdout.startsWith(`sees ${scratch}\n`), out.stdout);
      assert.ok(!out.stdout.includes(SECRET), out.stdout);
      assert.ok(!out.stdout.includes('PLANTED'), out.stdout);
      assert.ok(out.stdout.endsWith('done\n'));
    } finally {
      await holder.close();
    }
  });

  test("a process-driver run's /dev/shm and scratch are its own: the host's /dev/shm stays untouched", async () => {
    const out = await new ProcessRunner().run({
      argv: [
        'sh',
        '-c',
        `echo ${SECRET} > /dev/shm/toolgate-cross-from-run && echo ${SECRET} > ./note && cat /dev/shm/toolgate-cross-from-run`,
      ],
      limits: LIMITS,
    });
    const onHost = readdirSync('/dev/shm').includes('toolgate-cross-from-run');
    rmSync('/dev/shm/toolgate-cross-from-run', { force: true });
    assert.equal(out.kind, 'ok', out.stderr);
    assert.equal(out.stdout, `${SECRET}\n`);
    assert.ok(!onHost, "written to the host's /dev/shm");
  });
});
