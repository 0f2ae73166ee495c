/**
 * A declared, read-only preview (docs/architecture.md §3, "Previews"): when a refund waits for a
 * reviewer, the gate calls the refund's declared read tool in the caller's session under every
 * rule and attaches its result to the approval as untrusted text (REST view and display). Attacks
 * beside the benign one: a preview naming a state-changing tool, a tool the agent is not granted,
 * or a URL beyond the preview tool's hosts is refused before it runs — and in each case the
 * approval still works without a preview.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BOOTSTRAP_OPERATOR } from '../../src/domain/operators/index.js';
import { InlineExecutor } from '../../src/execution/runtimes/index.js';
import { backends } from '../support/backends.js';
import { operator } from '../support/operators.js';
import { approvePendingReviews } from '../support/reviews.js';
import { validTool } from '../support/tools.js';
import { openWorld, type World } from '../support/world.js';

const orderArgs = {
  type: 'object',
  additionalProperties: false,
  required: ['order'],
  properties: { order: { type: 'string', maxLength: 20 }, link: { type: 'string' } },
} as const;

/** A refund that waits for every call, previewed by `preview`. */
function refund(id: string, preview: Record<string, unknown>) {
  return validTool({
    id,
    name: id,
    description: 'Refund one order in full to the card it was paid with.',
    action_class: 'reversible_write',
    data_access: 'none',
    input_schema: orderArgs,
    output_schema: { type: 'object' },
    approval: { mode: 'always', second_factor: false, out_of_band: false },
    runtime: { kind: 'inline', handler: 't.refund' },
    preview,
  });
}

function read(id: string, handler: string, extra: Record<string, unknown> = {}) {
  return validTool({
    id,
    name: id,
    description: 'Read one order: its status and the amount paid.',
    data_access: 'public',
    input_schema: orderArgs,
    output_schema: { type: 'object' },
    runtime: { kind: 'inline', handler },
    ...extra,
  });
}

for (const backend of backends()) {
  describe(`declared previews for reviewers (${backend.name})`, () => {
    let world: World;
    const ran: Record<string, number> = {};
    /** Slow previews wait here until the test lets them finish. */
    let release: () => void = () => {};
    let held = new Promise<void>((r) => {
      release = r;
    });
    const count = (name: string, value: unknown) => () => {
      ran[name] = (ran[name] ?? 0) + 1;
      return value;
    };

    before(async () => {
      const executor = new InlineExecutor()
        .register('t.refund', count('refund', { refunded: true }))
        .register('t.order', (a) => {
          ran.order = (ran.order ?? 0) + 1;
          return { order: (a as { order: string }).order, status: 'paid', amount_cents: 4200 };
        })
        .register('t.cancel', count('cancel', { cancelled: true }))
        .register('t.secret', count('secret', { status: 'secret' }))
        .register('t.fetch', count('fetch', { status: 'fetched' }))
        .register('t.slow', async () => {
          await held;
          return { status: 'slow' };
        });
      world = await openWorld({ backend, rest: true, options: { executor, detectors: false } });
      const tools = [
        read('get_order', 't.order'),
        read('cancel_order', 't.cancel', { action_class: 'reversible_write' }),
        read('ledger_order', 't.secret', { required_capabilities: ['ledger:read'] }),
        read('fetch_order', 't.fetch', {
          egress: { mode: 'constrained', hosts: ['orders.example.com'] },
          input_schema: {
            ...orderArgs,
            properties: { ...orderArgs.properties, link: { type: 'string', 'x-toolgate': 'url' } },
          },
        }),
        read('slow_order', 't.slow'),
        refund('refund_slow', { tool: 'slow_order', arguments: { order: '/order' } }),
        refund('refund_order', { tool: 'get_order', arguments: { order: '/order' } }),
        refund('refund_cancel', { tool: 'cancel_order', arguments: { order: '/order' } }),
        refund('refund_ledger', { tool: 'ledger_order', arguments: { order: '/order' } }),
        refund('refund_fetch', {
          tool: 'fetch_order',
          arguments: { order: '/order', link: '/link' },
        }),
      ];
      await world.tg.config.apply(
        [
          { kind: 'Agent', spec: { id: 'clerk', owner: 'qa' } },
          { kind: 'Agent', spec: { id: 'clerk2', owner: 'qa' } },
          { kind: 'Grant', spec: { agent: 'clerk2', capabilities: ['billing:read'] } },
          ...tools.map((spec) => ({ kind: 'Tool', spec })),
          { kind: 'Grant', spec: { agent: 'clerk', capabilities: ['billing:read'] } },
        ],
        world.admin,
      );
      await approvePendingReviews(world.tg.admin);
      await world.tg.admin.operators.create(BOOTSTRAP_OPERATOR, {
        id: 'rita',
        roles: ['approver'],
      });
    });
    after(() => world?.close());

    type Preview = {
      status: string;
      tool: string;
      text: string | null;
      trust: string;
      code: string | null;
      rule: string | null;
    };

    async function pendingWithPreview(tool: string, args: Record<string, unknown>) {
      const s = await world.tg.sessions.open('clerk');
      const ctx = { agentId: 'clerk', sessionId: s.id };
      const call = () => world.tg.gate.invoke(ctx, tool, args);
      const first = await call();
      assert.equal(first.kind, 'pending_approval', JSON.stringify(first));
      if (first.kind !== 'pending_approval') throw new Error('not pending');
      await world.tg.gate.previewsSettled();
      const r = await world.send('GET', `/v1/approvals/${first.approvalId}`);
      assert.equal(r.status, 200, r.text);
      const body = r.body as unknown as {
        rendered: { preview?: Preview };
        display: { preview: string | null };
      };
      return { approvalId: first.approvalId, call, body };
    }

    /** The approval works without regard to its preview: approved, the retry runs once. */
    async function approvedRunsOnce(
      approvalId: string,
      call: () => Promise<{ kind: string }>,
      handler: string,
    ) {
      const before = ran[handler] ?? 0;
      await world.tg.admin.approvals.approve(approvalId, operator('rita'));
      assert.equal((await call()).kind, 'allow');
      assert.equal(ran[handler], before + 1);
    }

    test('a refund waiting for approval shows its declared read-only preview, marked untrusted; approved, it runs once', async () => {
      const orders = ran.order ?? 0;
      const { approvalId, call, body } = await pendingWithPreview('refund_order', {
        order: 'A-17',
      });
      const p = body.rendered.preview;
      assert.equal(p?.status, 'ok', JSON.stringify(p));
      assert.equal(p?.tool, 'get_order');
      assert.equal(p?.trust, 'untrusted');
      assert.deepEqual(JSON.parse(p?.text ?? ''), {
        order: 'A-17',
        status: 'paid',
        amount_cents: 4200,
      });
      assert.match(body.display.preview ?? '', /"status": "paid"/);
      assert.equal(ran.order, orders + 1, 'the preview ran once, for the new request only');
      // A retry that still waits finds the same request and runs no second preview.
      assert.equal((await call()).kind, 'pending_approval');
      await world.tg.gate.previewsSettled();
      assert.equal(ran.order, orders + 1);
      await approvedRunsOnce(approvalId, call, 'refund');
    });

    test("one agent's waiting calls take at most its share of the preview slots; another agent's preview still runs", async () => {
      held = new Promise<void>((r) => {
        release = r;
      });
      const open = async (agentId: string) => {
        const s = await world.tg.sessions.open(agentId);
        return { agentId, sessionId: s.id };
      };
      const clerk = await open('clerk');
      const ids: string[] = [];
      for (const order of ['S-1', 'S-2', 'S-3']) {
        const d = await world.tg.gate.invoke(clerk, 'refund_slow', { order });
        assert.equal(d.kind, 'pending_approval');
        if (d.kind === 'pending_approval') ids.push(d.approvalId);
      }
      // The neighbour: another agent's call waits, and its preview runs while clerk's two hang.
      const other = await world.tg.gate.invoke(await open('clerk2'), 'refund_order', {
        order: 'S-4',
      });
      assert.equal(other.kind, 'pending_approval');
      if (other.kind !== 'pending_approval') return;
      const previewOf = async (id: string) => {
        const r = await world.send('GET', `/v1/approvals/${id}`);
        return (r.body as unknown as { rendered: { preview?: Preview } }).rendered.preview;
      };
      for (let i = 0; i < 100 && (await previewOf(other.approvalId))?.status !== 'ok'; i++) {
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal((await previewOf(other.approvalId))?.status, 'ok');
      const third = await previewOf(ids[2] as string);
      assert.equal(third?.status, 'refused', JSON.stringify(third));
      assert.equal(third?.rule, 'preview.agent_busy');
      release();
      await world.tg.gate.previewsSettled();
      assert.equal((await previewOf(ids[0] as string))?.status, 'ok');
    });

    test('a preview naming a state-changing tool is refused before it runs; the approval still works', async () => {
      const { approvalId, call, body } = await pendingWithPreview('refund_cancel', {
        order: 'A-18',
      });
      const p = body.rendered.preview;
      assert.equal(p?.status, 'refused', JSON.stringify(p));
      assert.equal(p?.rule, 'preview.not_read_only');
      assert.equal(p?.text, null);
      assert.equal(ran.cancel ?? 0, 0, 'cancel_order never ran');
      await approvedRunsOnce(approvalId, call, 'refund');
      assert.equal(ran.cancel ?? 0, 0);
    });

    test('a preview of a tool the agent is not granted is refused; the approval still works', async () => {
      const { approvalId, call, body } = await pendingWithPreview('refund_ledger', {
        order: 'A-19',
      });
      const p = body.rendered.preview;
      assert.equal(p?.status, 'refused', JSON.stringify(p));
      assert.ok(
        p?.code === 'TOOL_NOT_REGISTERED' || p?.code === 'GRANT_MISSING',
        JSON.stringify(p),
      );
      assert.equal(ran.secret ?? 0, 0);
      await approvedRunsOnce(approvalId, call, 'refund');
    });

    test('a preview whose URL reaches beyond its tool’s hosts is refused by the URL policy; the benign host runs', async () => {
      const evil = await pendingWithPreview('refund_fetch', {
        order: 'A-20',
        link: 'https://attacker.example/collect',
      });
      assert.equal(evil.body.rendered.preview?.status, 'refused');
      assert.equal(evil.body.rendered.preview?.code, 'POLICY_DENIED');
      assert.match(evil.body.rendered.preview?.rule ?? '', /^url\./);
      assert.equal(ran.fetch ?? 0, 0);
      await approvedRunsOnce(evil.approvalId, evil.call, 'refund');
      const fine = await pendingWithPreview('refund_fetch', {
        order: 'A-21',
        link: 'https://orders.example.com/A-21',
      });
      assert.equal(fine.body.rendered.preview?.status, 'ok', JSON.stringify(fine.body.rendered));
      assert.equal(ran.fetch, 1);
    });
  });
}
