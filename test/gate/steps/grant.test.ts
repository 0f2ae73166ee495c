/** The `grant` step: live capabilities must cover the tool's; the agent is read once for later steps. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { admin, harnessForFile } from './step-harness.js';

const { h } = harnessForFile();

test('a granted call goes on and keeps the agent for budgets and policy', async () => {
  const ctx = await h.open();
  const { s, r } = await h.at('grant', ctx, 'echo', { invoice: 'I-1' });
  assert.equal(r, undefined);
  assert.equal(s.agent.id, 'bot');
});

test('a grant revoked after the session opened refuses the next call with GRANT_MISSING', async () => {
  await h.tg.config.apply(
    [
      { kind: 'Agent', spec: { id: 'revoked', owner: 'qa' } },
      { kind: 'Grant', spec: { agent: 'revoked', capabilities: ['billing:read'] } },
    ],
    admin,
  );
  const ctx = await h.open('revoked');
  await h.tg.agents.revoke('revoked', ['billing:read'], admin);
  h.deps.identities.drop();
  const { r } = await h.at('grant', ctx, 'echo', { invoice: 'I-1' });
  assert.ok(r?.kind === 'refuse');
  assert.equal(r.code, 'GRANT_MISSING');
  assert.equal(r.rule, 'grant.capability');
});
