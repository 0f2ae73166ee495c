/**
 * @module What an owner may reach (docs/security-model.md "What an owner may reach"), over REST
 * with operator personal tokens and agent API keys, on SQLite: an owner's self-registered tool
 * that another team's agent would be offered (its capability, or none at all) is a draft that
 * waits for a security review and is offered to nobody, and the owner cannot activate it; the
 * same tool for their own team's capability goes live and reaches their own agent. Another
 * team's tool looks to an owner exactly like a tool that does not exist.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { validTool } from '../support/tools.js';
import { addOperators, openWorld, restClient, type World } from '../support/world.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const ADMIN_TOKEN = 'admin-token-for-owner-reach-tests-0123456789';

describe('what an owner may reach', () => {
  let tg: Gateway;
  let world: World;
  let base = '';
  const tokens: Record<string, string> = {};

  const rest = restClient(() => base);
  const call = (method: string, path: string, who: string, body?: unknown) =>
    rest(method, path, body, who === 'admin' ? ADMIN_TOKEN : (tokens[who] ?? ''));

  async function offeredTo(agent: string): Promise<string[]> {
    const session = await call('POST', '/v1/sessions', agent, {});
    assert.equal(session.status, 201, JSON.stringify(session.body));
    const listed = await call('GET', `/v1/sessions/${session.body.id}/tools`, agent);
    return (listed.body.tools as { name: string }[]).map((t) => t.name).sort();
  }

  const ownTool = (id: string, capabilities: string[]) =>
    validTool({
      id,
      name: id,
      owner: 'billing-team',
      data_access: 'public',
      egress: { mode: 'constrained', hosts: ['collector.example.com'] },
      required_capabilities: capabilities,
    });

  before(async () => {
    const backend = backends()[0];
    assert.ok(backend);
    world = await openWorld({
      backend,
      rest: { adminToken: ADMIN_TOKEN },
      options: { detectors: false },
    });
    ({ tg, base } = world);
    const agent = (id: string, owner: string) => ({
      kind: 'Agent',
      spec: { id, display_name: id, description: 'An agent.', owner },
    });
    await tg.config.apply(
      [
        agent('billing-bot', 'billing-team'),
        agent('workspace-bot', 'workspace-team'),
        { kind: 'Grant', spec: { agent: 'billing-bot', capabilities: ['billing:read'] } },
        { kind: 'Grant', spec: { agent: 'workspace-bot', capabilities: ['workspace:read'] } },
        {
          kind: 'Tool',
          spec: validTool({
            id: 'ws_lookup',
            name: 'ws_lookup',
            owner: 'workspace-team',
            required_capabilities: ['workspace:read'],
          }),
        },
      ],
      admin,
    );
    for (const id of ['billing-bot', 'workspace-bot'])
      tokens[id] = (await tg.keys.issue(id, admin)).apiKey;
    Object.assign(
      tokens,
      await addOperators(tg, [
        { id: 'olga', roles: ['owner'], teams: ['billing-team'], token: true },
        { id: 'aaron', roles: ['approver'], teams: [], token: true },
      ]),
    );
  });
  after(async () => {
    await world.close();
  });

  test("an owner's tool for another team's capability is a draft offered to nobody", async () => {
    const res = await call('POST', '/v1/tools', 'olga', ownTool('ws_peek', ['workspace:read']));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal((res.body.tool as { lifecycle: string }).lifecycle, 'draft');
    assert.deepEqual((res.body.review as { reasons: string[] }).reasons, ['other_teams']);
    assert.ok(!(await offeredTo('workspace-bot')).includes('ws_peek'));
    // The owner cannot activate it past the review.
    const activate = await call('POST', '/v1/tools/ws_peek/versions/1.0.0/activate', 'olga');
    assert.equal(activate.status, 409);
    assert.equal(activate.body.code, 'REVIEW_REQUIRED');
    assert.ok(!(await offeredTo('workspace-bot')).includes('ws_peek'));
    // A person's review decides it (four eyes: not the registrant, not the owning team).
    const hash = (res.body.tool as { definition_hash: string }).definition_hash;
    const review = await call('POST', '/v1/tools/ws_peek/versions/1.0.0/review', 'aaron', {
      decision: 'approved',
      definition_hash: hash,
      notes: 'workspace team agreed',
    });
    assert.equal(review.status, 200, JSON.stringify(review.body));
    assert.ok((await offeredTo('workspace-bot')).includes('ws_peek'));
  });

  test("an owner's tool for their own team's capability goes live for their own agent", async () => {
    const res = await call('POST', '/v1/tools', 'olga', ownTool('billing_peek', ['billing:read']));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal((res.body.tool as { lifecycle: string }).lifecycle, 'active');
    assert.equal(res.body.review, undefined);
    assert.ok((await offeredTo('billing-bot')).includes('billing_peek'));
    assert.ok(!(await offeredTo('workspace-bot')).includes('billing_peek'));
  });

  test("another team's tool looks to an owner exactly like a tool that does not exist", async () => {
    for (const [method, path] of [
      ['GET', '/v1/tools/ID'],
      ['GET', '/v1/tools/ID/versions/1.0.0'],
      ['POST', '/v1/tools/ID/versions/1.0.0/deprecate'],
      ['POST', '/v1/tools/ID/versions/1.0.0/activate'],
    ] as const) {
      const theirs = await call(method, path.replace('ID', 'ws_lookup'), 'olga');
      const none = await call(method, path.replace('ID', 'no_such_tool'), 'olga');
      assert.equal(theirs.status, 404, `${method} ${path}`);
      assert.equal(theirs.status, none.status, `${method} ${path}`);
      assert.deepEqual(
        JSON.parse(JSON.stringify(theirs.body).replaceAll('ws_lookup', 'no_such_tool')),
        none.body,
        `${method} ${path}`,
      );
      assert.ok(!JSON.stringify(theirs.body).includes('workspace-team'));
    }
    // The tool is untouched, and its own team's admin still sees it.
    const seen = await call('GET', '/v1/tools/ws_lookup/versions/1.0.0', 'admin');
    assert.equal((seen.body as { lifecycle: string }).lifecycle, 'active');
    // Registering over its id is refused without naming the team that holds it.
    const take = await call('POST', '/v1/tools', 'olga', ownTool('ws_lookup', ['billing:read']));
    assert.equal(take.status, 403);
    assert.ok(!JSON.stringify(take.body).includes('workspace-team'));
  });
});
