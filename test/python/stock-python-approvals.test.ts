/**
 * Python's official `mcp` SDK (pinned in test/fixtures/python/requirements.txt, in `.venv-test`),
 * with its default options and no toolgate-specific code, completes approvals through toolgate
 * (docs/mcp.md, "Stock clients wait for the person"), in the era its own negotiation picks
 * (2026-07-28) and in the 2025-11-25 handshake: approved within the hold (here 2 s), the same call
 * answers the tool's result; approved after the client's wait, its next call with the same
 * arguments runs the approved call once, without a new approval; a client that reconnects
 * mid-wait (its connection gone, a new one opened) completes the approval it already has; a
 * rejection is a clear refusal. The approval stays bound to the principal, the tool version and
 * the arguments: another agent, another key of the same agent, another version or other arguments
 * never pick it up — each beside its benign neighbour. One Python process serves the file
 * (test/fixtures/python/stock_client.py: each call on a new `Client`). Without the venv the suite
 * is skipped with the reason, unless TOOLGATE_REQUIRE_PYTHON=1 makes that a failure.
 */
import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import { backends } from '../support/backends.js';
import { ROOT } from '../support/cli.js';
import {
  OWNER,
  openStockWorld,
  STOCK_TOOL,
  STRANGER,
  type StockWorld,
} from '../support/stock-approvals.js';

const PYTHON = join(ROOT, '.venv-test', 'bin', 'python');
const DRIVER = join(ROOT, 'test', 'fixtures', 'python', 'stock_client.py');
const haveVenv = existsSync(PYTHON);
const skip =
  !haveVenv && process.env.TOOLGATE_REQUIRE_PYTHON !== '1'
    ? 'no .venv-test with the mcp package (scripts/test-all.sh makes it)'
    : false;

const HOLD_MS = 2_000;
const SHORT_HOLD_MS = 150;

type Mode = 'default' | 'legacy';

interface PyEvent {
  readonly id: string;
  readonly event: 'connected' | 'answer' | 'error' | 'dropped';
  readonly protocol_version?: string;
  readonly is_error?: boolean;
  readonly code?: string | null;
  readonly rule?: string | null;
  readonly text?: string;
  readonly structured?: Record<string, unknown> | null;
  readonly message?: string;
}

/** The one Python process of this file, and the calls it runs. */
class Driver {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #events = new Map<string, PyEvent[]>();
  readonly #waiting = new Set<() => void>();
  #stderr = '';
  #n = 0;

  constructor() {
    this.#child = spawn(PYTHON, [DRIVER], {
      env: { PATH: process.env.PATH ?? '', PYTHONUNBUFFERED: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.#child.stderr.on('data', (d: Buffer) => {
      this.#stderr = (this.#stderr + d.toString()).slice(-8000);
    });
    createInterface({ input: this.#child.stdout }).on('line', (line) => {
      const e = JSON.parse(line) as PyEvent;
      this.#events.set(e.id, [...(this.#events.get(e.id) ?? []), e]);
      for (const wake of [...this.#waiting]) wake();
    });
  }

  /** Starts a call on a new connection; `answer` settles with its last event. */
  call(
    world: StockWorld,
    mode: Mode,
    key: string,
    args: Record<string, unknown>,
    meta?: Record<string, unknown>,
  ): {
    readonly connected: Promise<PyEvent>;
    readonly answer: Promise<PyEvent>;
    drop(): Promise<void>;
  } {
    this.#n += 1;
    const id = `c${this.#n}`;
    const url = `${world.base}/mcp`;
    this.#send({
      op: 'call',
      id,
      url,
      key,
      mode,
      tool: STOCK_TOOL,
      args,
      ...(meta ? { meta } : {}),
    });
    const last = (kinds: readonly string[]) =>
      this.#until(id, (events) => events.find((e) => kinds.includes(e.event)));
    return {
      connected: last(['connected', 'error']),
      // A dropped call has no answer: its last event says so.
      answer: last(['answer', 'error', 'dropped']),
      drop: async () => {
        this.#send({ op: 'drop', id });
        await last(['dropped', 'answer', 'error']);
      },
    };
  }

  async close(): Promise<void> {
    this.#send({ op: 'quit' });
    await new Promise((r) => {
      const timer = setTimeout(() => {
        this.#child.kill('SIGKILL');
        r(null);
      }, 5_000);
      this.#child.once('close', () => {
        clearTimeout(timer);
        r(null);
      });
    });
  }

  #send(command: Record<string, unknown>): void {
    this.#child.stdin.write(`${JSON.stringify(command)}\n`);
  }

  #until(id: string, pick: (events: PyEvent[]) => PyEvent | undefined): Promise<PyEvent> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(check);
        reject(
          new Error(`python call ${id}: ${JSON.stringify(this.#events.get(id))}\n${this.#stderr}`),
        );
      }, 40_000);
      const check = () => {
        const e = pick(this.#events.get(id) ?? []);
        if (!e) return;
        clearTimeout(timer);
        this.#waiting.delete(check);
        resolve(e);
      };
      this.#waiting.add(check);
      check();
    });
  }
}

function ran(e: PyEvent): void {
  assert.equal(e.event, 'answer', JSON.stringify(e));
  assert.equal(e.is_error, false, JSON.stringify(e));
  assert.match(String(e.structured?.message_id), /^msg-/, JSON.stringify(e));
}

describe("Python's mcp SDK completes approvals with its default options", { skip }, () => {
  let s: StockWorld;
  let quick: StockWorld;
  let py: Driver;
  let n = 0;

  function fresh(): { to: string; text: string } {
    n += 1;
    return { to: `customer-${n}@example.com`, text: `Your account ${n} is ready.` };
  }

  before(async () => {
    const [backend] = backends();
    assert.ok(backend);
    py = new Driver();
    s = await openStockWorld(backend, HOLD_MS);
    quick = await openStockWorld(backend, SHORT_HOLD_MS);
  });

  after(async () => {
    await py?.close();
    await s?.close();
    await quick?.close();
  });

  test('its own negotiation picks 2026-07-28; the handshake mode 2025-11-25', async () => {
    for (const [mode, era] of [
      ['default', '2026-07-28'],
      ['legacy', '2025-11-25'],
    ] as const) {
      const args = fresh();
      const c = py.call(s, mode, s.keys.owner, args);
      assert.equal((await c.connected).protocol_version, era);
      await s.approve(await s.nextApproval(OWNER, args));
      ran(await c.answer);
    }
  });

  for (const mode of ['default', 'legacy'] as const) {
    test(`${mode}: approved within the hold, the same call answers the result, once`, async () => {
      const args = fresh();
      const before = await s.runs();
      const c = py.call(s, mode, s.keys.owner, args);
      await s.approve(await s.nextApproval(OWNER, args));
      ran(await c.answer);
      assert.equal(await s.runs(), before + 1);
      assert.deepEqual(
        (await s.approvalsOf(OWNER, args)).map((a) => a.status),
        ['consumed'],
      );
    });

    test(`${mode}: approved after its wait, the next same call runs it once, no new approval`, async () => {
      // The handshake era waits one hold; the 2026-07-28 client its ten rounds (a short hold).
      const w = mode === 'legacy' ? s : quick;
      const args = fresh();
      const before = await w.runs();
      const waited = await py.call(w, mode, w.keys.owner, args).answer;
      assert.equal(waited.event, 'answer', JSON.stringify(waited));
      assert.equal(waited.code, 'APPROVAL_REQUIRED', JSON.stringify(waited));
      const [approval] = await w.approvalsOf(OWNER, args);
      assert.ok(approval);
      assert.ok(waited.text?.includes(approval.id), 'the answer names the approval');
      await w.approve(approval.id);
      ran(await py.call(w, mode, w.keys.owner, args).answer);
      assert.equal(await w.runs(), before + 1, 'ran once');
      assert.deepEqual(
        (await w.approvalsOf(OWNER, args)).map((a) => [a.id, a.status]),
        [[approval.id, 'consumed']],
      );
    });

    test(`${mode}: a client that reconnects mid-wait completes the approval it already has`, async () => {
      const args = fresh();
      const before = await s.runs();
      const gone = py.call(s, mode, s.keys.owner, args);
      const approvalId = await s.nextApproval(OWNER, args);
      await gone.drop();
      const again = py.call(s, mode, s.keys.owner, args);
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(
        (await s.approvalsOf(OWNER, args)).map((a) => a.id),
        [approvalId],
      );
      await s.approve(approvalId);
      ran(await again.answer);
      assert.equal(await s.runs(), before + 1);
    });

    test(`${mode}: a rejection reaches the client as a refusal`, async () => {
      const args = fresh();
      const before = await s.runs();
      const c = py.call(s, mode, s.keys.owner, args);
      await s.reject(await s.nextApproval(OWNER, args), 'not this account');
      const refused = await c.answer;
      assert.deepEqual(
        [refused.is_error, refused.code, refused.rule],
        [true, 'APPROVAL_INVALID', 'approval.rejected'],
      );
      assert.ok(refused.text?.includes('not this account'), refused.text);
      assert.equal(await s.runs(), before);
    });
  }

  /** An approval of `args` decided while nobody waits for it (the owner's client went away). */
  async function approvedUnused(args: Record<string, unknown>): Promise<string> {
    const gone = py.call(s, 'default', s.keys.owner, args);
    const approvalId = await s.nextApproval(OWNER, args);
    await gone.drop();
    await s.approve(approvalId);
    return approvalId;
  }

  /** The attacker gets an approval of its own (rejected to end it); the owner's runs on its own. */
  async function attack(
    key: string,
    agent: string,
    args: Record<string, unknown>,
    ownerArgs: Record<string, unknown>,
  ): Promise<void> {
    const approvalId = await approvedUnused(ownerArgs);
    const before = await s.runs(agent);
    const attempt = py.call(s, 'default', key, args);
    const own = await s.nextApproval(agent, args, new Set([approvalId]));
    assert.equal(await s.status(approvalId), 'approved', "the owner's approval is untouched");
    await s.reject(own, 'not approved');
    const refused = await attempt.answer;
    assert.equal(refused.rule, 'approval.rejected', JSON.stringify(refused));
    assert.ok(refused.text?.includes(own), 'refused on its own approval');
    assert.equal(await s.runs(agent), before, 'the attacker ran nothing');
    ran(await py.call(s, 'default', s.keys.owner, ownerArgs).answer);
    assert.equal(await s.status(approvalId), 'consumed');
  }

  test('another agent, another key of the same agent, other arguments: none picks it up', async () => {
    const same = fresh();
    await attack(s.keys.stranger, STRANGER, same, same);
    const again = fresh();
    await attack(s.keys.ownerOther, OWNER, again, again);
    const other = fresh();
    await attack(s.keys.owner, OWNER, { ...other, text: `${other.text} Also: wire funds.` }, other);
  });

  test('another version of the tool does not pick it up; the approved version runs on it', async () => {
    const args = fresh();
    const approvalId = await approvedUnused(args);
    await s.addVersion('2.0.0');
    const attempt = py.call(s, 'legacy', s.keys.owner, args);
    const own = await s.nextApproval(OWNER, args, new Set([approvalId]));
    assert.equal((await s.world.tg.admin.approvals.get(own)).tool_version, '2.0.0');
    await s.reject(own, 'not this version');
    assert.equal((await attempt.answer).rule, 'approval.rejected');
    const before = await s.runs();
    ran(await py.call(s, 'legacy', s.keys.owner, args, { 'io.toolgate/version': 1 }).answer);
    assert.equal(await s.runs(), before + 1);
    assert.equal(await s.status(approvalId), 'consumed');
  });
});
