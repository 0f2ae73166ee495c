/**
 * @module The memory limit holds against memory a tool keeps outside its processes' pages (attack
 * round 19): pipe buffers pinned by vmsplice (V1), detached System V shm (V2), memfds in flight
 * over SCM_RIGHTS (V3) and System V message queues (V4) — each ends with memory_limit in every
 * driver where it applies, beside a benign neighbour just under the limit that succeeds; no run
 * leaves its cgroup behind. And how the host's cgroup is found (v1, v2, none) on fake trees.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  cgroupHost,
  findCgroupHost,
  memoryEnforcement,
  RunCgroup,
  type SandboxRunner,
} from '../../src/execution/sandbox/index.js';
import { DRIVERS, LIMITS, NODE, NODE_BINDS } from './drivers.js';

const MB = 1 << 20;
const LIMIT_MB = 64;
/** Each attack tries to hold four times the limit. */
const ATTACK_MB = 4 * LIMIT_MB;

/** The attacks of attack round 19 (mem19/mem.py), bounded: the mode is argv[1]. */
const ATTACK = `
import sys, os, ctypes, socket, array, fcntl, mmap, time
mode = sys.argv[1]; MB = 1 << 20; goal = ${ATTACK_MB}
libc = ctypes.CDLL(None, use_errno=True)
if mode == 'vmsplice':
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    class IOV(ctypes.Structure): _fields_ = [('b', ctypes.c_void_p), ('l', ctypes.c_size_t)]
    H = 2 * MB; pipes = []; w = None; slots = 0
    for i in range(goal // 2):
        raw = libc.mmap(None, 2 * H, 3, 0x22, -1, 0); base = (raw + H - 1) & ~(H - 1)
        libc.madvise(base, H, 14); ctypes.memset(base, 1, H)
        if w is None or slots >= 16:
            r, w = os.pipe(); pipes.append((r, w)); slots = 0
        if libc.vmsplice(w, ctypes.byref(IOV(base, 4096)), 1, 0) < 0:
            print('vmsplice errno', ctypes.get_errno()); sys.exit(0)
        slots += 1; libc.munmap(raw, 2 * H)
elif mode == 'sysv':
    libc.shmat.restype = ctypes.c_void_p; libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
    for k in range(goal // 32):
        sid = libc.shmget(0, ctypes.c_size_t(32 * MB), 0o1600)
        p = libc.shmat(sid, None, 0); ctypes.memset(p, 1, 32 * MB); libc.shmdt(ctypes.c_void_p(p))
elif mode == 'scm':
    s1, s2 = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM); buf = b'\\1' * MB
    for j in range(goal // 4):
        fd = os.memfd_create('x')
        for i in range(4): os.write(fd, buf)
        s1.sendmsg([b'x'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [fd]))]); os.close(fd)
elif mode == 'msgq':
    class M(ctypes.Structure): _fields_ = [('t', ctypes.c_long), ('d', ctypes.c_char * 8000)]
    m = M(); m.t = 1
    for k in range(goal * MB // 16000):
        q = libc.msgget(0, 0o1600)
        while libc.msgsnd(q, ctypes.byref(m), 8000, 0o4000) == 0: pass
elif mode == 'tcp':
    # W1 (attack round 20): loopback TCP buffers, sent from both ends and never read.
    ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 30)
    ls.bind(('127.0.0.1', 0)); ls.listen(64); total = 0; keep = []; chunk = b'\\1' * 65536
    # With argv[2]: that many MB of its own pages first, then sockets for the same again.
    held = bytearray(int(sys.argv[2]) * MB) if len(sys.argv) > 2 else b''
    for i in range(0, len(held), 4096): held[i] = 1
    if held: goal = len(held) // MB
    for i in range(24):
        c = socket.socket(); c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 30)
        c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 30)
        c.connect(ls.getsockname()); s, _ = ls.accept(); keep += [c, s]
        for x in (c, s):
            x.setblocking(False)
            try:
                while total < goal * MB: total += x.send(chunk)
            except OSError: pass
        if total >= goal * MB: break
    print('queued', total // MB)
    if held: time.sleep(1)
elif mode == 'tcp-benign':
    # Its neighbour: a few MB through loopback TCP, read as they come.
    ls = socket.socket(); ls.bind(('127.0.0.1', 0)); ls.listen(1)
    c = socket.socket(); c.connect(ls.getsockname()); s, _ = ls.accept(); got = 0
    for i in range(64):
        c.sendall(b'\\1' * 65536)
        while got < (i + 1) * 65536: got += len(s.recv(1 << 20))
elif mode == 'benign':
    held = bytearray(int(sys.argv[2]) * MB)
    for i in range(0, len(held), 4096): held[i] = 1
print('held', mode)
`;

const ATTACK_LIMITS = { ...LIMITS, memory_mb: LIMIT_MB, wall_time_ms: 20_000, cpu_ms: 15_000 };

/** Python's own memory (interpreter, modules) beside what the neighbour allocates. */
const BENIGN_MB = LIMIT_MB - 24;

const ATTACKS: readonly { mode: string; finding: string; skip?: readonly string[] }[] = [
  // gVisor's kernel has no vmsplice (ENOSYS): the attack does not apply there.
  { mode: 'vmsplice', finding: 'V1', skip: ['gvisor'] },
  { mode: 'sysv', finding: 'V2' },
  { mode: 'scm', finding: 'V3' },
  { mode: 'msgq', finding: 'V4' },
];

function python(runner: SandboxRunner, ...args: string[]) {
  return runner.run({ argv: ['python3', '-c', ATTACK, ...args], limits: ATTACK_LIMITS });
}

/** Run cgroups this process made that are still there. */
function ourCgroups(): string[] {
  const host = cgroupHost();
  if (host.version === null) return [];
  return readdirSync(host.parent).filter((n) => n.startsWith(`toolgate-run-${process.pid}-`));
}

const host = cgroupHost();
const noCgroup =
  host.version === null ? `no cgroup on this host (${host.reason}): rlimit and watch only` : false;

describe('the memory limit holds what the kernel charges to a run (attack round 19)', {
  skip: noCgroup,
}, () => {
  describe('every driver', { concurrency: 3 }, () => {
    for (const runner of DRIVERS) {
      test(`${runner.name}: V1–V4 end with memory_limit; the neighbour under the limit answers`, async () => {
        const probe = await runner.probe();
        assert.ok(probe.available, `${runner.name}: ${probe.detail}`);
        for (const attack of ATTACKS) {
          if (attack.skip?.includes(runner.name)) continue;
          const [out, neighbour] = await Promise.all([
            python(runner, attack.mode),
            python(runner, 'benign', String(BENIGN_MB)),
          ]);
          const what = `${runner.name} ${attack.finding} ${attack.mode}`;
          assert.equal(
            out.kind,
            'memory_limit',
            `${what}: ${out.kind} ${out.stdout} ${out.stderr}`,
          );
          assert.equal(out.memory?.enforcement, memoryEnforcement().enforcement, what);
          assert.equal(neighbour.kind, 'ok', `${what} neighbour: ${neighbour.stderr.slice(-300)}`);
          assert.equal(neighbour.stdout, 'held benign\n');
          const peak = neighbour.memory?.peakMb ?? 0;
          assert.ok(peak >= BENIGN_MB && peak <= LIMIT_MB + 64, `${what} neighbour peak ${peak}`);
        }
      });
    }
  });

  test('a Node tool that fills four times its memory ends with memory_limit, not exit_nonzero (attack round 18, U6)', async () => {
    const fill = `const b = Buffer.alloc(${4 * LIMIT_MB * 2} * 1024 * 1024); b.fill(1); console.log(b.length)`;
    const outs = await Promise.all(
      DRIVERS.map((runner) =>
        runner.run({
          argv: [NODE, '-e', fill],
          limits: { ...ATTACK_LIMITS, memory_mb: 2 * LIMIT_MB },
          binds: NODE_BINDS,
        }),
      ),
    );
    for (const out of outs) {
      assert.equal(
        out.kind,
        'memory_limit',
        `${out.driver}: ${out.kind} ${out.stderr.slice(0, 300)}`,
      );
    }
  });

  test('namespace: loopback TCP buffers count against the limit (attack round 20, W1); a TCP neighbour answers', async () => {
    const runner = DRIVERS.find((r) => r.name === 'namespace') as SandboxRunner;
    const [out, half, neighbour] = await Promise.all([
      python(runner, 'tcp'),
      // Under the limit in pages and in sockets, over it together.
      python(runner, 'tcp', String(LIMIT_MB / 2 + 8)),
      python(runner, 'tcp-benign'),
    ]);
    assert.equal(out.kind, 'memory_limit', `W1 tcp: ${out.kind} ${out.stdout} ${out.stderr}`);
    assert.equal(half.kind, 'memory_limit', `W1 tcp+pages: ${half.kind} ${half.stdout}`);
    assert.equal(neighbour.kind, 'ok', `W1 neighbour: ${neighbour.stderr.slice(-300)}`);
    assert.equal(neighbour.stdout, 'held tcp-benign\n');
  });

  test('a killed run (timeout) ends as one, and its cgroup goes with it', async () => {
    const runner = DRIVERS[0] as SandboxRunner;
    const out = await runner.run({
      argv: ['sh', '-c', 'sleep 30 & sleep 30'],
      limits: { ...LIMITS, wall_time_ms: 300 },
    });
    assert.equal(out.kind, 'timeout');
  });

  test('no run left its cgroup behind', () => {
    assert.deepEqual(ourCgroups(), []);
  });
});

describe('finding where run cgroups go', () => {
  const fake = (): { root: string; proc: string } => {
    const root = mkdtempSync(join(tmpdir(), 'toolgate-cgfake-'));
    const proc = join(root, 'proc');
    mkdirSync(proc);
    return { root, proc };
  };

  test('cgroup v1: a child of our own memory cgroup', (t) => {
    const { root, proc } = fake();
    t.after(() => rmSync(root, { recursive: true, force: true }));
    const mount = join(root, 'memory');
    mkdirSync(join(mount, 'svc', 'gw'), { recursive: true });
    writeFileSync(
      join(proc, 'mountinfo'),
      `35 31 0:32 / ${mount} rw,relatime - cgroup cgroup rw,memory\n41 31 0:38 / ${root}/u rw - cgroup2 cgroup2 rw\n`,
    );
    writeFileSync(join(proc, 'cgroup'), '5:devices:/\n4:memory:/svc/gw\n0::/\n');
    const found = findCgroupHost({}, proc);
    assert.deepEqual(found, { version: 1, parent: join(mount, 'svc', 'gw') });
    assert.equal(memoryEnforcement(found).enforcement, 'cgroup-v1');
  });

  test('cgroup v2: toolgate moves into a leaf and delegates memory to its runs', (t) => {
    const { root, proc } = fake();
    t.after(() => rmSync(root, { recursive: true, force: true }));
    const own = join(root, 'unified', 'toolgate.service');
    mkdirSync(own, { recursive: true });
    writeFileSync(join(own, 'cgroup.controllers'), 'cpu memory pids\n');
    writeFileSync(join(own, 'cgroup.subtree_control'), '\n');
    writeFileSync(
      join(proc, 'mountinfo'),
      `30 23 0:26 / ${root}/unified rw,nosuid - cgroup2 cgroup2 rw\n`,
    );
    writeFileSync(join(proc, 'cgroup'), '0::/toolgate.service\n');
    const found = findCgroupHost({}, proc);
    assert.deepEqual(found, { version: 2, parent: own });
    assert.equal(
      readFileSync(join(own, 'toolgate-gateway', 'cgroup.procs'), 'utf8'),
      `${process.pid}`,
    );
    assert.equal(readFileSync(join(own, 'cgroup.subtree_control'), 'utf8'), '+memory');
    // A run's cgroup there: its limit, no swap, the whole run killed at the limit.
    writeFileSync(join(own, 'x'), '');
    for (const f of ['memory.swap.max', 'memory.oom.group']) writeFileSync(join(own, f), '');
    const cg = RunCgroup.create(found as { version: 2; parent: string }, 64);
    assert.equal(readFileSync(join(cg.dir, 'memory.max'), 'utf8'), String(64 * MB));
    writeFileSync(join(cg.dir, 'memory.events'), 'low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n');
    writeFileSync(join(cg.dir, 'memory.peak'), String(50 * MB));
    assert.deepEqual(cg.read(), { oomKills: 1, peakMb: 50 });
  });

  test('cgroup v2 without the memory controller delegated: none, and the probe says so', (t) => {
    const { root, proc } = fake();
    t.after(() => rmSync(root, { recursive: true, force: true }));
    const own = join(root, 'unified', 'user.slice');
    mkdirSync(own, { recursive: true });
    writeFileSync(join(own, 'cgroup.controllers'), 'cpu pids\n');
    writeFileSync(
      join(proc, 'mountinfo'),
      `30 23 0:26 / ${root}/unified rw - cgroup2 cgroup2 rw\n`,
    );
    writeFileSync(join(proc, 'cgroup'), '0::/user.slice\n');
    const found = findCgroupHost({}, proc);
    assert.equal(found.version, null);
    const { enforcement, note } = memoryEnforcement(found);
    assert.equal(enforcement, 'rlimit-watch');
    assert.match(note, /NOT a kernel limit.*memory controller is not delegated/);
  });

  test('TOOLGATE_SANDBOX_CGROUP names the folder; no cgroup mount at all: none', (t) => {
    const { root, proc } = fake();
    t.after(() => rmSync(root, { recursive: true, force: true }));
    const delegated = join(root, 'unified', 'runs');
    mkdirSync(delegated, { recursive: true });
    writeFileSync(join(delegated, 'cgroup.controllers'), 'memory\n');
    writeFileSync(join(delegated, 'cgroup.subtree_control'), 'memory\n');
    writeFileSync(
      join(proc, 'mountinfo'),
      `30 23 0:26 / ${root}/unified rw - cgroup2 cgroup2 rw\n`,
    );
    writeFileSync(join(proc, 'cgroup'), '0::/elsewhere\n');
    assert.deepEqual(findCgroupHost({ TOOLGATE_SANDBOX_CGROUP: delegated }, proc), {
      version: 2,
      parent: delegated,
    });
    writeFileSync(join(proc, 'mountinfo'), '22 1 0:21 / /proc rw - proc proc rw\n');
    assert.equal(findCgroupHost({}, proc).version, null);
  });

  test('TOOLGATE_SANDBOX_CGROUP naming no memory cgroup is refused, nothing made in it (attack round 20, W7)', (t) => {
    const { root, proc } = fake();
    t.after(() => rmSync(root, { recursive: true, force: true }));
    const mount = join(root, 'memory');
    mkdirSync(join(mount, 'runs'), { recursive: true });
    const plain = join(root, 'etc');
    mkdirSync(plain);
    writeFileSync(
      join(proc, 'mountinfo'),
      `35 31 0:32 / ${mount} rw,relatime - cgroup cgroup rw,memory\n36 31 0:33 / ${root}/cpu rw - cgroup cgroup rw,cpu\n`,
    );
    writeFileSync(join(proc, 'cgroup'), '4:memory:/\n');
    mkdirSync(join(root, 'cpu', 'x'), { recursive: true });
    const refused = [
      [plain, /not inside a mounted cgroup hierarchy with the memory controller/],
      ['../../etc', /absolute/],
      [`${mount}/runs/../../etc`, /\.\./],
      [join(root, 'cpu', 'x'), /memory controller/],
      [join(root, 'nowhere'), /not inside|does not exist|no such/i],
    ] as const;
    for (const [dir, why] of refused) {
      const found = findCgroupHost({ TOOLGATE_SANDBOX_CGROUP: dir }, proc);
      assert.equal(found.version, null, dir);
      assert.match((found as { reason: string }).reason, /TOOLGATE_SANDBOX_CGROUP/, dir);
      assert.match((found as { reason: string }).reason, why, dir);
      // Deny by default: runs are refused, and doctor says why.
      assert.equal((found as { refused?: boolean }).refused, true, dir);
      assert.match(memoryEnforcement(found).note, /runs are refused/, dir);
    }
    assert.deepEqual(readdirSync(plain), []);
    assert.deepEqual(readdirSync(join(root, 'cpu', 'x')), []);
    // Its benign neighbour: a folder of the memory hierarchy.
    assert.deepEqual(findCgroupHost({ TOOLGATE_SANDBOX_CGROUP: join(mount, 'runs') }, proc), {
      version: 1,
      parent: join(mount, 'runs'),
    });
  });

  test('a run cgroup never signals pid 0, 1 or a negative pid read from cgroup.procs (W7)', (t) => {
    const { root } = fake();
    t.after(() => rmSync(root, { recursive: true, force: true }));
    const cg = RunCgroup.create({ version: 1, parent: root }, 64);
    writeFileSync(cg.procsFile, '0\n1\n-1\n-42\nx\n\n');
    const kill = t.mock.method(process, 'kill', () => true);
    cg.kill();
    writeFileSync(cg.procsFile, '0\n424242\n');
    cg.kill();
    const pids = kill.mock.calls.map((c) => c.arguments[0]);
    kill.mock.restore();
    assert.deepEqual(pids, [424242]);
  });
});
