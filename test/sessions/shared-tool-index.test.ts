/**
 * A session's permitted set is indexed once per distinct set and shared by the sessions that hold
 * the very same one (docs/architecture.md §3, "Large sets"). Attack cases: two agents with
 * different grants never share an index and never resolve each other's tools, by name or by id;
 * two agents whose sets are equal still hold two indexes; a grant revoked or a tool retired is
 * seen by the very next call, as before the index, and a refreshed set is a new index. Benign
 * neighbours: sessions of one agent with one set share one index, and calls of the tools each
 * agent holds go on.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { SessionToolIndex, sessionToolIndex } from '../../src/domain/sessions/index.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import type { GateDecision } from '../../src/gate/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { validTool } from '../support/tools.js';

const admin: Actor = { id: 'test-admin', via: 'library' };

function tool(id: string, capability: string) {
  return validTool({
    id,
    name: id,
    data_access: 'public',
    required_capabilities: [capability],
    runtime: { kind: 'inline', handler: 'test.echo' },
  });
}

function codeOf(d: GateDecision): string {
  return d.kind === 'deny' ? d.code : d.kind;
}

test('the index finds what a walk of the set in order finds, and nothing else', () => {
  const set = [
    { id: 'billing.lookup', version: '1.0.0', name: 'lookup' },
    { id: 'crm.lookup', version: '2.0.0', name: 'crm__lookup' },
    // A name that is another tool's id: the earlier tool of the set wins, as in a walk.
    { id: 'crm.search', version: '1.0.0', name: 'billing.lookup' },
    { id: 'prov.resource.notes-1a2b', version: '1.0.0', name: 'notes' },
  ];
  const index = new SessionToolIndex(set);
  const walk = (ref: string) => set.find((t) => t.name === ref || t.id === ref) ?? null;
  for (const ref of [
    'lookup',
    'billing.lookup',
    'crm.lookup',
    'crm__lookup',
    'crm.search',
    'notes',
    'prov.resource.notes-1a2b',
    'LOOKUP',
    'lookup ',
    '',
    'constructor',
    '__proto__',
  ]) {
    assert.equal(index.find(ref), walk(ref), ref);
  }
  assert.deepEqual(
    index.entries.map((t) => t.id),
    ['prov.resource.notes-1a2b'],
  );
});

for (const backend of backends()) {
  describe(`shared permitted-set indexes on ${backend.name}`, () => {
    let tg: Gateway;
    let drop: () => Promise<void>;

    before(async () => {
      const fresh = await backend.fresh();
      drop = fresh.drop;
      tg = await openGateway({
        db: fresh.url,
        executor: demoExecutor().register('test.echo', (a) => ({ status: 'ok', echo: a })),
      });
      await tg.config.apply(
        [
          ...[
            tool('alpha_read', 'alpha:read'),
            tool('beta_read', 'beta:read'),
            tool('common_read', 'common:read'),
            tool('retiring_read', 'common:read'),
          ].map((spec) => ({ kind: 'Tool', spec })),
          ...[
            ['agent-a', ['alpha:read', 'common:read']],
            ['agent-b', ['beta:read', 'common:read']],
            // Grants equal to agent-a's: the same set, another agent.
            ['agent-c', ['alpha:read', 'common:read']],
          ].flatMap(([id, capabilities]) => [
            { kind: 'Agent', spec: { id, owner: 'qa' } },
            { kind: 'Grant', spec: { agent: id, capabilities } },
          ]),
        ],
        admin,
      );
    });

    after(async () => {
      await tg.close();
      await drop();
    });

    async function session(agentId: string) {
      const opened = await tg.sessions.open(agentId);
      const ctx = { agentId, sessionId: opened.id };
      const row = await tg.sessions.require(opened.id, agentId);
      const call = (ref: string) => tg.gate.invoke(ctx, ref, { invoice: 'INV-1' });
      return { ctx, row, call };
    }

    test('two agents with different grants share no index and resolve none of the other’s tools', async () => {
      const a = await session('agent-a');
      const b = await session('agent-b');
      const ia = sessionToolIndex(a.row);
      const ib = sessionToolIndex(b.row);
      assert.notEqual(ia, ib);
      assert.equal(ia.find('beta_read'), null);
      assert.equal(ib.find('alpha_read'), null);
      for (const ref of ['beta_read', 'beta_read@1']) {
        assert.equal(codeOf(await a.call(ref)), 'TOOL_NOT_REGISTERED', ref);
      }
      assert.equal(codeOf(await b.call('alpha_read')), 'TOOL_NOT_REGISTERED');
      // The benign neighbours: each agent's own tools, and the one both hold.
      assert.equal(codeOf(await a.call('alpha_read')), 'allow');
      assert.equal(codeOf(await b.call('beta_read')), 'allow');
      assert.equal(codeOf(await a.call('common_read')), 'allow');
      assert.equal(codeOf(await b.call('common_read')), 'allow');
    });

    test('two agents whose sets are equal still hold two indexes', async () => {
      const a = await session('agent-a');
      const c = await session('agent-c');
      assert.equal(a.row.tool_set, c.row.tool_set, 'equal grants give equal stored sets');
      assert.notEqual(sessionToolIndex(a.row), sessionToolIndex(c.row));
    });

    test('sessions of one agent holding one set share one index, built once', async () => {
      const first = await session('agent-a');
      const second = await session('agent-a');
      assert.notEqual(first.row, second.row);
      assert.equal(sessionToolIndex(first.row), sessionToolIndex(second.row));
      // A row replaced by a counter update keeps its index (the same stored set).
      const moved = { ...second.row, egress_bytes: second.row.egress_bytes + 1 };
      assert.equal(sessionToolIndex(moved), sessionToolIndex(first.row));
    });

    test('a grant revoked is seen by the very next call of a session sharing an index', async () => {
      await tg.config.apply(
        [
          { kind: 'Agent', spec: { id: 'agent-d', owner: 'qa' } },
          { kind: 'Grant', spec: { agent: 'agent-d', capabilities: ['alpha:read'] } },
        ],
        admin,
      );
      const first = await session('agent-d');
      const second = await session('agent-d');
      assert.equal(sessionToolIndex(first.row), sessionToolIndex(second.row));
      assert.equal(codeOf(await first.call('alpha_read')), 'allow');
      assert.equal(codeOf(await second.call('alpha_read')), 'allow');
      await tg.agents.revoke('agent-d', ['alpha:read'], admin);
      assert.equal(codeOf(await first.call('alpha_read')), 'GRANT_MISSING');
      assert.equal(codeOf(await second.call('alpha_read')), 'GRANT_MISSING');
      // The benign neighbour: another agent's session with the same tool goes on.
      const a = await session('agent-a');
      assert.equal(codeOf(await a.call('alpha_read')), 'allow');
    });

    test('a tool retired is refused at once; a refreshed set is a new index without it', async () => {
      const a = await session('agent-a');
      const b = await session('agent-b');
      assert.equal(codeOf(await a.call('retiring_read')), 'allow');
      const before = sessionToolIndex(a.row);
      await tg.catalog.retire('retiring_read', '1.0.0', admin, { reason: 'test' });
      assert.equal(codeOf(await a.call('retiring_read')), 'TOOL_RETIRED');
      assert.equal(codeOf(await b.call('retiring_read')), 'TOOL_RETIRED');
      assert.deepEqual(await tg.sessions.refresh(a.ctx.sessionId, 'agent-a'), { changed: true });
      const refreshed = await tg.sessions.require(a.ctx.sessionId, 'agent-a');
      const after = sessionToolIndex(refreshed);
      assert.notEqual(after, before);
      assert.equal(after.find('retiring_read'), null);
      assert.notEqual(before.find('retiring_read'), null, 'an index never changes');
      assert.equal(codeOf(await a.call('retiring_read')), 'TOOL_NOT_REGISTERED');
      // The benign neighbour: what the set still holds resolves.
      assert.equal(codeOf(await a.call('alpha_read')), 'allow');
    });
  });
}
