/**
 * @module Makes a bind source reachable for bubblewrap when it runs as the host's nobody (toolgate
 * is root). bwrap resolves every source path as the user it runs as, so a tool's script or
 * workspace under a folder nobody may traverse (e.g. /root/…, or a `mktemp -d` folder) cannot be
 * bound, and the run fails. Such a source is bind-mounted once, by root, at an unguessable name
 * in a folder only root and the sandbox group (65534) may pass (/run/toolgate/binds/<pid>, 0710
 * root:65534; the mount table shows the path to everyone, the folder keeps them out), and bwrap binds
 * from there; the sandbox still sees it at its own path and read-only when the bind says so.
 * Sources nobody can already reach are used as they are. Staged mounts live as long as the
 * process and are detached when it exits; those of a process that died without exiting are
 * detached by the next one that stages.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  rmdirSync,
  statSync,
  unlinkSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { NOBODY } from '../host-tools.js';
import type { ReadOnlyBind } from '../run-spec.js';

const BINDS = '/run/toolgate/binds';
/** This process's own folder: another gateway process never touches it while this one lives. */
const STAGE_ROOT = join(BINDS, String(process.pid));
/** Names the staged mounts: HMAC of the source under a per-process key, so they cannot be guessed. */
const NAME_KEY = randomBytes(32);
const staged = new Map<string, Promise<string>>();
let exitHook = false;

/** True when uid/gid 65534 may search every folder above `path` (and so resolve it). */
export function reachableByNobody(path: string): boolean {
  let dir = dirname(path);
  for (;;) {
    let mode: number;
    let uid: number;
    let gid: number;
    try {
      ({ mode, uid, gid } = statSync(dir));
    } catch {
      return false;
    }
    const searchable =
      uid === NOBODY
        ? (mode & 0o100) !== 0
        : gid === NOBODY
          ? (mode & 0o010) !== 0
          : (mode & 0o001) !== 0;
    if (!searchable) return false;
    const parent = dirname(dir);
    if (parent === dir) return true;
    dir = parent;
  }
}

function mountBind(source: string, target: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('mount', ['--bind', source, target], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`mount --bind failed: ${err.trim()}`)),
    );
  });
}

/** Folders of processes that are gone (killed before their exit hook): detached and removed. */
function sweepDeadProcesses(): void {
  let entries: string[];
  try {
    entries = readdirSync(BINDS);
  } catch {
    return;
  }
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid || alive(pid)) continue;
    const folder = join(BINDS, entry);
    for (const name of safeList(folder)) removeMountpoint(join(folder, name));
    try {
      rmdirSync(folder);
    } catch {}
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function safeList(folder: string): string[] {
  try {
    return readdirSync(folder);
  } catch {
    return [];
  }
}

/** Detaches a staged mount and removes its empty mountpoint, never what was mounted there. */
function removeMountpoint(path: string): void {
  spawnSync('umount', ['-l', path], { stdio: 'ignore' });
  // Not recursive, and a mountpoint still in use refuses to go.
  try {
    if (statSync(path).isDirectory()) rmdirSync(path);
    else unlinkSync(path);
  } catch {}
}

let swept = false;

async function stage(source: string): Promise<string> {
  mkdirSync(STAGE_ROOT, { recursive: true, mode: 0o711 });
  chmodSync('/run/toolgate', 0o711);
  chmodSync(BINDS, 0o711);
  // Only root and the sandbox group may pass: the mount table shows every staged path to any
  // local user, so the names alone would not keep another user out.
  chownSync(STAGE_ROOT, 0, NOBODY);
  chmodSync(STAGE_ROOT, 0o710);
  if (!swept) {
    swept = true;
    sweepDeadProcesses();
  }
  const name = createHmac('sha256', NAME_KEY).update(source).digest('hex').slice(0, 32);
  const target = join(STAGE_ROOT, name);
  const st = statSync(source);
  try {
    const existing = statSync(target);
    // Already this source (an earlier run of this process): reuse it.
    if (existing.dev === st.dev && existing.ino === st.ino) return target;
  } catch {
    if (st.isDirectory()) mkdirSync(target, { mode: 0o700 });
    else closeSync(openSync(target, 'w', 0o600));
  }
  await mountBind(source, target);
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const path of stagedTargets) removeMountpoint(path);
      try {
        rmdirSync(STAGE_ROOT);
      } catch {}
    });
  }
  stagedTargets.add(target);
  return target;
}

const stagedTargets = new Set<string>();

/**
 * The binds as bwrap (running as nobody) can take them: each source it could not resolve is
 * replaced by its staged mount; targets are unchanged. Throws when a source cannot be staged.
 */
export async function reachableBinds(binds: readonly ReadOnlyBind[]): Promise<ReadOnlyBind[]> {
  const out: ReadOnlyBind[] = [];
  for (const bind of binds) {
    if (reachableByNobody(bind.source)) {
      out.push(bind);
      continue;
    }
    let pending = staged.get(bind.source);
    if (!pending) {
      pending = stage(bind.source);
      staged.set(bind.source, pending);
      pending.catch(() => staged.delete(bind.source));
    }
    out.push({ source: await pending, target: bind.target });
  }
  return out;
}
