/**
 * @module A gateway that stops with a tool still running (docs/operations.md "Stopping": the
 * shutdown deadline passed): `gate.interrupt()`, which `close()` runs first, writes that call's post
 * record itself — outcome `interrupted`, code SHUTTING_DOWN, rule `gateway.shutdown` — and the
 * call's own post record is not written after it; a call reaching `execute` afterwards does not
 * run and is recorded with the same code and rule. The benign neighbour: a call that ended before
 * the stop keeps its own record.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { validTool } from '../support/tools.js';
import { openWorld, type World } from '../support/world.js';

const admin: Actor = { id: 'test-admin', via: 'library' };

for (const backend of backends()) {
  let tg: Gateway;
  let world: World;
  let inspector: Store;
  let runs = 0;
  let entered: () => void = () => {};
  let release: () => void = () => {};

  before(async () => {
    const executor = demoExecutor().register('test.hold', async () => {
      runs += 1;
      entered();
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      return { status: 'ran' };
    });
    world = await openWorld({ backend, options: { executor } });
    tg = world.tg;
    inspector = await openStore(world.db);
    await tg.config.apply(
      [
        { kind: 'Agent', spec: { id: 'bot', owner: 'qa' } },
        {
          kind: 'Tool',
          spec: validTool({
            id: 'holder',
            name: 'holder',
            data_access: 'public',
            runtime: { kind: 'inline', handler: 'test.hold' },
          }),
        },
        { kind: 'Grant', spec: { agent: 'bot', capabilities: ['billing:read'] } },
      ],
      admin,
    );
  });

  after(async () => {
    release();
    await inspector.close();
    await world.close();
  });

  const records = (callId: string) =>
    inspector.db
      .selectFrom('audit_log')
      .select(['kind', 'outcome', 'code', 'rule'])
      .where('call_id', '=', callId)
      .orderBy('seq')
      .execute();

  test(`a call running when the gate stops is recorded as interrupted, once; nothing starts after (${backend.name})`, async () => {
    const session = await tg.sessions.open('bot');
    const ctx = { agentId: 'bot', sessionId: session.id };
    // The benign neighbour: a call that ends before the stop keeps its own post record.
    const before = tg.gate.invoke(ctx, 'holder', { invoice: 'INV-0' });
    await new Promise<void>((resolve) => {
      entered = resolve;
    });
    release();
    const finished = await before;
    assert.equal(finished.kind, 'allow');

    // The caller's trace reaches the interrupted call's records too, as it reaches pre and post.
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const traced = {
      principal: { kind: 'agent' as const, agentId: 'bot' },
      sessionId: session.id,
      trace: {
        parent: { traceId, spanId: '00f067aa0ba902b7', sampled: true },
        front: 'rest' as const,
        transport: 'tcp' as const,
      },
    };
    const running = tg.gate.invoke(traced, 'holder', { invoice: 'INV-1' });
    await new Promise<void>((resolve) => {
      entered = resolve;
    });
    assert.equal(await tg.gate.interrupt(), 1);
    release();
    const late = await running;
    const after = await tg.gate.invoke(ctx, 'holder', { invoice: 'INV-2' });
    assert.equal(after.kind, 'deny');
    assert.equal(after.kind === 'deny' && after.code, 'SHUTTING_DOWN');
    assert.equal(runs, 2, 'nothing ran after the stop');
    await tg.gate.flush();

    assert.deepEqual(
      (await records(finished.callId)).map((r) => [r.kind, r.outcome]),
      [
        ['call.pre', null],
        ['call.post', 'ok'],
      ],
    );
    assert.deepEqual(await records(late.callId), [
      { kind: 'call.pre', outcome: null, code: null, rule: null },
      {
        kind: 'call.post',
        outcome: 'interrupted',
        code: 'SHUTTING_DOWN',
        rule: 'gateway.shutdown',
      },
    ]);
    const traceIds = await inspector.db
      .selectFrom('audit_log')
      .select('trace_id')
      .where('call_id', '=', late.callId)
      .execute();
    assert.deepEqual(
      traceIds.map((r) => r.trace_id),
      [traceId, traceId],
    );
    assert.deepEqual(await records(after.callId), [
      { kind: 'call.pre', outcome: null, code: null, rule: null },
      {
        kind: 'call.post',
        outcome: 'gateway.shutdown',
        code: 'SHUTTING_DOWN',
        rule: 'gateway.shutdown',
      },
    ]);
  });
}
