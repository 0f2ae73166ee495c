/**
 * @module The SandboxRunner conformance suite, written once and run against every driver
 * (docs/architecture.md §2). A driver may skip a case only by name, with a reason.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_SANDBOX_LIMITS } from '../../src/domain/catalog/index.js';
import {
  cgroupHost,
  DATA_RESERVE_MB,
  memoryEnforcement,
  type SandboxRunner,
  TRUNCATION_MARK,
} from '../../src/execution/sandbox/index.js';
import { LIMITS, NODE, NODE_BINDS, type Skips } from './drivers.js';

export function conformanceSuite(runner: SandboxRunner, skips: Skips = {}): void {
  const it = (name: string, fn: () => Promise<void>) =>
    skips[name] !== undefined ? test(name, { skip: skips[name] }, fn) : test(name, fn);

  describe(`SandboxRunner conformance: ${runner.name}`, { concurrency: 3 }, () => {
    let dir = '';
    before(async () => {
      const probe = await runner.probe();
      assert.ok(probe.available, `${runner.name} must work on the test host: ${probe.detail}`);
      dir = mkdtempSync(join(tmpdir(), 'toolgate-conf-'));
      chmodSync(dir, 0o755);
      writeFileSync(join(dir, 'tool-data.txt'), 'bound file\n', { mode: 0o644 });
    });
    after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }));

    it('passes argv verbatim, never through a shell', async () => {
      const tricky = ['a b', '$(id)', '`id`', "'; echo pwned", '*', '\\n'];
      const out = await runner.run({
        argv: ['printf', '%s\\n', ...tricky],
        limits: LIMITS,
      });
      assert.equal(out.kind, 'ok', out.stderr);
      assert.deepEqual(out.stdout.split('\n').slice(0, -1), tricky);
    });

    it('delivers stdin bytes and closes stdin', async () => {
      const json = JSON.stringify({ query: 'x'.repeat(10_000), n: 1 });
      const out = await runner.run({ argv: ['cat'], stdin: json, limits: LIMITS });
      assert.equal(out.kind, 'ok', out.stderr);
      assert.equal(out.stdout, json);
    });

    it('gives the program only the allow-listed environment', async () => {
      process.env.TOOLGATE_TEST_LEAK = 'must-not-leak';
      const out = await runner.run({
        argv: ['env'],
        env: { TOOL_SETTING: 'on' },
        limits: LIMITS,
      });
      delete process.env.TOOLGATE_TEST_LEAK;
      assert.equal(out.kind, 'ok', out.stderr);
      const names = out.stdout
        .trim()
        .split('\n')
        .map((l) => l.slice(0, l.indexOf('=')))
        .sort();
      assert.ok(!out.stdout.includes('must-not-leak'));
      assert.ok(names.includes('TOOL_SETTING'));
      for (const n of names) {
        assert.ok(
          ['HOME', 'LANG', 'PATH', 'PWD', 'TMPDIR', 'TOOL_SETTING'].includes(n),
          `unexpected variable ${n}`,
        );
      }
    });

    it('reports a nonzero exit as exit_nonzero with its code', async () => {
      const out = await runner.run({ argv: ['sh', '-c', 'echo bad >&2; exit 7'], limits: LIMITS });
      assert.equal(out.kind, 'exit_nonzero');
      assert.equal(out.exitCode, 7);
      assert.equal(out.stderr, 'bad\n');
    });

    it('reports a missing program as a failure, not success', async () => {
      const out = await runner.run({ argv: ['/usr/bin/no-such-tool-xyz'], limits: LIMITS });
      assert.ok(out.kind === 'exit_nonzero' || out.kind === 'spawn_failed', out.kind);
    });

    it('sets the open-files limit from the definition', async () => {
      const out = await runner.run({
        argv: ['sh', '-c', 'ulimit -n'],
        limits: { ...LIMITS, open_files: 40 },
      });
      assert.equal(out.kind, 'ok', out.stderr);
      assert.equal(out.stdout.trim(), '40');
    });

    it('bounds the data segment by the memory limit plus what runtimes reserve, unless a cgroup holds memory', async () => {
      const out = await runner.run({
        argv: ['sh', '-c', 'ulimit -d'],
        limits: { ...LIMITS, memory_mb: 300 },
      });
      assert.equal(out.kind, 'ok', out.stderr);
      // With a cgroup per run the kernel charges what the tool uses; an address-space limit would
      // only refuse runtimes that reserve more than they use (memory-cgroup.ts).
      const expected =
        cgroupHost().version === null ? String((300 + DATA_RESERVE_MB) * 1024) : 'unlimited';
      assert.equal(out.stdout.trim(), expected);
      assert.equal(out.memory?.enforcement, memoryEnforcement().enforcement);
    });

    it('a Node tool and a Python tool start and answer under the default limits', async () => {
      // Node 24 reserves a 512 MB code range at start: a data limit of the memory limit alone
      // (256 MB) stopped it before its first line. Memory is held by the host's watch instead.
      const node = await runner.run({
        argv: [NODE, '-e', 'process.stdout.write(JSON.stringify({ node: process.versions.node }))'],
        limits: DEFAULT_SANDBOX_LIMITS,
        binds: NODE_BINDS,
      });
      assert.equal(node.kind, 'ok', node.stderr.slice(0, 300));
      assert.equal(JSON.parse(node.stdout).node, process.versions.node);
      const python = await runner.run({
        argv: [
          'python3',
          '-c',
          'import json, sys; print(json.dumps({"python": sys.version_info[0]}))',
        ],
        limits: DEFAULT_SANDBOX_LIMITS,
      });
      assert.equal(python.kind, 'ok', python.stderr.slice(0, 300));
      assert.equal(JSON.parse(python.stdout).python, 3);
    });

    it('ends a run at its wall-clock limit with a timeout outcome', async () => {
      const out = await runner.run({
        argv: ['sleep', '30'],
        limits: { ...LIMITS, wall_time_ms: 400 },
      });
      assert.equal(out.kind, 'timeout');
      assert.ok(out.durationMs < 3_000, `took ${out.durationMs} ms`);
    });

    it('ends a CPU-bound run at its CPU limit with a cpu_limit outcome', async () => {
      const out = await runner.run({
        argv: ['sh', '-c', 'while :; do :; done'],
        limits: { ...LIMITS, cpu_ms: 1_000, wall_time_ms: 8_000 },
      });
      assert.equal(out.kind, 'cpu_limit');
      assert.ok(out.durationMs < 6_000, `took ${out.durationMs} ms`);
    });

    it('caps stdout, marks the cut, and ends the run with output_limit', async () => {
      const out = await runner.run({ argv: ['yes'], limits: { ...LIMITS, output_bytes: 4_096 } });
      assert.equal(out.kind, 'output_limit');
      assert.ok(out.stdoutTruncated);
      assert.ok(out.stdout.endsWith(TRUNCATION_MARK));
      assert.equal(Buffer.byteLength(out.stdout) - Buffer.byteLength(TRUNCATION_MARK), 4_096);
    });

    it('caps stderr the same way', async () => {
      const out = await runner.run({
        argv: ['sh', '-c', 'yes >&2'],
        limits: { ...LIMITS, output_bytes: 2_048 },
      });
      assert.equal(out.kind, 'output_limit');
      assert.ok(out.stderrTruncated);
    });

    it('makes a bound file readable at its target, read-only', async () => {
      const file = join(dir, 'tool-data.txt');
      const out = await runner.run({
        argv: ['sh', '-c', `cat ${file}; echo x >> ${file} 2>/dev/null && echo WROTE`],
        limits: LIMITS,
        binds: [{ source: file, target: file }],
      });
      assert.equal(out.stdout, 'bound file\n', `${out.kind}: ${out.stderr}`);
    });

    it('runs in a writable scratch directory as its cwd', async () => {
      const out = await runner.run({
        argv: ['sh', '-c', 'echo hi > note && cat note && pwd'],
        limits: LIMITS,
      });
      assert.equal(out.kind, 'ok', out.stderr);
      assert.ok(out.stdout.startsWith('hi\n'));
    });

    it('starts every run with an empty scratch, whatever the run before left there', async () => {
      const first = await runner.run({
        argv: ['sh', '-c', 'echo secret > left-behind; mkdir -p d/e; chmod 000 d; ls'],
        limits: LIMITS,
      });
      assert.equal(first.kind, 'ok', first.stderr);
      const killed = await runner.run({
        argv: ['sh', '-c', 'echo secret > killed-behind; sleep 30'],
        limits: { ...LIMITS, wall_time_ms: 300 },
      });
      assert.equal(killed.kind, 'timeout');
      for (let i = 0; i < 3; i++) {
        const next = await runner.run({ argv: ['sh', '-c', 'ls -A; echo end'], limits: LIMITS });
        assert.equal(next.stdout, 'end\n');
      }
    });

    it('keeps a long-lived process open and kills it on close', async () => {
      const proc = await runner.start({ argv: ['cat'], limits: LIMITS });
      const echoed = new Promise<string>((resolve) =>
        proc.stdout.once('data', (d: Buffer) => resolve(d.toString())),
      );
      proc.stdin.write('{"jsonrpc":"2.0"}\n');
      assert.equal(await echoed, '{"jsonrpc":"2.0"}\n');
      const ended = await proc.close();
      assert.equal(ended.kind, 'ok');
    });
  });
}
