/**
 * @module A second-language client through toolgate: Python's official `mcp` SDK (from PyPI, in
 * the `.venv-test` venv scripts/test-all.sh makes) lists and calls tools over /mcp in both eras —
 * 2026-07-28 (stateless, the run handle carried in `_meta`) and 2025-11-25 (sessions) — and
 * completes an approval round trip: the call that needs approval is pending, an approver decides
 * it with a TOTP code through the approval desk, the client's retry runs it exactly once, and the
 * same call again needs a new approval. Without the venv the test is skipped with the reason,
 * unless TOOLGATE_REQUIRE_PYTHON=1 (as the test command sets) makes that a failure.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Actor } from '../../src/core/index.js';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { buildServer } from '../../src/edge/rest/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { ROOT } from '../support/cli.js';
import { enrol, operator } from '../support/operators.js';
import { approvePendingReviews } from '../support/reviews.js';
import { inlineTool } from '../support/tools.js';
import { WORLD_APPROVAL_WAIT_MS } from '../support/world.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const ADMIN_TOKEN = 'python-client-admin-token-0123456789abcdef';
const PYTHON = join(ROOT, '.venv-test', 'bin', 'python');
const CLIENT = join(ROOT, 'test', 'fixtures', 'python', 'client.py');
const haveVenv = existsSync(PYTHON);
const required = process.env.TOOLGATE_REQUIRE_PYTHON === '1';
const skip =
  !haveVenv && !required
    ? 'no .venv-test with the mcp package (scripts/test-all.sh makes it)'
    : false;

type Event = { event: string; [k: string]: unknown };

let dir: string;
let tg: Gateway;
let inspector: Store;
let app: FastifyInstance;
let base: string;
let key: string;

function tool(id: string, spec: Record<string, unknown>) {
  return {
    kind: 'Tool',
    spec: inlineTool(
      id,
      { required_capabilities: ['accounts:manage'], ...spec },
      'the Python client',
    ),
  };
}

/** Allowed runs of `close_account` in the audit log. */
async function closeRuns(): Promise<number> {
  await tg.gate.flush();
  const rows = await inspector.db
    .selectFrom('audit_log')
    .select('seq')
    .where('kind', '=', 'call.post')
    .where('tool_id', '=', 'close_account')
    .where('outcome', '=', 'ok')
    .execute();
  return rows.length;
}

/**
 * Runs client.py for one era. When it reports the pending approval, `decide` is the operator;
 * then the client is told to retry. Returns every event it printed.
 */
function runClient(era: string, decide: (pending: Event) => Promise<void>): Promise<Event[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, [CLIENT, `${base}/mcp`, era], {
      env: { PATH: process.env.PATH ?? '', TOOLGATE_AGENT_KEY: key, PYTHONUNBUFFERED: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const events: Event[] = [];
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    createInterface({ input: child.stdout }).on('line', (line) => {
      let e: Event;
      try {
        e = JSON.parse(line) as Event;
      } catch {
        return;
      }
      events.push(e);
      if (e.event === 'pending') {
        decide(e).then(
          () => child.stdin.write('approved\n'),
          (err: unknown) => {
            child.kill('SIGKILL');
            reject(err);
          },
        );
      }
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) reject(new Error(`client.py ${era} exited ${code}:\n${stderr.slice(-4000)}`));
      else resolve(events);
    });
  });
}

function find(events: Event[], name: string): Event {
  const e = events.find((x) => x.event === name);
  assert.ok(e, `no ${name} event in ${JSON.stringify(events)}`);
  return e;
}

before(async () => {
  if (skip) return;
  dir = mkdtempSync(join(tmpdir(), 'toolgate-python-'));
  const db = `sqlite:${join(dir, 'tg.db')}`;
  tg = await openGateway({ db, masterKey: MasterKey.generate() });
  inspector = await openStore(db);
  await tg.config.apply(
    [
      {
        kind: 'Agent',
        spec: {
          id: 'py-bot',
          display_name: 'Python client',
          description: "Calls toolgate with Python's MCP SDK.",
          owner: 'platform-team',
        },
      },
      { kind: 'Grant', spec: { agent: 'py-bot', capabilities: ['accounts:manage'] } },
      tool('get_status', {}),
      tool('close_account', {
        description: 'Close a customer account and email the customer that it is closed.',
        action_class: 'external_send',
        // Every call waits for an approver, who must confirm with a second factor.
        approval: { mode: 'always', second_factor: true },
        input_schema: {
          type: 'object',
          additionalProperties: false,
          required: ['account'],
          properties: { account: { type: 'string', pattern: '^ACC-[0-9]{4}$' } },
        },
      }),
    ],
    admin,
  );
  await approvePendingReviews(tg.admin);
  key = (await tg.keys.issue('py-bot', admin)).apiKey;
  app = await buildServer(tg, {
    adminToken: ADMIN_TOKEN,
    bodyLimit: 64 * 1024,
    // The operator decides only after the client reported the pending answer: a short hold.
    mcp: { approvalWaitMs: WORLD_APPROVAL_WAIT_MS },
  });
  base = await app.listen({ host: '127.0.0.1', port: 0 });
});

after(async () => {
  await app?.close();
  await inspector?.close();
  await tg?.close();
  if (dir) rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

describe("Python's mcp SDK through toolgate", { skip }, () => {
  test('the venv has the mcp package', () => {
    assert.ok(haveVenv, `${PYTHON} is missing: scripts/test-all.sh makes .venv-test`);
  });

  for (const era of ['2026-07-28', '2025-11-25']) {
    test(`${era}: lists, calls, and completes an approval (approver with TOTP); the retry runs once`, async () => {
      // One approver per era: a TOTP code is accepted once, and both eras run within one step.
      const approver = operator(`py-approver-${era}`);
      const totp = await enrol(tg.admin, approver);
      const before = await closeRuns();
      // The other era's last call left an approval of the same call waiting: this era's call finds
      // it (an approval is the principal's, in any of its runs) rather than asking for another.
      let decided = '';
      const events = await runClient(era, async (shown) => {
        const pending = (await tg.approvals.list('pending')).filter(
          (a) => a.agent_id === 'py-bot' && a.tool_id === 'close_account',
        );
        assert.equal(
          pending.length,
          1,
          `exactly one approval is waiting: ${JSON.stringify(shown)}`,
        );
        const [approval] = pending;
        assert.ok(approval);
        assert.equal(approval.second_factor, true, 'the approval asks for a second factor');
        assert.equal(await closeRuns(), before, 'nothing ran before the decision');
        // Without the code the approver is refused: the second factor is checked, not assumed.
        await assert.rejects(tg.approvals.approve(approval.id, approver));
        const view = await tg.approvals.approve(approval.id, approver, {
          totp: totp.code(new Date()),
          reason: 'customer asked in writing',
        });
        decided = view.status;
      });

      assert.equal(find(events, 'connected').protocol_version, era);
      assert.deepEqual(find(events, 'tools').names, ['close_account', 'get_status']);
      const status = find(events, 'called');
      assert.equal(status.is_error, false, JSON.stringify(status));
      assert.equal(status.kind, 'allow');

      const pending = find(events, 'pending');
      if (pending.form === 'error_result') {
        assert.equal(pending.is_error, true);
        assert.equal(pending.code, 'APPROVAL_REQUIRED');
      } else {
        assert.equal(pending.form, 'input_required');
        assert.equal(pending.has_state, true, 'the input-required result carries requestState');
      }
      assert.equal(decided, 'approved');

      const retried = find(events, 'retried');
      assert.equal(retried.is_error, false, JSON.stringify(retried));
      assert.equal(retried.kind, 'allow');
      assert.equal(await closeRuns(), before + 1, 'the approved call ran exactly once');
      assert.equal(find(events, 'again').pending, true, 'an approval is used once');
      assert.equal(await closeRuns(), before + 1);
      if (era === '2026-07-28') {
        assert.match(String(find(events, 'done').run), /\S/, 'the client carried a run handle');
      }
    });
  }
});
