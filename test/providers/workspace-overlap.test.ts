/**
 * @module A provider's writable workspace must not hold its program (attack round 28, F1): an agent
 * that can write the workspace — through the provider's own tool — could otherwise rewrite the
 * reviewed server, and the next process would run the new code under the old review, since the
 * launch hash names the program by its paths. Refused at registration and update, at the pointer
 * that overlaps (rule `provider.workspace_overlap`): the program or an interpreter's script in the
 * workspace, through a symlink too; a module or config file inside it named by an argument; a
 * loader variable pointing into it; a read-only bind inside it or holding it. The benign
 * neighbours: a workspace beside the program, and the workspace folder itself named as the folder
 * the server works on (its data, not its program), register and run.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Actor, ToolgateError } from '../../src/core/index.js';
import { checkProviderSpec } from '../../src/execution/providers/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { openWorld, type World } from '../support/world.js';
import { FIXTURES, fixtureProvider, NOTES_BOT } from './provider-support.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const dir = mkdtempSync(join(tmpdir(), 'toolgate-ws-overlap-'));
const ws = join(dir, 'ws');
const code = join(dir, 'code');
mkdirSync(ws);
mkdirSync(code);
writeFileSync(join(ws, 'srv.mjs'), '// a server the workspace holds\n');
symlinkSync(ws, join(dir, 'link'));

const base = {
  name: 'files',
  owner: 'platform-team',
  transport: 'stdio',
  isolation: 'namespace',
  workspace: { source: ws },
};

/** The overlap rules a spec breaks, with their pointers. */
function overlaps(spec: Record<string, unknown>): string[] {
  return checkProviderSpec({ ...base, ...spec })
    .filter((p) => p.rule === 'provider.workspace_overlap')
    .map((p) => p.pointer);
}

after(() => rmSync(dir, { recursive: true, force: true }));

describe('a writable workspace that holds the program is refused', () => {
  test('the program, or an interpreter’s script, in the workspace (a symlink too)', () => {
    assert.deepEqual(overlaps({ command: ['/usr/bin/node', join(ws, 'srv.mjs')] }), ['/command/1']);
    assert.deepEqual(overlaps({ command: ['/usr/bin/python3', '-u', join(ws, 'srv.py')] }), [
      '/command/2',
    ]);
    assert.deepEqual(overlaps({ command: [join(ws, 'server')] }), ['/command/0']);
    assert.deepEqual(overlaps({ command: ['/usr/bin/node', join(dir, 'link', 'srv.mjs')] }), [
      '/command/1',
    ]);
    // An interpreter run on the workspace folder runs what it holds (its index.js).
    assert.deepEqual(overlaps({ command: ['/usr/bin/node', ws] }), ['/command/1']);
  });

  test('a module or config inside it named by an argument, a loader variable pointing into it', () => {
    assert.deepEqual(
      overlaps({
        command: ['/usr/bin/node', `--import=${join(ws, 'hook.mjs')}`, join(code, 'srv.mjs')],
      }),
      ['/command/1'],
    );
    assert.deepEqual(
      overlaps({
        command: ['/usr/bin/node', join(code, 'srv.mjs')],
        env: { NODE_OPTIONS: `--require ${join(ws, 'x.cjs')}`, NODE_PATH: ws },
      }),
      ['/env/NODE_OPTIONS', '/env/NODE_PATH'],
    );
  });

  test('a read-only bind inside the workspace, or holding it', () => {
    assert.deepEqual(
      overlaps({
        command: ['/usr/bin/node', join(code, 'srv.mjs')],
        binds: [{ source: code }, { source: join(ws, 'lib') }, { source: dir }],
      }),
      ['/binds/1/source', '/binds/2/source'],
    );
  });

  test('round 29: HOME and its dot folders, variables of any name, code in an argument, file: URLs', () => {
    const py = ['/usr/bin/python3', join(code, 'srv.py')];
    // The sandbox's working folder and HOME is /tmp: ~/.local site-packages would be the agent's.
    // (This test's folders are under the host's /tmp too, so there it also covers the program.)
    assert.ok(
      overlaps({ command: py, workspace: { source: ws, target: '/tmp' } }).includes(
        '/workspace/target',
      ),
    );
    assert.deepEqual(overlaps({ command: py, workspace: { source: ws, target: '/tmp/.local' } }), [
      '/workspace/target',
    ]);
    // Any variable naming the workspace, whatever its name (PYTHONUSERBASE, HOME, XDG_*).
    assert.deepEqual(
      overlaps({
        command: py,
        env: { PYTHONUSERBASE: ws, HOME: ws, XDG_CONFIG_HOME: join(ws, 'c') },
      }),
      ['/env/PYTHONUSERBASE', '/env/HOME', '/env/XDG_CONFIG_HOME'],
    );
    // Code in an argument, or a path glued to a flag or spelled as a file: URL.
    assert.deepEqual(
      overlaps({ command: ['/usr/bin/node', '-e', `require("${join(ws, 'pre.cjs')}")`] }),
      ['/command/2'],
    );
    assert.deepEqual(
      overlaps({ command: ['/bin/sh', '-c', 'cd "$0" && exec node ./srv.mjs', ws] }),
      ['/command/3'],
    );
    assert.deepEqual(
      overlaps({ command: ['/usr/bin/node', `-r${join(ws, 'pre.cjs')}`, join(code, 'srv.mjs')] }),
      ['/command/1'],
    );
    const url = `file://${join(dir, 'w%73', 'pre.cjs')}`;
    assert.deepEqual(
      overlaps({
        command: ['/usr/bin/node', `--import=${url}`, join(code, 'srv.mjs')],
        env: { NODE_OPTIONS: `--import=${url}` },
      }),
      ['/command/1', '/env/NODE_OPTIONS'],
    );
    // The benign neighbours: a workspace under /tmp that is not a dot folder of HOME; a variable
    // that names another folder.
    assert.deepEqual(
      overlaps({
        command: py,
        workspace: { source: ws, target: '/tmp/work' },
        env: { PYTHONUSERBASE: code },
      }),
      [],
    );
  });

  test('benign: a workspace beside the program, named as the folder the server works on', () => {
    assert.deepEqual(
      overlaps({
        command: ['/usr/bin/node', join(code, 'srv.mjs'), ws, '--root', ws],
        binds: [{ source: code }],
        env: { DATA_DIR: code, NODE_OPTIONS: '--max-old-space-size=256' },
      }),
      [],
    );
  });
});

for (const backend of backends().filter((b) => b.name === 'sqlite')) {
  describe(`registration and update refuse it and store nothing (${backend.name})`, () => {
    let world: World;
    let tg: Gateway;
    let good: string;
    let state: string;
    before(async () => {
      world = await openWorld({ backend, agents: [NOTES_BOT] });
      tg = world.tg;
      // Apart from each other: the mode file's folder is bound read-only, the workspace writable.
      good = mkdtempSync(join(tmpdir(), 'toolgate-ws-good-'));
      chmodSync(good, 0o777);
      state = mkdtempSync(join(tmpdir(), 'toolgate-ws-state-'));
      chmodSync(state, 0o755);
      writeFileSync(join(state, 'mode'), 'benign');
    });
    after(async () => {
      await world?.close();
      rmSync(good, { recursive: true, force: true });
      rmSync(state, { recursive: true, force: true });
    });

    test('a provider whose workspace holds its server is refused; beside it, it registers', async () => {
      const holding = {
        ...fixtureProvider('held', 'rug-pull-server.mjs', [join(dir, 'mode')], dir),
        workspace: { source: FIXTURES },
      };
      await assert.rejects(tg.providers.register(holding, admin), (err: ToolgateError) => {
        assert.equal(err.code, 'INPUT_INVALID');
        const rules = (err.details as { problems: { rule: string }[] }).problems.map((p) => p.rule);
        assert.ok(rules.includes('provider.workspace_overlap'), JSON.stringify(err.details));
        return true;
      });
      assert.equal((await tg.providers.list()).length, 0, 'nothing stored');

      const beside = {
        ...fixtureProvider('notes', 'rug-pull-server.mjs', [join(state, 'mode')], state),
        workspace: { source: good },
      };
      await tg.providers.register(beside, admin);
      const stored = await tg.providers.show('notes');
      // An update that would move the workspace over the server is refused; the spec stays.
      await assert.rejects(
        tg.providers.register({ ...beside, workspace: { source: FIXTURES } }, admin),
        (err: ToolgateError) => err.code === 'INPUT_INVALID',
      );
      assert.deepEqual(await tg.providers.show('notes'), stored);
    });
  });
}
