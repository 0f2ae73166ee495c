/**
 * Runs revoked by operators over REST: admins and auditors list the open runs of an agent, only an
 * admin revokes one (an auditor or an approver is refused, nothing changed; an unknown handle is
 * 404 RUN_NOT_FOUND), the revoke is audited with the operator, and the holder — a real 2026-07-28
 * SDK client — is refused with RUN_REVOKED at its next call.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import type { Actor } from '../../src/core/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { connectModernMcp, openWorld, restClient, type World } from '../support/world.js';

const ADMIN_TOKEN = 'runs-rest-admin-token-0123456789abcdef';
const admin: Actor = { id: 'test-admin', via: 'library' };
const RUN = 'io.toolgate/run';

interface Reply {
  readonly status: number;
  readonly body: { code?: string; runs?: { id: string; agent_id: string }[]; [k: string]: unknown };
}

describe('runs revoked by operators over REST', () => {
  let world: World;
  let tg: Gateway;
  let base = '';
  let agentKey = '';
  let tokens: Record<string, string> = {};
  const clients: Client[] = [];

  const rest = restClient(() => base);
  const call = async (token: string, method: string, path: string, body?: unknown) => {
    const { status, body: answer } = await rest(method, path, body, token);
    return { status, body: answer as Reply['body'] };
  };

  /** A real v2 client pinned to 2026-07-28, and the run handle its first list was given. */
  const holder = async (): Promise<{ client: Client; run: string }> => {
    const client = await connectModernMcp(base, agentKey, 'runs-rest');
    clients.push(client);
    const run = (await client.listTools())._meta?.[RUN];
    assert.equal(typeof run, 'string');
    return { client, run: run as string };
  };

  const order = (client: Client, run: string) =>
    client.callTool({
      name: 'get_order',
      arguments: { order_id: 'ORD-000042' },
      _meta: { [RUN]: run },
    });

  before(async () => {
    world = await openWorld({
      demo: true,
      actor: admin,
      keys: ['support-bot'],
      operators: [
        { id: 'ada', roles: ['admin'], token: true },
        { id: 'audrey', roles: ['auditor'], token: true },
        { id: 'april', roles: ['approver'], token: true },
      ],
      rest: { adminToken: ADMIN_TOKEN },
    });
    ({ tg, base, tokens } = world);
    agentKey = world.keys['support-bot'] ?? '';
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await world.close();
  });

  test('admins and auditors list the open runs of an agent; an approver is refused', async () => {
    const { run } = await holder();
    for (const who of ['ada', 'audrey']) {
      const res = await call(tokens[who] ?? '', 'GET', '/v1/runs?agent=support-bot');
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const runs = res.body.runs ?? [];
      assert.ok(
        runs.some((r) => r.id === run),
        'the holder run is listed',
      );
      assert.ok(runs.every((r) => r.agent_id === 'support-bot'));
    }
    const other = await call(tokens.ada ?? '', 'GET', '/v1/runs?agent=ops-bot');
    assert.ok(!(other.body.runs ?? []).some((r) => r.id === run), 'filtered by agent');
    const refused = await call(tokens.april ?? '', 'GET', '/v1/runs');
    assert.equal(refused.status, 403);
    assert.equal(refused.body.code, 'FORBIDDEN');
  });

  test('an auditor or an approver cannot revoke: 403, and the run still works', async () => {
    const { client, run } = await holder();
    for (const who of ['audrey', 'april']) {
      const res = await call(tokens[who] ?? '', 'POST', `/v1/runs/${run}/revoke`, {
        reason: 'not mine to end',
      });
      assert.equal(res.status, 403, JSON.stringify(res.body));
      assert.equal(res.body.code, 'FORBIDDEN');
    }
    const events = await tg.events.list({ limit: 10_000 });
    assert.equal(events.filter((e) => e.action === 'run.revoked').length, 0);
    const ok = await order(client, run);
    assert.notEqual(ok.isError, true, JSON.stringify(ok));
  });

  test('an unknown handle is 404 RUN_NOT_FOUND, and a body without a reason is 400', async () => {
    const unknown = await call(tokens.ada ?? '', 'POST', '/v1/runs/ses_nosuchrunnosuchrun/revoke', {
      reason: 'x',
    });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'RUN_NOT_FOUND');
    const { run } = await holder();
    const noReason = await call(tokens.ada ?? '', 'POST', `/v1/runs/${run}/revoke`, {});
    assert.equal(noReason.status, 400);
  });

  test("an admin revokes a run: audited with the operator, the holder's next call is RUN_REVOKED", async () => {
    const { client, run } = await holder();
    const res = await call(tokens.ada ?? '', 'POST', `/v1/runs/${run}/revoke`, {
      reason: 'suspected prompt injection',
    });
    assert.equal(res.status, 204, JSON.stringify(res.body));
    const revoked = (await tg.events.list({ subject: `session:${run}`, limit: 100 })).filter(
      (e) => e.action === 'run.revoked',
    );
    assert.equal(revoked.length, 1);
    assert.equal(revoked[0]?.actor, 'operator:ada');
    const details = JSON.parse(String(revoked[0]?.details)) as { reason?: string; agent?: string };
    assert.equal(details.reason, 'suspected prompt injection');
    assert.equal(details.agent, 'support-bot');
    await assert.rejects(order(client, run), (err: unknown) => {
      assert.match(JSON.stringify(err), /RUN_REVOKED/);
      return true;
    });
    const listed = await call(tokens.ada ?? '', 'GET', '/v1/runs?agent=support-bot');
    assert.ok(!(listed.body.runs ?? []).some((r) => r.id === run), 'no longer open');
    const again = await call(tokens.ada ?? '', 'POST', `/v1/runs/${run}/revoke`, { reason: 'x' });
    assert.equal(again.status, 404);
    assert.equal(again.body.code, 'RUN_NOT_FOUND');
  });
});
