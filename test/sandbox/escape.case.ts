/**
 * @module The escape suite, written once and run against each driver: every
 * case is an attack a tool could try from inside, and expects containment; after each one the
 * host (an HTTP server standing for the gateway) must still answer. The egress-proxy cases live
 * with the proxy. A driver may skip a case only by name, with a reason.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { RunOutcome, SandboxRunner } from '../../src/execution/sandbox/index.js';
import { HostProbe, LIMITS, NODE, NODE_BINDS, NODE_LIMITS, type Skips } from './drivers.js';

/** Prints {"connected":bool,"error":code} for a TCP connect to argv host/port. */
const CONNECT = `
const s = require('net').connect({ host: process.argv[1], port: Number(process.argv[2]), timeout: 1500 });
const done = (o) => { console.log(JSON.stringify(o)); process.exit(0); };
s.on('connect', () => done({ connected: true }));
s.on('error', (e) => done({ connected: false, error: e.code }));
s.on('timeout', () => done({ connected: false, error: 'timeout' }));`;

const RESOLVE = `
require('dns').lookup(process.argv[1], (e, a) => console.log(JSON.stringify({ resolved: !e, address: a ?? null })));`;

/** Host processes whose command line contains a marker (sandboxed processes are host processes too). */
/**
 * A `sleep` argument unique to this test process: another copy of the suite running on the same
 * host sleeps for other durations, so its sandboxes are never mistaken for survivors of ours.
 */
function sleepFor(seconds: number): string {
  return `${seconds}${String(process.pid).padStart(7, '0')}`;
}

/**
 * Waits (bounded, 3 s: far less than any marker's sleep) until no host process carries `marker`,
 * and returns what is left. A killed tree may take a moment to be reaped on a loaded host; a
 * process that was not killed sleeps on past the deadline and is reported.
 */
async function survivorsOf(marker: string): Promise<number[]> {
  const deadline = Date.now() + 3_000;
  let found = hostProcessesWith(marker);
  while (found.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    found = hostProcessesWith(marker);
  }
  return found;
}

function hostProcessesWith(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (cmd.includes(marker) && Number(name) !== process.pid) found.push(Number(name));
    } catch {
      // gone
    }
  }
  return found;
}

/**
 * Waits (≤ 2 s) until no host process carries the marker, then kills what is left so a failing
 * case leaves nothing running, and returns what it found. Never waits on success.
 */
async function leftoverProcesses(marker: string): Promise<number[]> {
  const deadline = Date.now() + 2_000;
  let found = hostProcessesWith(marker);
  while (found.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    found = hostProcessesWith(marker);
  }
  for (const pid of found) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  return found;
}

/** The entries of /dev every driver may show: device nodes a program needs, fd links, shm. */
const DEV_ENTRIES = [
  'fd',
  'full',
  'null',
  'random',
  'shm',
  'stderr',
  'stdin',
  'stdout',
  'tty',
  'urandom',
  'zero',
];
/**
 * gVisor's sentry fills /dev with its own emulated devices (never the host's); these extra
 * entries are its fuse and tun (net/) devices, which need capabilities the tool does not have,
 * and its pseudo-terminals.
 */
const GVISOR_DEV_ENTRIES = ['fuse', 'net', 'ptmx', 'pts'];

export function escapeSuite(runner: SandboxRunner, skips: Skips = {}): void {
  const probe = new HostProbe();
  let dataDir = '';
  const it = (name: string, fn: () => Promise<void>) =>
    skips[name] !== undefined
      ? test(name, { skip: skips[name] }, fn)
      : test(name, async () => {
          await fn();
          await probe.assertResponsive();
        });
  const node = (script: string, args: string[]): Promise<RunOutcome> =>
    runner.run({ argv: [NODE, '-e', script, ...args], limits: NODE_LIMITS, binds: NODE_BINDS });
  const json = (out: RunOutcome): Record<string, unknown> => {
    assert.equal(out.kind, 'ok', `${out.kind}: ${out.stderr}`);
    return JSON.parse(out.stdout) as Record<string, unknown>;
  };

  describe(`escape suite: ${runner.name}`, () => {
    before(async () => {
      assert.ok((await runner.probe()).available, `${runner.name} must work on the test host`);
      await probe.start();
      // A fake gateway data dir, world-readable on purpose: only invisibility can protect it.
      dataDir = mkdtempSync(join(tmpdir(), 'toolgate-escape-data-'));
      chmodSync(dataDir, 0o755);
      writeFileSync(join(dataDir, 'toolgate.db'), 'SQLite format 3 fake-db', { mode: 0o644 });
      writeFileSync(join(dataDir, 'master.key'), 'fake-master-key-material', { mode: 0o644 });
    });
    after(async () => {
      await probe.stop();
      rmSync(dataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    });

    it('cannot reach the cloud metadata address 169.254.169.254', async () => {
      const r = json(await node(CONNECT, ['169.254.169.254', '80']));
      assert.equal(r.connected, false);
    });

    it('cannot reach an outside host directly', async () => {
      const r = json(await node(CONNECT, ['93.184.216.34', '443']));
      assert.equal(r.connected, false);
    });

    it('cannot resolve a host name', async () => {
      const r = json(await node(RESOLVE, ['example.com']));
      assert.equal(r.resolved, false);
    });

    it("cannot connect to a toolgate port on the host's 127.0.0.1", async () => {
      const r = json(await node(CONNECT, ['127.0.0.1', String(probe.port)]));
      assert.equal(r.connected, false);
    });

    it('cannot write outside its scratch', async () => {
      const targets = [
        '/usr/x',
        '/etc/x',
        '/x',
        '/run/x',
        '/proc/sys/kernel/x',
        join(dataDir, 'x'),
      ];
      const out = await runner.run({
        argv: [
          'sh',
          '-c',
          'for p in "$@"; do (echo x > "$p") 2>/dev/null && echo "WROTE $p"; done; echo done',
          'sh',
          ...targets,
        ],
        limits: LIMITS,
      });
      assert.equal(out.stdout, 'done\n');
    });

    it('cannot read /etc/shadow or list /root', async () => {
      const out = await runner.run({
        argv: ['sh', '-c', 'cat /etc/shadow && echo READ; ls /root && echo LISTED; echo done'],
        limits: LIMITS,
      });
      assert.equal(out.stdout, 'done\n');
    });

    it("cannot see the gateway's data dir, database or master key", async () => {
      const out = await runner.run({
        argv: [
          'sh',
          '-c',
          'cat "$1/toolgate.db" "$1/master.key"; ls "$1"; echo done',
          'sh',
          dataDir,
        ],
        limits: LIMITS,
      });
      assert.equal(out.stdout, 'done\n');
      assert.ok(!out.stderr.includes('fake-master-key'));
    });

    it('cannot execute a file it wrote to scratch (noexec)', async () => {
      const out = await runner.run({
        argv: ['sh', '-c', 'cp /bin/true ./t && chmod +x ./t && ./t && echo EXECUTED; echo done'],
        limits: LIMITS,
      });
      assert.equal(out.stdout, 'done\n', out.stderr);
    });

    it('cannot gain privileges: setuid(0) and ptrace of a host process fail, no capabilities, no mount', async () => {
      const out = await runner.run({
        argv: [
          'perl',
          '-e',
          '$< = 0; $> = 0; print "euid=$>\\n"; my $r = syscall(101, 16, $ARGV[0], 0, 0); print "ptrace=$r\\n";',
          String(process.pid),
        ],
        limits: LIMITS,
      });
      assert.equal(out.kind, 'ok', out.stderr);
      // Never root: the sandbox user (65534, or the process driver's uid of the run).
      const euid = Number(/^euid=(\d+)\n/.exec(out.stdout)?.[1]);
      assert.ok(euid === 65_534 || (euid >= 100_000 && euid <= 165_535), out.stdout);
      assert.match(out.stdout, /\nptrace=-1\n$/);
      const caps = await runner.run({
        argv: [
          'sh',
          '-c',
          'grep -E "^(CapEff|NoNewPrivs)" /proc/self/status; mount -t tmpfs none /tmp 2>/dev/null && echo MOUNTED; echo done',
        ],
        limits: LIMITS,
      });
      assert.ok(caps.stdout.endsWith('done\n'));
      assert.ok(!caps.stdout.includes('MOUNTED'));
      const eff = /CapEff:\s*([0-9a-f]+)/.exec(caps.stdout)?.[1];
      if (eff !== undefined) assert.equal(BigInt(`0x${eff}`), 0n);
    });

    it('a fork bomb hits the process limit and the run ends', async () => {
      const out = await runner.run({
        argv: [
          'sh',
          '-c',
          `i=0; while [ $i -lt 500 ]; do sleep ${sleepFor(7.77)} & i=$((i+1)); done; echo spawned $i`,
        ],
        limits: { ...LIMITS, processes: 16, wall_time_ms: 4_000 },
      });
      assert.ok(!out.stdout.includes('spawned 500'), out.stdout);
      assert.ok(out.durationMs < 6_000);
      assert.deepEqual(await survivorsOf(`sleep ${sleepFor(7.77)}`), []);
    });

    it('a memory bomb ends with memory_limit', async () => {
      const out = await runner.run({
        argv: [NODE, '-e', 'const a = []; for (;;) a.push(Buffer.alloc(1 << 20, 1));'],
        limits: { ...LIMITS, memory_mb: 128 },
        binds: NODE_BINDS,
      });
      assert.equal(out.kind, 'memory_limit', `${out.kind}: ${out.stderr.slice(0, 300)}`);
    });

    it('one process holding four times its memory at once ends with memory_limit; its benign neighbour runs (attack round 18, U1)', async () => {
      // One allocation, touched and held: in gVisor it lived in the sandbox kernel's memory file,
      // which no host process maps, and 4 GB under a 64 MB limit answered ok.
      const hold = `const b = Buffer.alloc(${4 * 128} << 20, 1); setTimeout(() => console.log(b.length), 8000);`;
      const out = await runner.run({
        argv: [NODE, '-e', hold],
        limits: { ...LIMITS, memory_mb: 128, wall_time_ms: 15_000, cpu_ms: 10_000 },
        binds: NODE_BINDS,
      });
      assert.equal(out.kind, 'memory_limit', `${out.kind}: ${out.stderr.slice(0, 300)}`);
      const small = await runner.run({
        argv: [NODE, '-e', `const b = Buffer.alloc(32 << 20, 1); console.log(b.length);`],
        limits: { ...LIMITS, memory_mb: 128 },
        binds: NODE_BINDS,
      });
      assert.equal(small.kind, 'ok', `${small.kind}: ${small.stderr.slice(0, 300)}`);
    });

    it('memory kept in memfd files outside any mapping counts: memory_limit (attack round 18, U2)', async () => {
      // Files under RLIMIT_FSIZE each (the scratch cap), together past the limit, held open.
      const memfd = [
        'import os, time',
        'fds = []',
        'for i in range(40):',
        '    fd = os.memfd_create("m%d" % i)',
        '    for _ in range(6): os.write(fd, b"\\1" * (1 << 20))',
        '    fds.append(fd)',
        'time.sleep(8)',
        'print(len(fds))',
      ].join('\n');
      const out = await runner.run({
        argv: ['python3', '-c', memfd],
        limits: { ...LIMITS, memory_mb: 128, wall_time_ms: 15_000, cpu_ms: 10_000 },
      });
      assert.equal(out.kind, 'memory_limit', `${out.kind}: ${out.stderr.slice(0, 300)}`);
    });

    it('a System V shared memory segment made in a run goes with it; the host never holds it (attack round 18, U3)', async () => {
      // In the process driver a segment outlived the call (1 GB after a 64 MB run), and a later
      // run under another uid read and overwrote it.
      const out = await runner.run({
        argv: [
          'sh',
          '-c',
          'ipcmk -M 65536 >/dev/null && ipcs -m | awk \'$1 ~ /^0x/ && $1 != "0x00000000" { print $1 }\'',
        ],
        limits: LIMITS,
      });
      assert.equal(out.kind, 'ok', `${out.kind}: ${out.stderr.slice(0, 300)}`);
      const keys = out.stdout.trim().split('\n').filter(Boolean);
      assert.ok(keys.length >= 1, `the run made a segment: ${out.stdout}`);
      const host = await new Promise<string>((resolve) =>
        execFile('ipcs', ['-m'], (_err, stdout) => resolve(stdout)),
      );
      for (const key of keys)
        assert.ok(!host.includes(key), `segment ${key} is on the host:\n${host}`);
    });

    it('filling scratch with one big file ends with scratch_full', async () => {
      const out = await runner.run({
        argv: ['sh', '-c', 'head -c 67108864 /dev/zero > big'],
        limits: { ...LIMITS, scratch_mb: 4 },
      });
      assert.equal(out.kind, 'scratch_full', `${out.kind}: ${out.stderr}`);
    });

    it('filling scratch with many files ends with scratch_full', async () => {
      const out = await runner.run({
        argv: [
          'sh',
          '-c',
          'i=0; while [ $i -lt 64 ]; do head -c 1048576 /dev/zero > f$i || exit 1; i=$((i+1)); done',
        ],
        limits: { ...LIMITS, scratch_mb: 4 },
      });
      assert.equal(out.kind, 'scratch_full', `${out.kind}: ${out.stderr}`);
    });

    it('flooding stdout ends with output_limit, truncated and marked', async () => {
      const out = await runner.run({ argv: ['yes', 'flood'], limits: LIMITS });
      assert.equal(out.kind, 'output_limit');
      assert.ok(out.stdoutTruncated);
      assert.ok(Buffer.byteLength(out.stdout) < LIMITS.output_bytes + 100);
    });

    it('sleeping past the timeout ends with timeout and kills the tree', async () => {
      const out = await runner.run({
        argv: ['sh', '-c', `sleep ${sleepFor(8.88)} & sleep ${sleepFor(8.88)}`],
        limits: { ...LIMITS, wall_time_ms: 500 },
      });
      assert.equal(out.kind, 'timeout');
      assert.deepEqual(await survivorsOf(`sleep ${sleepFor(8.88)}`), []);
    });

    it('a background process does not outlive the run', async () => {
      const out = await runner.run({
        argv: ['sh', '-c', `sleep ${sleepFor(9.12)} >/dev/null 2>&1 & echo "{}"`],
        limits: LIMITS,
      });
      assert.equal(out.kind, 'ok');
      assert.deepEqual(await survivorsOf(`sleep ${sleepFor(9.12)}`), []);
    });

    it('a detached process (setsid, nohup, double fork) does not outlive the run', async () => {
      const out = await runner.run({
        argv: [
          'sh',
          '-c',
          '(setsid nohup sleep 300.41 >/dev/null 2>&1 < /dev/null &); ' +
            '(nohup sh -c "sleep 300.42 >/dev/null 2>&1 < /dev/null &" >/dev/null 2>&1 &); ' +
            'sleep 0.2; echo "{}"',
        ],
        limits: LIMITS,
      });
      assert.equal(out.kind, 'ok', out.stderr);
      assert.deepEqual(await leftoverProcesses('sleep 300.4'), []);
    });

    it('/dev holds only the expected device nodes and is read-only', async () => {
      const out = await runner.run({
        // A glob, not ls: gVisor's ls cannot stat its /dev.
        argv: [
          'sh',
          '-c',
          'for e in /dev/* /dev/.[!.]*; do if [ -e "$e" ] || [ -L "$e" ]; then basename "$e"; fi; done; ' +
            '(echo x > /dev/planted) 2>/dev/null && echo PLANTED; true',
        ],
        limits: LIMITS,
      });
      assert.equal(out.kind, 'ok', out.stderr);
      const entries = out.stdout.trim().split('\n');
      assert.ok(!entries.includes('PLANTED'), 'a file was created in /dev');
      const allowed = [...DEV_ENTRIES, ...(runner.name === 'gvisor' ? GVISOR_DEV_ENTRIES : [])];
      assert.deepEqual(
        entries.filter((e) => !allowed.includes(e)),
        [],
      );
      assert.ok(entries.includes('null') && entries.includes('urandom'), out.stdout);
    });

    it('/dev/shm takes no more than the scratch cap, shared with /tmp', async () => {
      // 2 MiB in the scratch first: /dev/shm may hold at most what is left of the 4 MiB cap.
      const out = await runner.run({
        argv: [
          'sh',
          '-c',
          'head -c 2097152 /dev/zero > ./first || exit 3; i=0; while [ $i -lt 64 ]; do ' +
            'head -c 1048576 /dev/zero > /dev/shm/f$i 2>/dev/null || break; i=$((i+1)); done; ' +
            'echo $i',
        ],
        limits: { ...LIMITS, scratch_mb: 4 },
      });
      assert.equal(out.kind, 'ok', `${out.kind}: ${out.stderr}`);
      assert.ok(Number(out.stdout.trim()) <= 2, `wrote ${out.stdout.trim()} MiB to /dev/shm`);
    });

    it('cannot run a program copied to /dev/shm (noexec)', async () => {
      const out = await runner.run({
        argv: [
          'sh',
          '-c',
          'cp /bin/true /dev/shm/t 2>/dev/null && chmod +x /dev/shm/t && /dev/shm/t && echo EXECUTED; echo done',
        ],
        limits: LIMITS,
      });
      assert.equal(out.stdout, 'done\n', out.stderr);
    });

    it('a program may use /dev/shm within the scratch cap, and the next run finds it empty', async () => {
      const out = await runner.run({
        argv: ['sh', '-c', 'echo shared > /dev/shm/seg && cat /dev/shm/seg'],
        limits: LIMITS,
      });
      assert.equal(out.kind, 'ok', out.stderr);
      assert.equal(out.stdout, 'shared\n');
      const next = await runner.run({ argv: ['ls', '-A', '/dev/shm'], limits: LIMITS });
      assert.equal(next.kind, 'ok', next.stderr);
      assert.equal(next.stdout, '');
    });

    it('a background process in a new session does not outlive the run', async () => {
      const out = await runner.run({
        argv: [
          'sh',
          '-c',
          `setsid sleep ${sleepFor(9.34)} >/dev/null 2>&1 < /dev/null & echo "{}"`,
        ],
        limits: LIMITS,
      });
      assert.equal(out.kind, 'ok');
      assert.deepEqual(await survivorsOf(`sleep ${sleepFor(9.34)}`), []);
    });
  });
}
