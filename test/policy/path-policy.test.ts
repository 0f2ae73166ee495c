import assert from 'node:assert/strict';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { checkPath, MAX_PATH_LENGTH } from '../../src/domain/policy/index.js';

/**
 * <base>/ws            the root
 *   docs/readme.md
 *   docs/link-out   -> /etc
 *   docs/link-in    -> ../docs
 *   docs/link-evil  -> ../../ws-evil
 *   docs/link-abs   -> <base>/ws/docs   (absolute, stays inside)
 *   docs/dangling   -> <base>/nowhere/file
 * <base>/ws-evil/secret.txt
 * <base>/ws-link   -> ws                  (a symlinked root)
 */
let base = '';
let root = '';

before(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), 'toolgate-path-')));
  root = path.join(base, 'ws');
  await mkdir(path.join(root, 'docs'), { recursive: true });
  await writeFile(path.join(root, 'docs', 'readme.md'), 'hello');
  await symlink('/etc', path.join(root, 'docs', 'link-out'));
  await symlink('../docs', path.join(root, 'docs', 'link-in'));
  await symlink('../../ws-evil', path.join(root, 'docs', 'link-evil'));
  await symlink(path.join(root, 'docs'), path.join(root, 'docs', 'link-abs'));
  await symlink(path.join(base, 'nowhere', 'file'), path.join(root, 'docs', 'dangling'));
  await mkdir(path.join(base, 'ws-evil'));
  await writeFile(path.join(base, 'ws-evil', 'secret.txt'), 'secret');
  await symlink('ws', path.join(base, 'ws-link'));
});

after(async () => {
  if (base !== '') await rm(base, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

async function allowed(raw: string, roots: readonly string[] = [root]): Promise<string> {
  const verdict = await checkPath(raw, { roots });
  assert.ok(verdict.ok, verdict.ok ? '' : `${raw}: ${verdict.rule} ${verdict.message}`);
  return verdict.value.path;
}

async function refused(raw: unknown, rule: string, roots: readonly string[] = [root]) {
  const verdict = await checkPath(raw, { roots });
  assert.equal(verdict.ok, false, `expected ${String(raw)} to be refused`);
  if (!verdict.ok) assert.equal(verdict.rule, rule, verdict.message);
}

describe('checkPath', () => {
  test('an existing file inside the root resolves to its real path', async () => {
    assert.equal(await allowed('docs/readme.md'), path.join(root, 'docs', 'readme.md'));
  });

  test('the result names the root that matched, as configured', async () => {
    const verdict = await checkPath('docs/readme.md', { roots: [root] });
    assert.ok(verdict.ok);
    if (verdict.ok) assert.equal(verdict.value.root, root);
  });

  test('"." and "docs/" resolve to the root and to docs', async () => {
    assert.equal(await allowed('.'), root);
    assert.equal(await allowed('docs/'), path.join(root, 'docs'));
  });

  test('a leaf that does not exist yet is allowed (the target of a write)', async () => {
    assert.equal(await allowed('docs/new.txt'), path.join(root, 'docs', 'new.txt'));
    assert.equal(
      await allowed('new/deeper/file.txt'),
      path.join(root, 'new', 'deeper', 'file.txt'),
    );
  });

  test('"a/../b" stays inside and is allowed; "a/../../b" leaves and is refused', async () => {
    assert.equal(await allowed('docs/../new.txt'), path.join(root, 'new.txt'));
    await refused('docs/../../new.txt', 'path.escape');
    await refused('missing/../../new.txt', 'path.escape');
  });

  test('a walk that leaves the root is refused even if it comes back', async () => {
    await refused('../ws/docs/readme.md', 'path.escape');
    await refused('..', 'path.escape');
  });

  test('a sibling directory sharing the root as a prefix is outside', async () => {
    await refused('../ws-evil/secret.txt', 'path.escape');
  });

  test('a symlink pointing outside the root is refused, with or without a leaf', async () => {
    await refused('docs/link-out', 'path.escape');
    await refused('docs/link-out/passwd', 'path.escape');
    await refused('docs/link-out/no-such-file', 'path.escape');
    await refused('docs/link-evil/secret.txt', 'path.escape');
  });

  test('".." after a symlink climbs from where the link points, as the kernel does', async () => {
    await refused('docs/link-out/../etc/passwd', 'path.escape');
  });

  test('symlinks that stay inside the root are followed and allowed', async () => {
    assert.equal(await allowed('docs/link-in/readme.md'), path.join(root, 'docs', 'readme.md'));
    assert.equal(await allowed('docs/link-abs/readme.md'), path.join(root, 'docs', 'readme.md'));
    assert.equal(
      await allowed('docs/link-in/../docs/readme.md'),
      path.join(root, 'docs', 'readme.md'),
    );
  });

  test('a dangling symlink is refused: a write through it would land wherever it points', async () => {
    await refused('docs/dangling', 'path.escape');
  });

  test('a symlinked root is resolved first, then used as the boundary', async () => {
    const linkRoot = path.join(base, 'ws-link');
    assert.equal(await allowed('docs/readme.md', [linkRoot]), path.join(root, 'docs', 'readme.md'));
    await refused('../ws-evil/secret.txt', 'path.escape', [linkRoot]);
  });

  test('the sibling with the longer name is its own root: the shorter one is outside it', async () => {
    await refused('../ws/docs/readme.md', 'path.escape', [path.join(base, 'ws-evil')]);
  });

  test('roots are tried in order and the first that contains the path wins', async () => {
    const evil = path.join(base, 'ws-evil');
    const verdict = await checkPath('secret.txt', { roots: [root, evil] });
    assert.ok(verdict.ok);
    if (verdict.ok) assert.equal(verdict.value.root, root);
  });

  test('no usable root refuses with path.no_root', async () => {
    await refused('docs/readme.md', 'path.no_root', []);
    await refused('docs/readme.md', 'path.no_root', ['relative/root']);
    await refused('docs/readme.md', 'path.no_root', [path.join(base, 'missing')]);
    await refused('x', 'path.no_root', [path.join(root, 'docs', 'readme.md')]);
  });

  test('malformed arguments are refused before touching the file system', async () => {
    await refused(42, 'path.type');
    await refused(null, 'path.type');
    await refused(['docs'], 'path.type');
    await refused('', 'path.empty');
    await refused('docs/readme.md\0.txt', 'path.nul');
    await refused('a'.repeat(MAX_PATH_LENGTH + 1), 'path.too_long');
    await refused('docs\\readme.md', 'path.syntax');
    await refused('docs/\nreadme.md', 'path.syntax');
  });

  test('odd dot segments and a tilde inside a name are file names', async () => {
    assert.equal(await allowed('.../x'), path.join(root, '...', 'x'));
    assert.equal(await allowed('docs/~backup'), path.join(root, 'docs', '~backup'));
  });

  test(`exactly ${MAX_PATH_LENGTH} characters is fine`, async () => {
    const name = `d/${'a'.repeat(200)}/${'b'.repeat(200)}/${'c'.repeat(200)}/${'e'.repeat(200)}/`;
    const raw = name + 'f'.repeat(MAX_PATH_LENGTH - name.length);
    assert.equal(raw.length, MAX_PATH_LENGTH);
    await allowed(raw);
  });
});
