/**
 * bubblewrap runs as the host's nobody when toolgate is root, and resolves bind sources as that
 * user: a tool under a folder nobody may not search (a `mktemp -d` folder, /root/…) could not be
 * bound. Such sources are staged by root first. Here: a script and a workspace under a 0700 folder
 * run and read in the namespace sandbox; the staged mount is unguessable and its folder not
 * listable; sources nobody can reach are used as they are.
 */
import assert from 'node:assert/strict';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { NamespaceRunner } from '../../src/execution/sandbox/index.js';
import {
  reachableBinds,
  reachableByNobody,
} from '../../src/execution/sandbox/namespace/bind-staging.js';
import { LIMITS } from './drivers.js';

const root = typeof process.getuid === 'function' && process.getuid() === 0;
const skip = root
  ? false
  : 'bwrap runs as the invoking user when toolgate is not root: nothing to stage';

const dir = mkdtempSync(join(tmpdir(), 'toolgate-staging-'));
chmodSync(dir, 0o700);
after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }));

test('a folder nobody may not search makes its contents unreachable; /usr is reachable', () => {
  assert.equal(reachableByNobody(join(dir, 'x')), false);
  assert.equal(reachableByNobody('/usr/bin/env'), true);
});

test('a script and a workspace under a 0700 folder run in the namespace sandbox', {
  skip,
}, async () => {
  const script = join(dir, 'tool.mjs');
  const workspace = join(dir, 'ws');
  mkdirSync(workspace, { mode: 0o755 });
  writeFileSync(join(workspace, 'note.txt'), 'hello from the workspace', { mode: 0o644 });
  writeFileSync(
    script,
    "import { readFileSync } from 'node:fs';\nprocess.stdout.write(JSON.stringify({ text: readFileSync(process.argv[2], 'utf8') }));\n",
    { mode: 0o644 },
  );
  const run = await new NamespaceRunner().run({
    argv: ['node', script, join(workspace, 'note.txt')],
    limits: LIMITS,
    binds: [
      { source: script, target: script },
      { source: workspace, target: workspace },
    ],
  });
  assert.equal(run.kind, 'ok', run.kind === 'ok' ? '' : `${run.kind}: ${run.stderr}`);
  assert.deepEqual(JSON.parse(run.stdout), { text: 'hello from the workspace' });
});

test('staged mounts sit in a folder only root and the sandbox group may pass, at unguessable names', {
  skip,
}, async () => {
  const ws = join(dir, 'ws');
  const [staged] = await reachableBinds([{ source: ws, target: ws }]);
  assert.ok(staged);
  assert.notEqual(staged.source, ws);
  assert.equal(staged.target, ws);
  assert.equal(
    staged.source,
    `/run/toolgate/binds/${process.pid}/${staged.source.split('/').at(-1)}`,
  );
  assert.match(staged.source, /\/[0-9a-f]{32}$/);
  assert.equal(statSync('/run/toolgate/binds').mode & 0o777, 0o711);
  // Only root and the sandbox group may pass the folder: mountinfo shows the path to every user.
  const own = statSync(`/run/toolgate/binds/${process.pid}`);
  assert.equal(own.mode & 0o777, 0o710);
  assert.equal(own.uid, 0);
  assert.equal(own.gid, 65534);
  // The staged path shows the source itself.
  assert.ok(readdirSync(staged.source).includes('note.txt'));
  // A source nobody reaches is left alone.
  assert.deepEqual(await reachableBinds([{ source: '/usr/bin', target: '/usr/bin' }]), [
    { source: '/usr/bin', target: '/usr/bin' },
  ]);
});

test('mounts staged by a process that died without exiting are detached by the next one', {
  skip,
}, async () => {
  const { execFileSync, spawnSync } = await import('node:child_process');
  // A pid that is certainly gone: a process that has already exited.
  const dead = spawnSync(process.execPath, ['-e', '0']).pid as number;
  const folder = `/run/toolgate/binds/${dead}`;
  const leftover = join(folder, 'a'.repeat(32));
  const source = join(dir, 'ws');
  mkdirSync(leftover, { recursive: true });
  execFileSync('mount', ['--bind', source, leftover]);
  assert.ok(readdirSync(leftover).includes('note.txt'), 'the leftover mount is live');
  // A fresh process stages something (here: the same source) and so sweeps the dead one's folder.
  const script = join(dir, 'stage.mts');
  writeFileSync(
    script,
    `import { reachableBinds } from ${JSON.stringify(join(process.cwd(), 'src/execution/sandbox/namespace/bind-staging.ts'))};\nawait reachableBinds([{ source: ${JSON.stringify(source)}, target: '/x' }]);\n`,
  );
  execFileSync(process.execPath, ['--import', 'tsx', script], { stdio: 'pipe' });
  assert.throws(() => statSync(folder), /ENOENT/);
  // And nothing of the source went with it.
  assert.ok(readdirSync(source).includes('note.txt'));
});
