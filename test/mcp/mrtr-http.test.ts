/**
 * Approvals as multi round-trip requests (MCP 2026-07-28) over HTTP, driven by the official v2
 * client pinned to 2026-07-28 in manual mode: a call that needs approval answers
 * `InputRequiredResult` with a sealed `requestState`; the retry with it runs the call once an
 * approver (with TOTP) approved it, once, and only the same call of the same principal and run.
 * Every attack runs nothing and gets its own JSON-RPC error; SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client as ClientV2 } from '@modelcontextprotocol/client';
import type { Actor } from '../../src/core/index.js';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { REQUEST_STATE_KEY_LABEL, RequestStateSealer } from '../../src/domain/decisions/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import type { Store } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { enrol, operator } from '../support/operators.js';
import { inlineTool } from '../support/tools.js';
import { connectModernMcp, openWorld, toolRecords, type World } from '../support/world.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const RUN = 'io.toolgate/run';
const APPROVAL = 'io.toolgate/approval';

type Answer = {
  resultType?: string;
  requestState?: string;
  inputRequests?: Record<string, { method?: string; params?: { message?: string } }>;
  isError?: boolean;
  content?: { type: string; text?: string }[];
  _meta?: Record<string, unknown>;
};

for (const backend of backends()) {
  describe(`approvals as multi round-trip requests over HTTP (${backend.name})`, () => {
    let world: World;
    let tg: Gateway;
    let base: string;
    let inspector: Store;
    let key: string;
    let otherKey: string;
    let approvers = 0;
    const masterKey = MasterKey.generate();
    const clients: ClientV2[] = [];

    async function client(token = key, elicitation = false): Promise<ClientV2> {
      const c = await connectModernMcp(base, token, 'mrtr-test', {
        inputRequired: { autoFulfill: false },
        ...(elicitation ? { capabilities: { elicitation: { form: {} } } } : {}),
      });
      clients.push(c);
      return c;
    }

    async function call(
      c: ClientV2,
      args: Record<string, unknown>,
      extra: { run?: string; state?: string } = {},
    ): Promise<Answer> {
      return (await c.callTool(
        {
          name: 'wire_funds',
          arguments: args,
          ...(extra.run ? { _meta: { [RUN]: extra.run } } : {}),
          ...(extra.state ? { requestState: extra.state } : {}),
        } as never,
        { allowInputRequired: true },
      )) as unknown as Answer;
    }

    /** The JSON-RPC error a call is refused with (a refusal must not come back as a result). */
    async function refusal(promise: Promise<unknown>): Promise<{ code: number; data: unknown }> {
      try {
        const answer = await promise;
        assert.fail(`expected a refusal, got ${JSON.stringify(answer)}`);
      } catch (err) {
        const e = err as { code?: number; data?: unknown };
        assert.equal(typeof e.code, 'number', String(err));
        return { code: e.code as number, data: e.data };
      }
    }

    function approvalOf(answer: Answer): string {
      assert.equal(answer.resultType, 'input_required', JSON.stringify(answer));
      const meta = answer._meta?.[APPROVAL] as { approval_id?: string } | undefined;
      assert.equal(typeof meta?.approval_id, 'string', JSON.stringify(answer));
      return meta?.approval_id as string;
    }

    /** How many times the tool started running (its `call.pre` records). */
    async function runs(): Promise<number> {
      const rows = await toolRecords(inspector, 'wire_funds', 'call.pre');
      return rows.length;
    }

    async function approvalsOf(run: string): Promise<number> {
      const rows = await inspector.db
        .selectFrom('approvals')
        .select('id')
        .where('session_id', '=', run)
        .execute();
      return rows.length;
    }

    /** Approves as a new approver with a fresh TOTP (one code is never accepted twice). */
    async function approve(approvalId: string): Promise<void> {
      approvers += 1;
      const op = operator(`mrtr-approver-${approvers}`);
      const { code } = await enrol(tg.admin, op);
      await tg.admin.approvals.approve(approvalId, op, { totp: code(new Date()) });
    }

    /** A call waiting for approval, approved by an approver with a fresh TOTP. */
    async function approved(
      c: ClientV2,
      args: Record<string, unknown>,
    ): Promise<{ run: string; state: string; approvalId: string }> {
      const first = await call(c, args);
      const run = first._meta?.[RUN] as string;
      const approvalId = approvalOf(first);
      await approve(approvalId);
      return { run, state: first.requestState as string, approvalId };
    }

    before(async () => {
      world = await openWorld({
        backend,
        actor: admin,
        options: { masterKey },
        inspector: true,
        tools: [
          inlineTool('wire_funds', {
            description: 'Wire an amount to an account; run inline by toolgate for the tests.',
            input_schema: {
              type: 'object',
              additionalProperties: false,
              required: ['to', 'cents'],
              properties: { to: { type: 'string' }, cents: { type: 'integer' } },
            },
            action_class: 'external_send',
            approval: { mode: 'always', second_factor: true },
            required_capabilities: ['pay:wire'],
          }),
        ],
        agents: [{ id: 'pay-bot', capabilities: ['pay:wire'] }],
        rest: { adminToken: 'mrtr-test-admin-token-0123456789abcdef' },
      });
      ({ tg, base } = world);
      inspector = world.inspector as Store;
      key = world.keys['pay-bot'] ?? '';
      otherKey = (await tg.keys.issue('pay-bot', admin)).apiKey;
    });

    after(async () => {
      await Promise.all(clients.map((c) => c.close().catch(() => {})));
      await world.close();
    });

    test('the round trip: input required, still pending, approved → runs once, replay refused', async () => {
      const c = await client(key, true);
      const before = await runs();
      const args = { to: 'ACC-1', cents: 500 };
      const first = await call(c, args);
      const run = first._meta?.[RUN] as string;
      const approvalId = approvalOf(first);
      const opened = await approvalsOf(run);
      assert.match(first.requestState ?? '', /^tgrs1\./);
      assert.ok(
        !(first.requestState ?? '').includes(approvalId),
        'the state is sealed, not signed',
      );
      // The person is told which approval to have decided, and where; answering approves nothing.
      const ask = first.inputRequests?.approval;
      assert.equal(ask?.method, 'elicitation/create', JSON.stringify(first));
      assert.ok(ask?.params?.message?.includes(approvalId));

      const again = await call(c, args, { run, state: first.requestState as string });
      assert.equal(approvalOf(again), approvalId, 'still pending: the same approval');
      assert.notEqual(again.requestState, first.requestState, 'with a fresh state');
      assert.deepEqual(Object.keys(again.inputRequests ?? {}), [], 'the person is not asked again');
      assert.equal(await approvalsOf(run), opened, 'no new approval');

      await approve(approvalId);
      const done = await call(c, args, { run, state: again.requestState as string });
      assert.notEqual(done.isError, true, JSON.stringify(done));
      assert.equal(done.resultType, undefined);
      assert.equal(await runs(), before + 1, 'ran once');
      assert.equal((await tg.admin.approvals.get(approvalId)).status, 'consumed');

      const replay = await refusal(call(c, args, { run, state: again.requestState as string }));
      assert.equal(replay.code, -32083);
      assert.equal((replay.data as { code?: string }).code, 'REQUEST_STATE_REPLAYED');
      // An older state of the same approval is just as used.
      const older = await refusal(call(c, args, { run, state: first.requestState as string }));
      assert.equal(older.code, -32083);
      assert.equal(await runs(), before + 1, 'a replay runs nothing');
    });

    test('a client without elicitation gets the state alone (it polls)', async () => {
      const c = await client();
      const first = await call(c, { to: 'ACC-2', cents: 1 });
      approvalOf(first);
      assert.deepEqual(Object.keys(first.inputRequests ?? {}), []);
      assert.equal(typeof first.requestState, 'string');
    });

    test('changed arguments run nothing; the same call then completes', async () => {
      const c = await client();
      const { run, state, approvalId } = await approved(c, { to: 'ACC-3', cents: 700 });
      const before = await runs();
      const changed = await refusal(call(c, { to: 'ACC-EVIL', cents: 700 }, { run, state }));
      assert.equal(changed.code, -32082);
      assert.deepEqual(
        {
          code: (changed.data as { code?: string }).code,
          reason: (changed.data as { details?: { reason?: string } }).details?.reason,
        },
        { code: 'REQUEST_STATE_MISMATCH', reason: 'call_changed' },
      );
      assert.equal(await runs(), before);
      assert.equal((await tg.admin.approvals.get(approvalId)).status, 'approved', 'not spent');
      const ok = await call(c, { to: 'ACC-3', cents: 700 }, { run, state });
      assert.notEqual(ok.isError, true, JSON.stringify(ok));
      assert.equal(await runs(), before + 1);
    });

    test('another principal, another run, an expired or a tampered state run nothing', async () => {
      const c = await client();
      const args = { to: 'ACC-4', cents: 900 };
      const { run, state, approvalId } = await approved(c, args);
      const before = await runs();

      // The same agent through another credential is another principal.
      const other = await client(otherKey);
      const stolen = await refusal(call(other, args, { state }));
      assert.equal(stolen.code, -32082);
      assert.equal((stolen.data as { details?: { reason?: string } }).details?.reason, 'principal');

      const otherRun = (await call(c, { to: 'ACC-5', cents: 1 }))._meta?.[RUN] as string;
      const elsewhere = await refusal(
        call(c, args, { run: run === otherRun ? 'ses_other' : otherRun, state }),
      );
      assert.equal(elsewhere.code, -32082);

      const sealedLongAgo = new RequestStateSealer(masterKey.derive(REQUEST_STATE_KEY_LABEL), {
        clock: () => new Date(Date.now() - 3_600_000),
      }).seal({
        agentId: 'pay-bot',
        userId: null,
        credential: null,
        run,
        toolId: 'wire_funds',
        toolVersion: '1.0.0',
        argsHash: 'x',
        approvalId,
      });
      const expired = await refusal(call(c, args, { run, state: sealedLongAgo }));
      assert.equal(expired.code, -32081);
      assert.equal((expired.data as { code?: string }).code, 'REQUEST_STATE_EXPIRED');

      const body = state.slice('tgrs1.'.length);
      const at = Math.floor(body.length / 2);
      const flipped = body[at] === 'A' ? 'B' : 'A';
      const tampered = `tgrs1.${body.slice(0, at)}${flipped}${body.slice(at + 1)}`;
      const forged = await refusal(call(c, args, { run, state: tampered }));
      assert.equal(forged.code, -32080);
      assert.equal((forged.data as { code?: string }).code, 'REQUEST_STATE_INVALID');
      const garbage = await refusal(call(c, args, { run, state: 'not-a-state' }));
      assert.equal(garbage.code, -32080);

      assert.equal(await runs(), before, 'no attack ran anything');
      // Refusals before the gate are security events (sampled, as header mismatches are).
      const audited = await inspector.db
        .selectFrom('events')
        .select('details')
        .where('action', '=', 'mcp.request_state_refused')
        .execute();
      const codes = audited.map((r) => (JSON.parse(r.details) as { code: string }).code);
      for (const code of [
        'REQUEST_STATE_MISMATCH',
        'REQUEST_STATE_EXPIRED',
        'REQUEST_STATE_INVALID',
      ])
        assert.ok(codes.includes(code), `${code} audited: ${codes}`);
      assert.equal((await tg.admin.approvals.get(approvalId)).status, 'approved');
      // The benign neighbour: the owner's own retry still works.
      const ok = await call(c, args, { run, state });
      assert.notEqual(ok.isError, true, JSON.stringify(ok));
      assert.equal(await runs(), before + 1);
    });

    test('a client that reconnects completes its approval without a new one', async () => {
      const first = await client();
      const args = { to: 'ACC-6', cents: 1200 };
      const opened = await call(first, args);
      const run = opened._meta?.[RUN] as string;
      const count = await approvalsOf(run);
      const approvalId = approvalOf(opened);
      await first.close();
      // A new connection repeating the call in the same run finds the approval waiting.
      const second = await client();
      const repeated = await call(second, args, { run });
      assert.equal(approvalOf(repeated), approvalId);
      assert.equal(await approvalsOf(run), count, 'no orphan approval');
      await approve(approvalId);
      // A third connection with only the state (no handle): the state carries its run.
      const third = await client();
      const before = await runs();
      const done = await call(third, args, { state: repeated.requestState as string });
      assert.notEqual(done.isError, true, JSON.stringify(done));
      assert.equal(done._meta?.[RUN], run);
      assert.equal(await runs(), before + 1);
    });

    test('a rejected approval answers the rejection', async () => {
      const c = await client();
      const args = { to: 'ACC-7', cents: 5 };
      const first = await call(c, args);
      const run = first._meta?.[RUN] as string;
      const approvalId = approvalOf(first);
      await tg.admin.approvals.reject(approvalId, operator('mrtr-rejecter'), 'not this account');
      const before = await runs();
      const answer = await call(c, args, { run, state: first.requestState as string });
      assert.equal(answer.isError, true, JSON.stringify(answer));
      const decision = answer._meta?.['toolgate/decision'] as { code?: string; rule?: string };
      assert.deepEqual(
        { code: decision.code, rule: decision.rule },
        { code: 'APPROVAL_INVALID', rule: 'approval.rejected' },
      );
      assert.ok(answer.content?.[0]?.text?.includes('not this account'));
      assert.equal(await runs(), before);
    });
  });
}
