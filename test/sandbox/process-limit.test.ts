/**
 * @module The process limit belongs to one run: RLIMIT_NPROC counts per host
 * uid, so a sandbox that holds processes (a fork bomb stopped at its own limit) must not use up
 * the limit of a concurrent run in another driver, or of another process-driver run. The process
 * driver runs each call as a uid of its own, claimed across processes by an abstract socket.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import {
  GvisorRunner,
  NamespaceRunner,
  ProcessRunner,
  type SandboxProcess,
  type SandboxRunner,
} from '../../src/execution/sandbox/index.js';
import { parseUidRange, RunUidPool } from '../../src/execution/sandbox/process/run-uid-pool.js';
import { LIMITS } from './drivers.js';

/**
 * Starts 20 `sleep`s, says "held", then keeps them until it is closed: a fork bomb stopped just
 * below its own limit of 24 (a shell that hits the limit exits, which would end the hold).
 */
const HOLD =
  'i=0; while [ $i -lt 20 ]; do sleep 20.51 & i=$((i+1)); done; echo held; cat >/dev/null';
const HOLDER_LIMITS = { ...LIMITS, processes: 24, wall_time_ms: 20_000 };

/** Needs 8 processes at once under a limit of 16: fails when others' processes are counted. */
const NEEDS_EIGHT = 'for i in 1 2 3 4 5 6 7 8; do sleep 0.3 & done; wait && echo ok';

async function hold(runner: SandboxRunner): Promise<SandboxProcess> {
  const proc = await runner.start({ argv: ['sh', '-c', HOLD], limits: HOLDER_LIMITS });
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    proc.stdout.on('data', (d: Buffer) => {
      seen += d.toString();
      if (seen.includes('held')) resolve();
    });
    void proc.exited.then((o) => reject(new Error(`holder ended: ${o.kind}`)));
  });
  return proc;
}

describe('the process limit belongs to one run', { concurrency: 1 }, () => {
  const processes = new ProcessRunner();

  /** Holder driver → the driver of the concurrent run that must still get its 8 processes. */
  const pairs: readonly [SandboxRunner, SandboxRunner][] = [
    [new NamespaceRunner(), processes],
    [new GvisorRunner(), processes],
    [new ProcessRunner(), processes],
    [new ProcessRunner(), new NamespaceRunner()],
    [new ProcessRunner(), new GvisorRunner()],
  ];
  for (const [holderRunner, victim] of pairs) {
    test(`a fork bomb held in a ${holderRunner.name} run does not stop a concurrent ${victim.name} run`, async () => {
      const holder = await hold(holderRunner);
      try {
        const out = await victim.run({
          argv: ['sh', '-c', NEEDS_EIGHT],
          limits: { ...LIMITS, processes: 16 },
        });
        assert.equal(out.kind, 'ok', `${out.kind}: ${out.stderr}`);
        assert.equal(out.stdout, 'ok\n');
      } finally {
        await holder.close();
      }
    });
  }

  test('concurrent process-driver runs run as distinct uids from the range', async () => {
    const runs = await Promise.all(
      [1, 2, 3].map(() =>
        processes.run({ argv: ['sh', '-c', 'id -u; sleep 0.3'], limits: LIMITS }),
      ),
    );
    const uids = runs.map((r) => {
      assert.equal(r.kind, 'ok', r.stderr);
      return Number(r.stdout.trim());
    });
    assert.equal(new Set(uids).size, 3, `uids ${uids.join(',')}`);
    for (const uid of uids) assert.ok(uid >= 100_000 && uid <= 165_535, `uid ${uid}`);
  });
});

describe('sandbox uid claims', () => {
  const children: ChildProcess[] = [];
  after(() => {
    for (const c of children) c.kill('SIGKILL');
  });

  /** A separate process (another gateway) that holds the claim on `uid` until it is killed. */
  async function otherProcessHolds(uid: number): Promise<ChildProcess> {
    const child = spawn(
      process.execPath,
      [
        '-e',
        `require('net').createServer().listen('\\0toolgate-run-uid-${uid}', () => console.log('held'))`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    children.push(child);
    await new Promise<void>((resolve) => child.stdout?.once('data', () => resolve()));
    return child;
  }

  test('a uid another process holds is passed over, and freed when that process is killed', async () => {
    const pool = new RunUidPool({ first: 150_100, last: 150_100 });
    const other = await otherProcessHolds(150_100);
    await assert.rejects(pool.acquire(), /no free sandbox uid in 150100-150100/);
    other.kill('SIGKILL');
    await new Promise((r) => other.once('exit', r));
    const claimed = await pool.acquire();
    assert.equal(claimed.uid, 150_100);
    await claimed.release();
  });

  test('a uid is not handed to two runs at once, and is reusable after release', async () => {
    const a = new RunUidPool({ first: 150_200, last: 150_201 });
    const b = new RunUidPool({ first: 150_200, last: 150_201 });
    const first = await a.acquire();
    const second = await b.acquire();
    assert.notEqual(first.uid, second.uid);
    await assert.rejects(a.acquire(), /no free sandbox uid/);
    await first.release();
    assert.equal((await b.acquire()).uid, first.uid);
  });

  test('a uid some host process already runs as is passed over', async () => {
    const squatter = spawn(
      'setpriv',
      ['--reuid', '150300', '--regid', '65534', '--clear-groups', 'sleep', '30'],
      {
        stdio: 'ignore',
      },
    );
    children.push(squatter);
    await new Promise((r) => squatter.once('spawn', r));
    // Wait until setpriv has switched uid (it is a host process of that uid from then on).
    const deadline = Date.now() + 2_000;
    while (Date.now() < deadline) {
      const status = readFileSync(`/proc/${squatter.pid}/status`, 'utf8');
      if (/\nUid:\s+150300\b/.test(status)) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const pool = new RunUidPool({ first: 150_300, last: 150_300 });
    await assert.rejects(pool.acquire(), /no free sandbox uid in 150300-150300/);
    squatter.kill('SIGKILL');
    await new Promise((r) => squatter.once('exit', r));
    const claimed = await pool.acquire();
    assert.equal(claimed.uid, 150_300);
    await claimed.release();
  });

  test('an invalid range is refused with the reason, and the driver reports itself unavailable', async () => {
    assert.throws(() => parseUidRange('0-100'), /within 1000-/);
    assert.throws(() => parseUidRange('60000-70000'), /nobody/);
    assert.throws(() => parseUidRange('200-100'), /FIRST-LAST|above/);
    assert.throws(() => parseUidRange('1e5-2e5'), /FIRST-LAST/);
    assert.deepEqual(parseUidRange('100000-165535'), { first: 100_000, last: 165_535 });
    const saved = process.env.TOOLGATE_SANDBOX_UIDS;
    process.env.TOOLGATE_SANDBOX_UIDS = '0-10';
    try {
      const runner = new ProcessRunner();
      const out = await runner.run({ argv: ['true'], limits: LIMITS });
      assert.equal(out.kind, 'driver_unavailable');
      if (out.kind === 'driver_unavailable') assert.match(out.reason, /TOOLGATE_SANDBOX_UIDS/);
    } finally {
      if (saved === undefined) delete process.env.TOOLGATE_SANDBOX_UIDS;
      else process.env.TOOLGATE_SANDBOX_UIDS = saved;
    }
  });
});
