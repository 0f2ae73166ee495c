/**
 * @module CPU time of named groups of processes over a window, read from /proc (Linux): for the
 * replica benchmark, so a ratio between configurations can be judged by where the machine's
 * cores went (each replica, PostgreSQL's server processes, HAProxy, the load generator).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';

const TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** utime + stime of `pid` in seconds; 0 when it is gone. */
function cpuOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces: fields are counted after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return 0;
  }
}

/** The parent of `pid`; null when it is gone. */
export function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}

/** `pid` and every process whose parent it is (PostgreSQL's postmaster and its backends). */
export function withChildren(pid: number): number[] {
  const out = [pid];
  for (const name of readdirSync('/proc')) {
    const child = Number(name);
    if (Number.isInteger(child) && parentOf(child) === pid) out.push(child);
  }
  return out;
}

export interface CpuShare {
  /** CPU seconds per wall second: 1.0 is one core busy for the whole window. */
  readonly cores: number;
  /** Of all the host's cores, in per cent. */
  readonly host_pct: number;
}

/**
 * Measures groups over one window: `start()`, then `stop()` answers each group's share. A group
 * is a function naming its processes (asked at both ends: backends that come and go in between
 * are missed, which for a pool of long-lived connections is nothing). The group `load_generator`
 * may be this process itself (`self`).
 */
export function cpuMeter(groups: Readonly<Record<string, () => readonly number[] | 'self'>>) {
  const cores = cpus().length;
  let t0 = 0;
  const before = new Map<string, Map<number, number>>();
  const read = (ids: readonly number[] | 'self') =>
    ids === 'self'
      ? new Map([[process.pid, (process.cpuUsage().user + process.cpuUsage().system) / 1e6]])
      : new Map(ids.map((pid) => [pid, cpuOf(pid)]));
  return {
    start() {
      t0 = performance.now();
      for (const [name, ids] of Object.entries(groups)) before.set(name, read(ids()));
    },
    stop(): Record<string, CpuShare> & { readonly host_cores: number } {
      const wall = (performance.now() - t0) / 1000;
      const out: Record<string, CpuShare> = {};
      for (const [name, ids] of Object.entries(groups)) {
        const then = before.get(name) ?? new Map<number, number>();
        let used = 0;
        for (const [pid, now] of read(ids())) used += now - (then.get(pid) ?? 0);
        const c = Math.round((used / wall) * 100) / 100;
        out[name] = { cores: c, host_pct: Math.round((c / cores) * 1000) / 10 };
      }
      return { ...out, host_cores: cores } as Record<string, CpuShare> & {
        readonly host_cores: number;
      };
    },
  };
}
