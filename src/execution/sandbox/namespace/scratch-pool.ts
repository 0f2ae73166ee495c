/**
 * @module Scratch filesystems for the namespace driver: host tmpfs mounts, size-capped, noexec,
 * nosuid and nodev (bwrap keeps those flags when it binds the directory in; its own --tmpfs cannot
 * be noexec). Mounting costs a process spawn, so a scratch is emptied after its run and kept for
 * the next run of the same size instead of being unmounted. It is reused only once its run's
 * sandbox is gone (its pid namespace, and with it every process that could hold a file, has ended)
 * and it is empty; one that cannot be emptied is unmounted and dropped. Each mount holds two
 * folders, `tmp` (the sandbox's /tmp and cwd) and `shm` (its /dev/shm), so that both draw on the
 * one size cap and both are noexec.
 */
import { execFile, execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, rm, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { NOBODY } from '../host-tools.js';

const run = promisify(execFile);
const MIB = 1024 * 1024;
/** Idle scratches kept per size; more are unmounted. */
const KEEP = 4;
const PARTS = ['shm', 'tmp'] as const;

/** The folders of a scratch mount that the sandbox sees as /tmp and /dev/shm. */
export function scratchLayout(dir: string): { readonly tmp: string; readonly shm: string } {
  return { tmp: join(dir, 'tmp'), shm: join(dir, 'shm') };
}

export class ScratchPool {
  readonly #free = new Map<number, string[]>();
  readonly #mounted = new Set<string>();
  #exitHook = false;

  /** An empty mounted scratch of `sizeMb`; rejects when mounting is not possible here. */
  async take(sizeMb: number): Promise<string> {
    return this.#free.get(sizeMb)?.pop() ?? this.#mount(sizeMb);
  }

  /** Empties a scratch after its run's sandbox has ended, for the next run; never throws. */
  async release(dir: string, sizeMb: number): Promise<void> {
    try {
      // Only the two folders may be at the top (the sandbox never sees the mount's root).
      if ((await readdir(dir)).sort().join('/') !== PARTS.join('/'))
        throw new Error('scratch changed');
      for (const part of PARTS) {
        const folder = join(dir, part);
        const entries = await readdir(folder);
        await Promise.all(
          entries.map((e) => rm(join(folder, e), { recursive: true, force: true })),
        );
        if ((await readdir(folder)).length !== 0) throw new Error('scratch not empty');
        // The sandbox may have changed a folder's mode (chmod on /tmp): set it back.
        await chmod(folder, 0o1777);
      }
      const free = this.#free.get(sizeMb) ?? [];
      if (free.length < KEEP) {
        free.push(dir);
        this.#free.set(sizeMb, free);
        return;
      }
    } catch {
      // Fall through: drop it.
    }
    await this.#unmount(dir);
  }

  /** Unmounts and removes a scratch that must not be reused; never throws. */
  discard(dir: string): Promise<void> {
    return this.#unmount(dir);
  }

  async #unmount(dir: string): Promise<void> {
    // Lazy: nothing may keep a scratch alive on the host.
    await run('umount', ['-l', dir]).catch(() => undefined);
    this.#mounted.delete(dir);
    await rmdir(dir).catch(() => undefined);
  }

  async #mount(sizeMb: number): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'toolgate-ns-'));
    // The mount's root lets only root and the sandbox group (bwrap runs as nobody) pass: the host
    // path is in the mount table, and no other user or sandbox (a process-driver run has a group
    // of its own) may reach a namespace run's /tmp or /dev/shm through it.
    const options = `size=${sizeMb * MIB},noexec,nosuid,nodev,mode=0710,uid=0,gid=${NOBODY}`;
    try {
      await run('mount', ['-t', 'tmpfs', '-o', options, 'toolgate-scratch', dir]);
    } catch (err) {
      await rmdir(dir).catch(() => undefined);
      throw err;
    }
    this.#mounted.add(dir);
    this.#hookExit();
    try {
      for (const part of PARTS) {
        await mkdir(join(dir, part));
        // Sticky and world-writable like any /tmp: the sandbox user is not the mount's owner.
        await chmod(join(dir, part), 0o1777);
      }
    } catch (err) {
      await this.#unmount(dir);
      throw err;
    }
    return dir;
  }

  /** Every scratch still mounted is unmounted when the process exits. */
  #hookExit(): void {
    if (this.#exitHook) return;
    this.#exitHook = true;
    process.once('exit', () => {
      for (const dir of this.#mounted) {
        try {
          execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
          execFileSync('rmdir', [dir], { stdio: 'ignore' });
        } catch {
          // best effort at exit
        }
      }
    });
  }
}
