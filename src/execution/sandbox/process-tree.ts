/**
 * @module CPU time and memory of a host process tree, read from /proc. Used where an rlimit cannot
 * hold: gVisor runs a tool in its own sandbox kernel, which delivers no SIGXCPU and ignores
 * RLIMIT_DATA, and RLIMIT_DATA counts address space a runtime reserves rather than memory it uses,
 * so the host watches the sandbox's processes instead. Memory is what the tree holds however it
 * holds it: resident pages, page tables, and the memory-backed files (memfd) its processes keep
 * open, mapped or not — where gVisor keeps every page of the tool's memory (its memory file), and
 * where a tool can keep memory outside any mapping (attack round 18, U1 and U2).
 */
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';

/** Linux reports times in clock ticks; USER_HZ is 100 on every mainstream architecture. */
const TICK_MS = 10;

interface Stat {
  readonly ppid: number;
  readonly ticks: number;
}

function readStat(pid: number): Stat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const n = (i: number) => Number(fields[i] ?? 0);
    // After the name: state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14)
    return { ppid: n(1), ticks: n(11) + n(12) + n(13) + n(14) };
  } catch {
    return null;
  }
}

export interface TreeUsage {
  /** CPU of the whole tree, reaped children included. */
  readonly cpuMs: number;
  /** The tree's memory in MB, as `how` counts it (treeUsage). */
  readonly memoryMb: number;
}

/**
 * How a sandbox's memory shows on the host. `resident`: its processes' own memory — anonymous and
 * shared resident pages and page tables (mapped program files are page cache, not counted) — and
 * the memory-backed files (memfd) they hold open, mapped or not. `memory-file`: only the
 * memory-backed files, for gVisor, whose sandbox kernel keeps every page of the tool's memory in
 * one such file that no host process needs to map (attack round 18, U1).
 */
export type MemoryCount = 'resident' | 'memory-file';

/** The /proc status fields of a process's own memory: anonymous, shared, page tables (kB). */
const MEMORY_FIELDS = [/^RssAnon:\s+(\d+)/m, /^RssShmem:\s+(\d+)/m, /^VmPTE:\s+(\d+)/m];

/** Anonymous and shared resident memory and page tables of a process, in kB (/proc status). */
function processMemoryKb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    let kb = 0;
    for (const field of MEMORY_FIELDS) kb += Number(field.exec(status)?.[1] ?? 0);
    return kb;
  } catch {
    return 0;
  }
}

/** Adds the memfd files `pid` holds open to `files` (by device and inode: each file once). */
function addMemoryFiles(pid: number, files: Map<string, number>): void {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return;
  }
  for (const fd of fds) {
    const path = `/proc/${pid}/fd/${fd}`;
    try {
      if (!readlinkSync(path).startsWith('/memfd:')) continue;
      const st = statSync(path);
      files.set(`${st.dev}:${st.ino}`, (st.blocks * 512) / 1024);
    } catch {
      // Closed meanwhile.
    }
  }
}

/**
 * Whether the kernel lists each task's children (/proc/PID/task/TID/children): then a watch reads
 * the sandbox's own processes only, instead of every process of the host 20 times a second.
 */
const CHILD_LISTS = existsSync(`/proc/self/task/${process.pid}/children`);

/** The children of `pid`, from the lists of each of its threads. */
function listedChildren(pid: number): number[] {
  const out: number[] = [];
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tasks) {
    try {
      for (const c of readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ')) {
        if (c.trim() !== '') out.push(Number(c));
      }
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out;
}

/** Without the lists: every process's parent, read from /proc once per watch. */
function scannedChildren(): (pid: number) => number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const stat = readStat(pid);
    if (!stat) continue;
    const list = children.get(stat.ppid) ?? [];
    list.push(pid);
    children.set(stat.ppid, list);
  }
  return (pid) => children.get(pid) ?? [];
}

/**
 * CPU and memory (MemoryCount) of `root` and its descendants. A memfd a process both maps and holds
 * open counts twice under `resident`: an overcount, never an undercount.
 */
export function treeUsage(root: number, how: MemoryCount): TreeUsage {
  const childrenOf = CHILD_LISTS ? listedChildren : scannedChildren();
  let ticks = 0;
  let memoryKb = 0;
  const files = new Map<string, number>();
  const queue: number[] = [root];
  const seen = new Set<number>();
  while (queue.length > 0) {
    const pid = queue.pop() as number;
    if (seen.has(pid)) continue;
    seen.add(pid);
    const s = readStat(pid);
    if (!s) continue;
    ticks += s.ticks;
    if (how === 'resident') memoryKb += processMemoryKb(pid);
    addMemoryFiles(pid, files);
    for (const c of childrenOf(pid)) queue.push(c);
  }
  for (const kb of files.values()) memoryKb += kb;
  return { cpuMs: ticks * TICK_MS, memoryMb: memoryKb / 1024 };
}
