/**
 * Sandbox benchmark (issue 4): cold start of `true`, RUNS sequential runs per contender, p50 and
 * p95 in milliseconds, in one run on one host:
 *   - floor: a plain child_process spawn of `true` (no isolation at all);
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
import { DEFAULT_SANDBOX_LIMITS } from '../src/catalog/index.js';
import { DRIVER_NAMES, SandboxService } from '../src/sandbox/index.js';

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

/** Times `once` RUNS times after WARMUP untimed runs; `once` must throw when a run fails. */
async function measure(once: () => Promise<void>): Promise<Figures> {
  for (let i = 0; i < WARMUP; i++) await once();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await once();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { p50_ms: quantile(times, 0.5), p95_ms: quantile(times, 0.95), runs: RUNS };
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

async function attempt(label: string, fn: () => Promise<Figures>): Promise<Entry> {
  try {
    return await fn();
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    console.log(`  ${label}: unavailable (${reason})`);
    return { unavailable: reason.slice(0, 300) };
  }
}

function show(label: string, e: Entry): void {
  if ('p50_ms' in e) console.log(`  ${label.padEnd(34)} p50 ${e.p50_ms} ms   p95 ${e.p95_ms} ms`);
}

const results: Record<string, Entry> = {};
console.log(`cold start of \`true\`, ${RUNS} runs each after ${WARMUP} warm-up:`);

results.floor_spawn = await measure(() => spawnAndWait('true', []));
show('plain spawn (floor)', results.floor_spawn);

const sandbox = new SandboxService();
for (const driver of DRIVER_NAMES) {
  const runner = sandbox.runner(driver);
  results[driver] = await attempt(driver, async () => {
    const probe = await runner.probe();
    if (!probe.available) throw new Error(`${probe.detail}; ${probe.install}`);
    return measure(async () => {
      const out = await runner.run({ argv: ['true'], limits: DEFAULT_SANDBOX_LIMITS });
      if (out.kind !== 'ok') throw new Error(`${driver}: ${out.kind} ${out.stderr}`);
    });
  });
  show(`toolgate ${driver}`, results[driver] as Entry);
}

// @anthropic-ai/sandbox-runtime: no network, writes only to a scratch dir, same command.
const srtDir = mkdtempSync(join(tmpdir(), 'toolgate-bench-srt-'));
const srtConfig = {
  network: { allowedDomains: [], deniedDomains: [] },
  filesystem: { denyRead: [], allowWrite: [srtDir], denyWrite: [] },
};
results.srt_library = await attempt('sandbox-runtime library', async () => {
  const { SandboxManager } = await import('@anthropic-ai/sandbox-runtime');
  await SandboxManager.initialize(srtConfig);
  try {
    return await measure(async () => {
      const wrapped = await SandboxManager.wrapWithSandbox('true');
      await spawnAndWait(wrapped, [], true);
    });
  } finally {
    await SandboxManager.reset();
  }
});
show('sandbox-runtime library', results.srt_library);

results.srt_cli = await attempt('sandbox-runtime srt CLI', async () => {
  const settings = join(srtDir, 'srt-settings.json');
  writeFileSync(settings, JSON.stringify(srtConfig));
  const cli = createRequire(import.meta.url).resolve('@anthropic-ai/sandbox-runtime/dist/cli.js');
  return measure(() => spawnAndWait(process.execPath, [cli, '--settings', settings, 'true']));
});
show('sandbox-runtime srt CLI', results.srt_cli);
rmSync(srtDir, { recursive: true, force: true });

const p50 = (name: string): number | null => {
  const e = results[name];
  return e && 'p50_ms' in e ? e.p50_ms : null;
};
const ratio = (a: number | null, b: number | null): number | null =>
  a !== null && b !== null && b > 0 ? Math.round((a / b) * 100) / 100 : null;
const ratios = {
  namespace_vs_floor_p50: ratio(p50('namespace'), p50('floor_spawn')),
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

// ==== PROXY THROUGHPUT: merge point =========================================================
// The egress proxy (issue 4 part 4, another branch) adds its figure here: a 10 MB download
// through the proxy vs direct on loopback, goal ≥ 0.8× direct. Until then it is null.
const proxyThroughput: null | { proxy_mb_s: number; direct_mb_s: number; ratio: number } = null;
// ============================================================================================

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
