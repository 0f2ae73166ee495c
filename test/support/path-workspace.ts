/** @module The directory layout path-cases.json refers to: <base>/ws with a sibling <base>/ws-evil. */
import { mkdir, mkdtemp, realpath, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** Creates the layout in a fresh temporary folder and returns that folder (the caller removes it). */
export async function makePathWorkspace(prefix: string): Promise<string> {
  const base = await realpath(await mkdtemp(path.join(tmpdir(), prefix)));
  const docs = path.join(base, 'ws', 'docs');
  await mkdir(path.join(docs, 'sub'), { recursive: true });
  await writeFile(path.join(docs, 'readme.md'), 'hello');
  await writeFile(path.join(docs, 'sub', 'deep.txt'), 'deep');
  await mkdir(path.join(base, 'ws-evil'));
  await writeFile(path.join(base, 'ws-evil', 'secret.txt'), 'secret');
  const links: [string, string][] = [
    ['link-out', '/etc'],
    ['link-in', '../docs'],
    ['link-root', '..'],
    ['link-file', 'readme.md'],
    ['link-evil', '../../ws-evil'],
    ['link-abs-out', path.join(base, 'ws-evil')],
    ['link-parent', '../..'],
    ['link-chain', 'link-out'],
    ['link-passwd', '/etc/passwd'],
    ['dangling', path.join(base, 'nowhere', 'file')],
    ['loop', 'loop'],
  ];
  for (const [name, target] of links) await symlink(target, path.join(docs, name));
  return base;
}
