/**
 * @module CPU time of a host process and all its descendants, read from /proc. Used where an
 * rlimit cannot hold: gVisor runs a tool's computation in its own sandbox kernel, which does not
 * deliver SIGXCPU, so the host watches the sandbox's processes instead.
 */
import { readdirSync, readFileSync } from 'node:fs';

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

/** Milliseconds of CPU used by `root` and its descendants (including reaped children). */
export function treeCpuMs(root: number): number {
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
  const queue = [root];
  const seen = new Set<number>();
  while (queue.length > 0) {
    const pid = queue.pop() as number;
    if (seen.has(pid)) continue;
    seen.add(pid);
    ticks += stats.get(pid)?.ticks ?? 0;
    queue.push(...(children.get(pid) ?? []));
  }
  return ticks * TICK_MS;
}
