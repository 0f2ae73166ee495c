/**
 * The Cedar engine reuses a decision for a request that agrees with an earlier one on every fact
 * the loaded forbids read. Property: over random policy sets and random request sequences (drawn
 * from small domains, so keys collide often), the reusing engine answers exactly what an engine
 * that asks Cedar every time answers. Plus the analysis itself: narrow facts for the plain shapes,
 * the whole variable for anything else, and no reuse at all for what it cannot read.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CedarRequest } from '../../src/domain/policy/cedar/index.js';
import { CedarPolicyEngine } from '../../src/domain/policy/cedar/index.js';
import { cedarContext, cedarTool } from '../support/cedar.js';
import { fc } from '../support/property.js';

const POLICIES = [
  'forbid (principal, action, resource) when { context.hour_utc < 6 };',
  'forbid (principal, action, resource) when { context.arguments.hasTag("url") && context.arguments.getTag("url") like "http:*" };',
  'forbid (principal, action, resource) when { context.numeric_arguments.hasTag("amount") && context.numeric_arguments.getTag("amount") > 100 };',
  'forbid (principal, action, resource) when { resource.action_class == "payment" && !(context has user && context.user.permissions.contains("pay")) };',
  'forbid (principal, action, resource) when { resource.tags.contains("prod") && !principal.capabilities.contains("prod:write") };',
  'forbid (principal, action, resource) when { context.private_data_read && resource.egress == "unconstrained" };',
  'forbid (principal, action, resource) when { context.external_sends + 9223372036854775800 > 0 && context.external_sends > 5 };',
  'forbid (principal == Toolgate::Agent::"rogue", action, resource);',
  'forbid (principal, action, resource == Toolgate::Tool::"pay.send") when { context.destination_host like "*.evil.example" };',
  'forbid (principal, action, resource) when { principal.owner == context.on_behalf_of };',
  'forbid (principal, action, resource) when { context.user_permissions.isEmpty() && context.spend_cents > 10 };',
  'forbid (principal, action, resource == Toolgate::Tool::"pay.send") when { context.decimal_arguments.hasTag("amount") && context.decimal_arguments.getTag("amount").greaterThan(decimal("100.25")) };',
];

const requestArb: fc.Arbitrary<CedarRequest> = fc.record({
  agent: fc.record({
    id: fc.constantFrom('bot', 'rogue'),
    owner: fc.constantFrom('team', 'alice'),
    capabilities: fc.subarray(['prod:write', 'web:read']),
  }),
  user: fc.option(
    fc.record({ id: fc.constantFrom('alice', 'bob'), permissions: fc.subarray(['pay', 'read']) }),
    { nil: undefined },
  ),
  tool: fc.record({
    id: fc.constantFrom('web.fetch', 'pay.send'),
    version: fc.constant('1.0.0'),
    action_class: fc.constantFrom('read', 'payment'),
    data_access: fc.constantFrom('public', 'private'),
    egress: fc.constantFrom('none', 'unconstrained'),
    access_tier: fc.constant('standard'),
    owner: fc.constant('platform'),
    provenance: fc.constant('internal'),
    tags: fc.subarray(['prod', 'docs']),
  }),
  context: fc.record({
    session_id: fc.constantFrom('s1', 's2'),
    run_id: fc.constant('r1'),
    on_behalf_of: fc.constantFrom('', 'alice'),
    user_permissions: fc.subarray(['pay']),
    private_data_read: fc.boolean(),
    external_sends: fc.constantFrom(0, 6, 20),
    egress_bytes: fc.constant(0),
    spend_cents: fc.constantFrom(0, 50),
    hour_utc: fc.constantFrom(3, 12),
    destination_host: fc.constantFrom('', 'a.evil.example', 'ok.example'),
    arguments: fc.dictionary(
      fc.constantFrom('url', 'amount', 'note'),
      fc.oneof(
        fc.constantFrom('http://x', 'https://x', 'memo'),
        // Whole, fractional, past four places, past every range: exact or refused, reused alike.
        fc.constantFrom(5, 500, 2.5, 100.5, 100.25, 1e-7, 1e300),
        fc.constant({ nested: true }),
      ),
      { maxKeys: 3 },
    ),
  }),
});

function load(texts: readonly string[], reuse: boolean): CedarPolicyEngine {
  const result = CedarPolicyEngine.load(
    texts.map((text, i) => ({ id: `p${i}`, text })),
    { reuseDecisions: reuse },
  );
  if (!result.ok) throw new Error(`refused: ${JSON.stringify(result.problems)}`);
  return result.engine;
}

describe('Cedar decision reuse (property)', () => {
  test('a reusing engine answers every request exactly as Cedar does', () => {
    let hits = 0;
    fc.assert(
      fc.property(
        fc.subarray(POLICIES, { minLength: 1 }),
        fc.array(requestArb, { minLength: 5, maxLength: 40 }),
        (texts, requests) => {
          const reusing = load(texts, true);
          const fresh = load(texts, false);
          for (const r of requests) {
            assert.deepEqual(reusing.evaluate(r), fresh.evaluate(r));
          }
          // Twice over: the second pass is answered from the cache wherever a key repeats.
          for (const r of requests) assert.deepEqual(reusing.evaluate(r), fresh.evaluate(r));
          assert.ok(reusing.cacheHits >= requests.length, 'the second pass reuses every decision');
          assert.equal(fresh.cacheHits, 0);
          hits += reusing.cacheHits;
        },
      ),
      { numRuns: 60 },
    );
    assert.ok(hits > 0);
  });
});

describe('what a policy set reads', () => {
  const facts = (...texts: string[]) => load(texts, true).factsRead;

  test('plain attribute reads and literal tags are narrow', () => {
    assert.deepEqual(facts(POLICIES[0] as string), ['context.hour_utc']);
    assert.deepEqual(facts(POLICIES[11] as string), ['arg:amount', 'resource.*']);
    assert.deepEqual(facts(POLICIES[1] as string), ['arg:url']);
    assert.deepEqual(facts(POLICIES[3] as string), [
      'context.user',
      'context.user.permissions',
      'resource.action_class',
    ]);
    assert.deepEqual(facts(POLICIES[4] as string), ['principal.capabilities', 'resource.tags']);
  });

  test('a scope on the principal or the resource reads all of it', () => {
    assert.deepEqual(facts(POLICIES[7] as string), ['principal.*']);
    assert.deepEqual(facts(POLICIES[8] as string), ['context.destination_host', 'resource.*']);
  });

  test('a tag named by an expression reads every argument', () => {
    assert.deepEqual(
      facts(
        'forbid (principal, action, resource) when { context.arguments.hasTag(principal.id) };',
      ),
      ['context.arguments', 'principal.id'],
    );
  });

  test('only policies that read session counters make the gate re-read the session', () => {
    assert.equal(load([POLICIES[0] as string], true).readsSessionCounters, false);
    assert.equal(load([POLICIES[5] as string], true).readsSessionCounters, true);
    assert.equal(load([POLICIES[10] as string], true).readsSessionCounters, true);
    assert.equal(load([POLICIES[0] as string], false).readsSessionCounters, true);
  });

  test('a decision that depends on an unread fact is never wrongly reused: the read fact changes it', () => {
    const engine = load([POLICIES[2] as string], true);
    const base: CedarRequest = {
      agent: { id: 'bot', owner: 'team', capabilities: [] },
      tool: cedarTool('pay.refund', { action_class: 'write', owner: 'o', provenance: 'internal' }),
      context: cedarContext({ hour_utc: 1, arguments: { amount: 50, note: 'a' } }),
    };
    assert.equal(engine.evaluate(base).decision, 'allow');
    // Another session and note: same key, reused.
    const other = {
      ...base,
      context: { ...base.context, session_id: 't', arguments: { amount: 50, note: 'b' } },
    };
    assert.equal(engine.evaluate(other).decision, 'allow');
    assert.equal(engine.cacheHits, 1);
    // The amount the policy reads: a new key, Cedar asked, denied.
    const big = { ...base, context: { ...base.context, arguments: { amount: 500, note: 'a' } } };
    assert.equal(engine.evaluate(big).decision, 'deny');
    assert.equal(engine.cacheHits, 1);
    // A fractional amount the Long view reads is refused, and that refusal is reused by key.
    const half = { ...base, context: { ...base.context, arguments: { amount: 50.5, note: 'a' } } };
    assert.equal(engine.evaluate(half).decision, 'deny');
    assert.equal(
      engine.evaluate({ ...half, context: { ...half.context, session_id: 'u' } }).decision,
      'deny',
    );
    assert.equal(engine.cacheHits, 2);
    // A fractional session counter is refused by the request check before any reuse.
    const bad = { ...base, context: { ...base.context, external_sends: 1.5 } };
    assert.equal(engine.evaluate(bad).decision, 'deny');
  });
});
