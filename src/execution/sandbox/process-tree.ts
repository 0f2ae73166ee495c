/**
 * @module CPU time and resident memory of a host process tree, read from /proc. Used where an
 * rlimit cannot hold: gVisor runs a tool in its own sandbox kernel, which delivers no SIGXCPU and
 * ignores RLIMIT_DATA, so the host watches the sandbox's processes instead.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Linux reports times in clock ticks; USER_HZ is 100 on every mainstream architecture. */
const TICK_MS = 10;
const PAGE_KB = 4;

interface Stat {
  readonly ppid: number;
  readonly ticks: number;
  readonly rssKb: number;
}

function readStat(pid: number): Stat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const n = (i: number) => Number(fields[i] ?? 0);
    // After the name: state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14) … rss(21)
    return { ppid: n(1), ticks: n(11) + n(12) + n(13) + n(14), rssKb: n(21) * PAGE_KB };
  } catch {
    return null;
  }
}

export interface TreeUsage {
  /** CPU of the whole tree, reaped children included. */
  readonly cpuMs: number;
  /** Resident memory of the processes at least `rssDepth` levels below the root. */
  readonly rssMb: number;
}

/**
 * Usage of `root` and its descendants. `rssDepth` skips the sandbox's own machinery (for runsc:
 * the CLI, its gofer and sandbox kernel) so that memory counts the tool's address spaces only.
 */
export function treeUsage(root: number, rssDepth = 0): TreeUsage {
  const stats = new Map<number, Stat>();
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const stat = readStat(pid);
    if (stat) stats.set(pid, stat);
  }
  const children = new Map<number, number[]>();
  for (const [pid, s] of stats) {
    const list = children.get(s.ppid) ?? [];
    list.push(pid);
    children.set(s.ppid, list);
  }
  let ticks = 0;
  let rssKb = 0;
  const queue: [number, number][] = [[root, 0]];
  const seen = new Set<number>();
  while (queue.length > 0) {
    const [pid, depth] = queue.pop() as [number, number];
    if (seen.has(pid)) continue;
    seen.add(pid);
    const s = stats.get(pid);
    ticks += s?.ticks ?? 0;
    if (depth >= rssDepth) rssKb += s?.rssKb ?? 0;
    for (const c of children.get(pid) ?? []) queue.push([c, depth + 1]);
  }
  return { cpuMs: ticks * TICK_MS, rssMb: rssKb / 1024 };
}
