/**
 * @module A call its caller withdrew before it ran (an aborted CallOptions.signal, e.g. the MCP
 * agent's notifications/cancelled during the checks or an approval prompt) never runs, whatever
 * its runtime, and is audited with outcome `cancelled`; a live signal changes nothing.
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

  before(async () => {
    const executor = demoExecutor().register('test.count', () => {
      runs += 1;
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
            id: 'counter',
            name: 'counter',
            data_access: 'public',
            runtime: { kind: 'inline', handler: 'test.count' },
          }),
        },
        { kind: 'Grant', spec: { agent: 'bot', capabilities: ['billing:read'] } },
      ],
      admin,
    );
  });

  after(async () => {
    await inspector.close();
    await world.close();
  });

  test(`a withdrawn call does not run and is audited as cancelled (${backend.name})`, async () => {
    const session = await tg.sessions.open('bot');
    const ctx = { agentId: 'bot', sessionId: session.id };
    const withdrawn = new AbortController();
    withdrawn.abort('the agent gave up');
    const denied = await tg.gate.invoke(
      ctx,
      'counter',
      { invoice: 'INV-1' },
      { signal: withdrawn.signal },
    );
    assert.equal(denied.kind, 'deny');
    assert.equal(denied.kind === 'deny' && denied.code, 'CALL_CANCELLED');
    assert.equal(denied.kind === 'deny' && denied.rule, 'call.cancelled');
    assert.equal(runs, 0, 'the tool never ran');
    await tg.gate.flush();
    const post = await inspector.db
      .selectFrom('audit_log')
      .select(['outcome', 'code', 'decision'])
      .where('call_id', '=', denied.callId)
      .where('kind', '=', 'call.post')
      .executeTakeFirstOrThrow();
    assert.deepEqual(post, { outcome: 'cancelled', code: 'CALL_CANCELLED', decision: 'deny' });

    // The benign neighbour: a signal that is not aborted lets the call run as usual.
    const live = new AbortController();
    const ran = await tg.gate.invoke(ctx, 'counter', { invoice: 'INV-1' }, { signal: live.signal });
    assert.equal(ran.kind, 'allow', JSON.stringify(ran));
    assert.equal(runs, 1);
  });
}
