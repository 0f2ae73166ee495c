/**
 * The `scope` step: an OAuth access token whose scopes miss a tool its agent is granted is refused
 * by the gate with INSUFFICIENT_SCOPE (only the scopes this call needs), audited as a denial like
 * any other refusal; a token whose scopes cover the tool, a tool beyond the agent's grants and a
 * caller that is no OAuth token go on.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { AgentPrincipal } from '../../../src/core/index.js';
import { oauthUserId } from '../../../src/domain/identity/index.js';
import type { Gate } from '../../../src/gate/gate.js';
import { scopeRefusal } from '../../../src/gate/steps/scope.js';
import { type Harness, harnessGate, openHarness } from './step-harness.js';

/** The resource server's scopes, as capabilities (oauth.scopes in the configuration). */
const SCOPES = { 'billing.read': ['billing:read'], 'notify.send': ['notify:send'] };

let h: Harness;
let gate: Gate;
before(async () => {
  h = await openHarness();
  gate = harnessGate(h, { oauth: { scopes: SCOPES } });
});
after(async () => {
  await h.close();
});

/**
 * What the authenticator builds for an OAuth access token of `bot` holding `scopes` (its user an
 * OAuth user: a session it opens holds what the grants allow, each request narrowed by its token).
 */
function tokenOf(user: string, scopes: string[]): AgentPrincipal {
  const permissions = scopes.flatMap((s) => SCOPES[s as keyof typeof SCOPES] ?? []);
  return {
    kind: 'agent',
    agentId: 'bot',
    credential: `oauth:${JSON.stringify(['https://as.example', 'client', user])}`,
    user: { id: oauthUserId('https://as.example', user), permissions },
    oauth: { issuer: 'https://as.example', scopes, expiresAt: Date.now() + 3_600_000 },
  };
}

test('attack: a token whose scopes miss a granted tool is refused by the gate, naming only the scope to add, and audited', async () => {
  const principal = tokenOf('ana@example.com', ['billing.read']);
  const session = await h.tg.sessions.open(principal);
  const decision = await gate.invoke({ principal, sessionId: session.id }, 'send', {
    to: 'a@customer.example',
    text: 'hi',
  });
  assert.equal(decision.kind, 'deny');
  assert.ok(decision.kind === 'deny');
  assert.equal(decision.code, 'INSUFFICIENT_SCOPE');
  assert.equal(decision.rule, 'oauth.insufficient_scope');
  assert.deepEqual(decision.details, { scope: 'notify.send' });
  // The gate audits it like any step's refusal: a denial, and nothing ran.
  assert.deepEqual(await h.auditOf(decision.callId), ['call.denied']);
});

test('benign: the same token calling a tool its scopes cover runs', async () => {
  const principal = tokenOf('ana@example.com', ['billing.read']);
  const session = await h.tg.sessions.open(principal);
  const decision = await gate.invoke({ principal, sessionId: session.id }, 'echo', {
    invoice: 'I-1',
  });
  assert.equal(decision.kind, 'allow', JSON.stringify(decision));
});

test('no step-up where no scope helps, nor for a caller that is no OAuth token', async () => {
  const deps = { ...h.deps, scopes: { config: { scopes: SCOPES }, catalog: h.tg.catalog } };
  // `secret` needs vault:read, which bot is not granted: resolve refuses it as unknown.
  const narrow = tokenOf('ben@example.com', ['billing.read']);
  assert.equal(await scopeRefusal(deps, narrow, 'secret'), undefined);
  // A token holding every configured scope, and an API key: decided at once, no look-up.
  const wide = tokenOf('ben@example.com', ['billing.read', 'notify.send']);
  assert.equal(scopeRefusal(deps, wide, 'send'), undefined);
  const key: AgentPrincipal = { kind: 'agent', agentId: 'bot', credential: 'key:k1' };
  assert.equal(scopeRefusal(deps, key, 'send'), undefined);
});
