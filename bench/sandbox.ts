/**
 * Sandbox benchmark: cold start of `true`, RUNS rounds over every contender in turn
 * (round robin, so load drifting on a shared host hits all alike), p50 and
 * p95 in milliseconds, in one run on one host:
 *   - floor: a plain child_process spawn of `true` (no isolation at all);
 *   - bare bubblewrap (`--ro-bind / /`, no limits): what bwrap itself costs here (a reference);
 *   - toolgate's drivers through their SandboxRunner (process, namespace, gvisor), each run a
 *     fresh sandbox with its limits, scratch and teardown included;
 *   - @anthropic-ai/sandbox-runtime as a library (SandboxManager initialised once, then
 *     wrapWithSandbox + spawn per run) and as its `srt` CLI, on the same command.
 * Goals: namespace p50 ≤ 20 ms and ≤ 0.5× the sandbox-runtime library's p50; gVisor p50 ≤ 250 ms.
 * The last line printed is one JSON object.
 *
 *   npm run bench:sandbox   (RUNS=60 WARMUP=3 by default)
 */

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_SANDBOX_LIMITS } from '../src/domain/catalog/index.js';
import { DRIVER_NAMES, SandboxService } from '../src/execution/sandbox/index.js';
import { measureProxyThroughput } from './proxy-throughput.js';

const RUNS = Math.max(50, Number(process.env.RUNS ?? 60));
const WARMUP = Number(process.env.WARMUP ?? 3);

interface Figures {
  p50_ms: number;
  p95_ms: number;
  runs: number;
}
type Entry = Figures | { unavailable: string };

function quantile(sorted: readonly number[], q: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return Math.round((sorted[i] ?? Number.NaN) * 100) / 100;
}

function spawnAndWait(command: string, args: readonly string[], shell = false): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args], { stdio: 'ignore', shell });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} exited with ${code}`)),
    );
  });
}

interface Contender {
  readonly name: string;
  readonly label: string;
  /** Prepares once (probe, initialise); throws when the contender cannot run here. */
  readonly setup?: () => Promise<void>;
  /** One cold start; throws when it fails. */
  readonly once: () => Promise<void>;
}

const srtDir = mkdtempSync(join(tmpdir(), 'toolgate-bench-srt-'));
const srtConfig = {
  network: { allowedDomains: [], deniedDomains: [] },
  filesystem: { denyRead: [], allowWrite: [srtDir], denyWrite: [] },
};
const srtSettings = join(srtDir, 'srt-settings.json');
writeFileSync(srtSettings, JSON.stringify(srtConfig));
type SrtManager = typeof import('@anthropic-ai/sandbox-runtime').SandboxManager;
let srt: SrtManager | null = null;

const sandbox = new SandboxService();
const contenders: Contender[] = [
  { name: 'floor_spawn', label: 'plain spawn (floor)', once: () => spawnAndWait('true', []) },
  {
    // What bwrap itself costs here: the host's whole root read-only, no limits, no scratch mount.
    name: 'bwrap_bare',
    label: 'bare bwrap (reference only)',
    once: () =>
      spawnAndWait('bwrap', [
        ...['--ro-bind', '/', '/', '--unshare-all', '--die-with-parent', '--tmpfs', '/tmp'],
        ...['--proc', '/proc', '--dev', '/dev', '--uid', '65534', '--gid', '65534'],
        ...['--cap-drop', 'ALL', 'true'],
      ]),
  },
  ...DRIVER_NAMES.map(
    (driver): Contender => ({
      name: driver,
      label: `toolgate ${driver}`,
      setup: async () => {
        const probe = await sandbox.runner(driver).probe();
        if (!probe.available) throw new Error(`${probe.detail}; ${probe.install}`);
      },
      once: async () => {
        const out = await sandbox
          .runner(driver)
          .run({ argv: ['true'], limits: DEFAULT_SANDBOX_LIMITS });
        if (out.kind !== 'ok') throw new Error(`${driver}: ${out.kind} ${out.stderr}`);
      },
    }),
  ),
  {
    name: 'srt_library',
    label: 'sandbox-runtime library',
    setup: async () => {
      const { SandboxManager } = await import('@anthropic-ai/sandbox-runtime');
      await SandboxManager.initialize(srtConfig);
      srt = SandboxManager;
    },
    once: async () => {
      if (!srt) throw new Error('not initialised');
      await spawnAndWait(await srt.wrapWithSandbox('true'), [], true);
    },
  },
  {
    name: 'srt_cli',
    label: 'sandbox-runtime srt CLI',
    once: () => {
      const cli = createRequire(import.meta.url).resolve(
        '@anthropic-ai/sandbox-runtime/dist/edge/cli.js',
      );
      return spawnAndWait(process.execPath, [cli, '--settings', srtSettings, 'true']);
    },
  },
];

const results: Record<string, Entry> = {};
const times = new Map<string, number[]>();
const failed = (c: Contender, err: unknown): void => {
  const reason = err instanceof Error ? err.message : String(err);
  results[c.name] = { unavailable: reason.slice(0, 300) };
};
for (const c of contenders) {
  try {
    await c.setup?.();
    for (let i = 0; i < WARMUP; i++) await c.once();
    times.set(c.name, []);
  } catch (err) {
    failed(c, err);
  }
}
// Round robin: load on a shared host drifts, and then drifts the same for every contender.
for (let i = 0; i < RUNS; i++) {
  for (const c of contenders) {
    const list = times.get(c.name);
    if (!list) continue;
    const t = performance.now();
    try {
      await c.once();
      list.push(performance.now() - t);
    } catch (err) {
      times.delete(c.name);
      failed(c, err);
    }
  }
}
// Assigned in a setup closure, which the compiler does not follow.
await (srt as SrtManager | null)?.reset();
rmSync(srtDir, { recursive: true, force: true });

console.log(
  `cold start of \`true\`, ${RUNS} rounds (round robin) after ${WARMUP} warm-up runs each:`,
);
for (const c of contenders) {
  const list = times.get(c.name);
  if (list) {
    list.sort((a, b) => a - b);
    results[c.name] = {
      p50_ms: quantile(list, 0.5),
      p95_ms: quantile(list, 0.95),
      runs: list.length,
    };
  }
  const e = results[c.name] as Entry;
  console.log(
    'p50_ms' in e
      ? `  ${c.label.padEnd(30)} p50 ${e.p50_ms} ms   p95 ${e.p95_ms} ms`
      : `  ${c.label.padEnd(30)} unavailable: ${e.unavailable}`,
  );
}

const p50 = (name: string): number | null => {
  const e = results[name];
  return e && 'p50_ms' in e ? e.p50_ms : null;
};
const ratio = (a: number | null, b: number | null): number | null =>
  a !== null && b !== null && b > 0 ? Math.round((a / b) * 100) / 100 : null;
const ratios = {
  namespace_vs_floor_p50: ratio(p50('namespace'), p50('floor_spawn')),
  namespace_vs_bare_bwrap_p50: ratio(p50('namespace'), p50('bwrap_bare')),
  gvisor_vs_floor_p50: ratio(p50('gvisor'), p50('floor_spawn')),
  namespace_vs_srt_library_p50: ratio(p50('namespace'), p50('srt_library')),
  namespace_vs_srt_cli_p50: ratio(p50('namespace'), p50('srt_cli')),
  gvisor_vs_srt_library_p50: ratio(p50('gvisor'), p50('srt_library')),
};
const ns = p50('namespace');
const gv = p50('gvisor');
const goals = {
  namespace_p50_le_20ms: ns !== null && ns <= 20,
  namespace_le_half_srt_library:
    ratios.namespace_vs_srt_library_p50 === null
      ? null
      : ratios.namespace_vs_srt_library_p50 <= 0.5,
  gvisor_p50_le_250ms: gv !== null && gv <= 250,
};
console.log('ratios:', JSON.stringify(ratios));
console.log('goals:', JSON.stringify(goals));

// The egress proxy's throughput (bench/proxy-throughput.ts, also `npm run bench:proxy`): a 10 MB
// download through the proxy vs direct on loopback, goal ≥ 0.8× direct.
const proxyThroughput = await measureProxyThroughput();
console.log('proxy throughput:', JSON.stringify(proxyThroughput));

console.log(
  JSON.stringify({
    bench: 'sandbox',
    runs: RUNS,
    cold_start: results,
    ratios,
    goals,
    proxy_throughput: proxyThroughput,
  }),
);
