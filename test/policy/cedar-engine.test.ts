/**
 * Organisation policies in Cedar, run through the real cedar-wasm: a forbid denies exactly the
 * calls its conditions describe, nothing an author writes can loosen that, broken or ill-typed
 * policies never load, appliesTo never skips a policy that could deny, and evaluate never throws.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type {
  CedarDecision,
  CedarRequest,
  CedarTool,
  PolicySource,
} from '../../src/domain/policy/cedar/index.js';
import { CedarPolicyEngine } from '../../src/domain/policy/cedar/index.js';
import { cedarContext, cedarTool } from '../support/cedar.js';
import { fc } from '../support/property.js';

function load(...texts: string[]): CedarPolicyEngine {
  const sources = texts.map((text, i) => ({ id: `doc${i}`, text }));
  const result = CedarPolicyEngine.load(sources);
  if (!result.ok) throw new Error(`policies refused: ${JSON.stringify(result.problems)}`);
  return result.engine;
}

function problemsOf(sources: PolicySource[]): { source: string; message: string }[] {
  const result = CedarPolicyEngine.load(sources);
  assert.equal(result.ok, false, 'the policy set should have been refused');
  return result.ok ? [] : result.problems;
}

interface RequestOverrides {
  readonly tool?: CedarTool;
  readonly context?: Partial<CedarRequest['context']>;
  readonly user?: CedarRequest['user'];
  readonly agent?: Partial<CedarRequest['agent']>;
}

function request(over: RequestOverrides = {}): CedarRequest {
  return {
    agent: { id: 'support-bot', owner: 'team-support', capabilities: ['web:read'], ...over.agent },
    user: over.user,
    tool: over.tool ?? cedarTool('web.fetch'),
    context: cedarContext({ session_id: 'sess-1', run_id: 'run-1', ...over.context }),
  };
}

function assertAllowed(decision: CedarDecision): void {
  assert.deepEqual(decision, { decision: 'allow' });
}

function assertDeniedBy(decision: CedarDecision, policy: string): void {
  assert.equal(decision.decision, 'deny', 'expected a deny');
  if (decision.decision === 'deny') assert.deepEqual(decision.policies, [policy]);
}

describe('forbid on a specific tool', () => {
  const engine = load('forbid (principal, action, resource == Toolgate::Tool::"shell.exec");');

  test('denies that tool and names the policy by source and position', () => {
    assertDeniedBy(engine.evaluate(request({ tool: cedarTool('shell.exec') })), 'doc0#0');
  });

  test('allows a neighbouring tool', () => {
    assertAllowed(engine.evaluate(request({ tool: cedarTool('shell.execute') })));
  });
});

describe('forbid with a condition fires only when the condition holds', () => {
  test('night-time rule: denied at 03:00 UTC, allowed at noon', () => {
    const engine = load(
      '@id("no-night-runs") @reason("No tool calls between 00:00 and 06:00 UTC")\n' +
        'forbid (principal, action, resource) when { context.hour_utc < 6 };',
    );
    const night = engine.evaluate(request({ context: { hour_utc: 3 } }));
    assert.deepEqual(night, {
      decision: 'deny',
      policies: ['no-night-runs'],
      reasons: ['No tool calls between 00:00 and 06:00 UTC'],
    });
    assertAllowed(engine.evaluate(request({ context: { hour_utc: 12 } })));
  });

  test('toxic flow: unconstrained egress after a private read is denied; constrained egress and clean sessions pass', () => {
    const engine = load(
      'forbid (principal, action, resource) when { context.private_data_read && resource.egress == "unconstrained" };',
    );
    const exfil = cedarTool('http.post', { egress: 'unconstrained' });
    assertDeniedBy(
      engine.evaluate(request({ tool: exfil, context: { private_data_read: true } })),
      'doc0#0',
    );
    assertAllowed(engine.evaluate(request({ tool: exfil, context: { private_data_read: false } })));
    const allowListed = cedarTool('http.post.partner', { egress: 'allowlist' });
    assertAllowed(
      engine.evaluate(request({ tool: allowListed, context: { private_data_read: true } })),
    );
  });

  test('destination pattern: *.evil.example denied, evil.example.com allowed', () => {
    const engine = load(
      'forbid (principal, action, resource) when { context.destination_host like "*.evil.example" };',
    );
    assertDeniedBy(
      engine.evaluate(request({ context: { destination_host: 'c2.evil.example' } })),
      'doc0#0',
    );
    assertAllowed(engine.evaluate(request({ context: { destination_host: 'evil.example.com' } })));
    assertAllowed(engine.evaluate(request({ context: { destination_host: '' } })));
  });

  test('string argument: an http:// url is denied, an https:// one and a call without url pass', () => {
    const engine = load(
      'forbid (principal, action, resource == Toolgate::Tool::"web.fetch") when {\n' +
        '  context.arguments.hasTag("url") && context.arguments.getTag("url") like "http://*"\n' +
        '};',
    );
    assertDeniedBy(
      engine.evaluate(request({ context: { arguments: { url: 'http://example.com/x' } } })),
      'doc0#0',
    );
    assertAllowed(
      engine.evaluate(request({ context: { arguments: { url: 'https://example.com/x' } } })),
    );
    assertAllowed(engine.evaluate(request({ context: { arguments: { query: 'http://x' } } })));
  });

  test('numeric argument: a refund above the ceiling is denied, one below passes', () => {
    const engine = load(
      'forbid (principal, action, resource) when {\n' +
        '  context.numeric_arguments.hasTag("amount_cents") &&\n' +
        '  context.numeric_arguments.getTag("amount_cents") > 50000\n' +
        '};',
    );
    const refund = cedarTool('payments.refund', { action_class: 'write' });
    assertDeniedBy(
      engine.evaluate(request({ tool: refund, context: { arguments: { amount_cents: 90000 } } })),
      'doc0#0',
    );
    assertAllowed(
      engine.evaluate(request({ tool: refund, context: { arguments: { amount_cents: 1200 } } })),
    );
    // A string "90000" is text, not a number: it appears only in context.arguments.
    assertAllowed(
      engine.evaluate(request({ tool: refund, context: { arguments: { amount_cents: '90000' } } })),
    );
  });

  test('nested argument values are matched through their canonical JSON text', () => {
    const engine = load(
      'forbid (principal, action, resource) when {\n' +
        '  context.arguments.hasTag("headers") && context.arguments.getTag("headers") like "*\\"x-admin\\":true*"\n' +
        '};',
    );
    assertDeniedBy(
      engine.evaluate(request({ context: { arguments: { headers: { b: 1, 'x-admin': true } } } })),
      'doc0#0',
    );
    assertAllowed(
      engine.evaluate(request({ context: { arguments: { headers: { 'x-admin': false } } } })),
    );
  });

  test('an argument named __proto__ is an ordinary argument', () => {
    const engine = load(
      'forbid (principal, action, resource) when { context.arguments.hasTag("__proto__") };',
    );
    const args = JSON.parse('{"__proto__": "x"}') as Record<string, unknown>;
    assertDeniedBy(engine.evaluate(request({ context: { arguments: args } })), 'doc0#0');
  });

  test('user facts: acting for a user without the permission is denied', () => {
    const engine = load(
      'forbid (principal, action, resource) when {\n' +
        '  resource.action_class == "payment" &&\n' +
        '  !(context has user && context.user.permissions.contains("payments:approve"))\n' +
        '};',
    );
    const pay = cedarTool('payments.send', { action_class: 'payment' });
    assertDeniedBy(engine.evaluate(request({ tool: pay })), 'doc0#0');
    assertDeniedBy(
      engine.evaluate(request({ tool: pay, user: { id: 'bob', permissions: ['read'] } })),
      'doc0#0',
    );
    assertAllowed(
      engine.evaluate(
        request({ tool: pay, user: { id: 'alice', permissions: ['payments:approve'] } }),
      ),
    );
  });

  test('agent facts: a principal attribute condition applies only to matching agents', () => {
    const engine = load(
      'forbid (principal, action, resource) when {\n' +
        '  resource.tags.contains("prod") && !principal.capabilities.contains("prod:write")\n' +
        '};',
    );
    const deploy = cedarTool('deploy.run', { tags: ['prod'] });
    assertDeniedBy(engine.evaluate(request({ tool: deploy })), 'doc0#0');
    assertAllowed(
      engine.evaluate(request({ tool: deploy, agent: { capabilities: ['prod:write'] } })),
    );
  });
});

describe('a forbid always wins', () => {
  test("an author's permit for the same call cannot override a forbid", () => {
    const engine = load(
      'forbid (principal, action, resource == Toolgate::Tool::"shell.exec");',
      '@id("let-me") permit (principal == Toolgate::Agent::"support-bot", action, resource == Toolgate::Tool::"shell.exec");',
    );
    assertDeniedBy(engine.evaluate(request({ tool: cedarTool('shell.exec') })), 'doc0#0');
    assert.deepEqual(engine.forbidIds, ['doc0#0']);
  });

  test('every matching forbid is named, in load order', () => {
    const engine = load(
      '@id("b") forbid (principal, action, resource) when { context.hour_utc < 6 };\n' +
        '@id("a") forbid (principal, action, resource == Toolgate::Tool::"web.fetch");',
    );
    const decision = engine.evaluate(request({ context: { hour_utc: 1 } }));
    assert.equal(decision.decision, 'deny');
    if (decision.decision === 'deny') {
      assert.deepEqual(decision.policies, ['b', 'a']);
      assert.deepEqual(decision.reasons, ['forbidden by policy b', 'forbidden by policy a']);
    }
  });

  test('with no policies loaded every call is allowed and no tool needs evaluation', () => {
    const engine = load();
    assertAllowed(engine.evaluate(request()));
    assert.equal(engine.appliesTo({ id: 'web.fetch', action_class: 'read', tags: [] }), false);
  });
});

describe('fail closed', () => {
  test('a forbid that overflows while evaluating denies, naming the error', () => {
    const engine = load(
      'forbid (principal, action, resource) when {\n' +
        '  context.numeric_arguments.hasTag("n") && context.numeric_arguments.getTag("n") * 1000000000000 > 5\n' +
        '};',
    );
    const decision = engine.evaluate(request({ context: { arguments: { n: 123456789 } } }));
    assertDeniedBy(decision, 'doc0#0');
    if (decision.decision === 'deny') assert.match(decision.reasons[0] ?? '', /overflow/);
    assertAllowed(engine.evaluate(request({ context: { arguments: { n: 0 } } })));
  });

  test('a fractional number or a mistyped attribute is refused, not skipped', () => {
    const engine = load('forbid (principal, action, resource) when { context.hour_utc < 6 };');
    const fractional = engine.evaluate(request({ context: { hour_utc: 3.5 } }));
    assert.equal(fractional.decision, 'deny');
    const mistyped = { ...request(), tool: { ...cedarTool('web.fetch'), egress: 7 } } as unknown;
    assert.equal(engine.evaluate(mistyped as CedarRequest).decision, 'deny');
    const missing = { ...request(), tool: { id: 'web.fetch' } } as unknown;
    assert.equal(engine.evaluate(missing as CedarRequest).decision, 'deny');
  });

  test('a string with a lone surrogate is denied and the engine keeps working', () => {
    const engine = load('forbid (principal, action, resource) when { context.hour_utc < 6 };');
    const lone = engine.evaluate(request({ context: { arguments: { q: 'a\ud800b' } } }));
    assert.equal(lone.decision, 'deny');
    assertAllowed(engine.evaluate(request()));
    assertDeniedBy(engine.evaluate(request({ context: { hour_utc: 2 } })), 'doc0#0');
  });
});

describe('load refuses the whole set on any problem', () => {
  test('a syntax error is refused with a problem naming its source and line', () => {
    const problems = problemsOf([
      { id: 'good', text: 'forbid (principal, action, resource) when { context.hour_utc < 6 };' },
      {
        id: 'broken',
        text: '// first line\nforbid (principal, action, resource) when { context.hour_utc < };',
      },
    ]);
    assert.equal(problems.length, 1);
    assert.equal(problems[0]?.source, 'broken');
    assert.match(problems[0]?.message ?? '', /line 2/);
  });

  test('an unknown attribute is refused by validation, naming the source and policy', () => {
    const problems = problemsOf([
      {
        id: 'ops',
        text: 'forbid (principal, action, resource) when { resource.colour == "red" };',
      },
    ]);
    assert.equal(problems[0]?.source, 'ops');
    assert.match(problems[0]?.message ?? '', /colour/);
    assert.match(problems[0]?.message ?? '', /ops#0/);
  });

  test('a wrong type is refused by validation', () => {
    const problems = problemsOf([
      {
        id: 'ops',
        text: 'forbid (principal, action, resource) when { context.hour_utc == "night" };',
      },
    ]);
    assert.equal(problems[0]?.source, 'ops');
    assert.match(problems[0]?.message ?? '', /Long|String/);
  });

  test('an unguarded getTag is refused: a missing argument could never make a policy fail', () => {
    const problems = problemsOf([
      {
        id: 'args',
        text: 'forbid (principal, action, resource) when { context.arguments.getTag("url") like "http:*" };',
      },
    ]);
    assert.match(problems[0]?.message ?? '', /hasTag/);
  });

  test('an impossible forbid is refused rather than loaded as a rule that never fires', () => {
    const problems = problemsOf([
      { id: 'ops', text: 'forbid (principal, action, resource == Toolgate::Agent::"x");' },
    ]);
    assert.equal(problems[0]?.source, 'ops');
  });

  test('problems in several sources are all reported in one load', () => {
    const problems = problemsOf([
      { id: 'a', text: 'forbid (principal, action, resource) when { resource.nope };' },
      { id: 'b', text: 'forbid (' },
      { id: 'c', text: 'forbid (principal, action, resource);' },
    ]);
    assert.deepEqual([...new Set(problems.map((p) => p.source))].sort(), ['a', 'b']);
  });

  test('policy text Cedar cannot even read (a lone surrogate) is a problem, not a throw', () => {
    const problems = problemsOf([
      {
        id: 'odd',
        text: 'forbid (principal, action, resource) when { context.run_id == "\ud800" };',
      },
    ]);
    assert.equal(problems[0]?.source, 'odd');
    assert.match(problems[0]?.message ?? '', /surrogate/);
  });

  test('a look-alike string mixing scripts is refused (validator warnings refuse too)', () => {
    // Cyrillic а and р: reads as "paypal", would never equal the real host.
    const problems = problemsOf([
      {
        id: 'homoglyph',
        text: 'forbid (principal, action, resource) when { context.destination_host == "\u0440\u0430ypal.com" };',
      },
    ]);
    assert.match(problems[0]?.message ?? '', /mixed scripts/);
  });

  test('duplicate policy ids, duplicate source ids and templates are refused', () => {
    const dupPolicy = problemsOf([
      { id: 'a', text: '@id("x") forbid (principal, action, resource);' },
      { id: 'b', text: '@id("x") forbid (principal, action, resource);' },
    ]);
    assert.match(dupPolicy[0]?.message ?? '', /x is used twice/);
    assert.equal(dupPolicy[0]?.source, 'b');
    problemsOf([
      { id: 'a', text: 'forbid (principal, action, resource);' },
      { id: 'a', text: 'forbid (principal, action, resource);' },
    ]);
    const template = problemsOf([
      { id: 't', text: 'forbid (principal == ?principal, action, resource);' },
    ]);
    assert.match(template[0]?.message ?? '', /template/);
  });

  test('positional ids follow source order beyond ten policies', () => {
    const text = Array.from(
      { length: 12 },
      (_, i) => `forbid (principal, action, resource == Toolgate::Tool::"t${i}");`,
    ).join('\n');
    const engine = load(text);
    assertDeniedBy(engine.evaluate(request({ tool: cedarTool('t10') })), 'doc0#10');
    assertDeniedBy(engine.evaluate(request({ tool: cedarTool('t2') })), 'doc0#2');
  });
});

describe('appliesTo', () => {
  const read = { id: 'web.fetch', action_class: 'read', tags: [] };
  const shell = { id: 'shell.exec', action_class: 'execute', tags: ['danger'] };

  test('a forbid scoped to one tool applies to that tool only', () => {
    const engine = load('forbid (principal, action, resource == Toolgate::Tool::"shell.exec");');
    assert.equal(engine.appliesTo(shell), true);
    assert.equal(engine.appliesTo(read), false);
  });

  test('resource in a list, like on the id, and tags narrow the same way', () => {
    const list = load(
      'forbid (principal, action, resource) when { resource in [Toolgate::Tool::"a", Toolgate::Tool::"shell.exec"] };',
    );
    assert.equal(list.appliesTo(shell), true);
    assert.equal(list.appliesTo(read), false);
    const like = load('forbid (principal, action, resource) when { resource.id like "shell.*" };');
    assert.equal(like.appliesTo(shell), true);
    assert.equal(like.appliesTo(read), false);
    const tags = load(
      'forbid (principal, action, resource) when { resource.tags.contains("danger") && context.hour_utc > 1 };',
    );
    assert.equal(tags.appliesTo(shell), true);
    assert.equal(tags.appliesTo(read), false);
  });

  test('an action_class condition narrows; an unconstrained forbid applies to every tool', () => {
    const byClass = load(
      'forbid (principal, action, resource) when { resource.action_class == "execute" && context.private_data_read };',
    );
    assert.equal(byClass.appliesTo(shell), true);
    assert.equal(byClass.appliesTo(read), false);
    const everywhere = load('forbid (principal, action, resource) when { context.hour_utc < 6 };');
    assert.equal(everywhere.appliesTo(read), true);
    assert.equal(everywhere.appliesTo(shell), true);
  });

  test('a negated or disjunctive condition is read correctly', () => {
    const notRead = load(
      'forbid (principal, action, resource) unless { resource.action_class == "read" };',
    );
    assert.equal(notRead.appliesTo(read), false);
    assert.equal(notRead.appliesTo(shell), true);
    const either = load(
      'forbid (principal, action, resource) when { resource.action_class == "write" || context.hour_utc < 6 };',
    );
    assert.equal(either.appliesTo(read), true);
  });

  test('a condition that may fail before the narrowing clause counts as applying', () => {
    const engine = load(
      'forbid (principal, action, resource) when {\n' +
        '  (context.numeric_arguments.hasTag("n") && context.numeric_arguments.getTag("n") * 1000000000000 > 5) &&\n' +
        '  resource.action_class == "execute"\n' +
        '};',
    );
    assert.equal(engine.appliesTo(read), true);
    const decision = engine.evaluate(request({ context: { arguments: { n: 123456789 } } }));
    assert.equal(decision.decision, 'deny');
  });

  test('a scope that excludes the tool hides any failure in the conditions', () => {
    const engine = load(
      'forbid (principal, action, resource == Toolgate::Tool::"shell.exec") when {\n' +
        '  context.numeric_arguments.hasTag("n") && context.numeric_arguments.getTag("n") * 1000000000000 > 5\n' +
        '};',
    );
    assert.equal(engine.appliesTo(read), false);
    assertAllowed(engine.evaluate(request({ context: { arguments: { n: 123456789 } } })));
  });

  test('permits never make a tool need evaluation', () => {
    const engine = load('permit (principal, action, resource);');
    assert.equal(engine.appliesTo(read), false);
  });
});

const TOOL_IDS = ['web.fetch', 'shell.exec', 'a', 'payments.refund'];
const CLASSES = ['read', 'write', 'execute', 'payment'];
const TAGS = ['danger', 'prod', 'pii'];

/** Policies appliesTo reasons about, each with conditions on context the generator varies. */
const SOUNDNESS_POLICIES = [
  'forbid (principal, action, resource == Toolgate::Tool::"shell.exec") when { context.hour_utc < 6 };',
  'forbid (principal, action, resource) when { resource.action_class == "payment" && context.spend_cents > 100 };',
  'forbid (principal, action, resource) unless { resource.action_class == "read" || context.private_data_read };',
  'forbid (principal, action, resource) when { resource.tags.containsAny(["danger", "pii"]) && context.external_sends > 2 };',
  'forbid (principal, action, resource) when { resource in [Toolgate::Tool::"a", Toolgate::Tool::"web.fetch"] && context.destination_host like "*.evil.example" };',
  'forbid (principal, action, resource) when { if resource.id like "pay*" then context.egress_bytes > 10 else false };',
  'forbid (principal, action, resource) when { context.numeric_arguments.hasTag("n") && context.numeric_arguments.getTag("n") * 5000 > 9000000000000000000 && resource.action_class == "write" };',
  'forbid (principal, action, resource) when { ["write", "execute"].contains(resource.action_class) } unless { context.hour_utc >= 9 };',
];

describe('properties', () => {
  test('appliesTo false means evaluate allows, for every request to that tool', () => {
    const engines = SOUNDNESS_POLICIES.map((p) => load(p));
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: engines.length - 1 }),
        fc.constantFrom(...TOOL_IDS),
        fc.constantFrom(...CLASSES),
        fc.subarray(TAGS),
        fc.record({
          hour_utc: fc.integer({ min: 0, max: 23 }),
          spend_cents: fc.integer({ min: 0, max: 1000 }),
          external_sends: fc.integer({ min: 0, max: 5 }),
          egress_bytes: fc.integer({ min: 0, max: 50 }),
          private_data_read: fc.boolean(),
          destination_host: fc.constantFrom('', 'x.evil.example', 'ok.example'),
        }),
        fc.option(fc.integer(), { nil: undefined }),
        (which, id, action_class, tags, context, n) => {
          const engine = engines[which];
          assert.ok(engine !== undefined);
          const facts = { id, action_class, tags };
          if (engine.appliesTo(facts)) return;
          const args = n === undefined ? {} : { n: n * 1_000_000 };
          const decision = engine.evaluate(
            request({
              tool: cedarTool(id, { action_class, tags }),
              context: { ...context, arguments: args },
            }),
          );
          assert.deepEqual(decision, { decision: 'allow' });
        },
      ),
      { numRuns: 400 },
    );
  });

  test('evaluate always returns a decision, whatever the strings and numbers in a request', () => {
    const engine = load(
      'forbid (principal, action, resource) when { context.hour_utc < 6 && context.destination_host like "*.evil.example" };',
      'forbid (principal, action, resource) when { context.arguments.hasTag("url") && context.arguments.getTag("url") like "http://*" };',
      'forbid (principal, action, resource) when { context.numeric_arguments.hasTag("n") && context.numeric_arguments.getTag("n") + 1 > 10 };',
    );
    // 'binary' alone yields only well-formed strings; mix in lone surrogates, which cedar-wasm
    // cannot deserialise, and the characters `like` patterns care about.
    const unit = fc.oneof(
      fc.constantFrom('\ud800', '\udfff', '*', '.', 'é'),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
    );
    const text = fc.string({ unit, maxLength: 20 });
    const number = fc.oneof(
      fc.integer(),
      fc.double(),
      fc.bigInt().map((b) => Number(b)),
      fc.constantFrom(Number.MAX_SAFE_INTEGER, -0, Number.NaN, Number.POSITIVE_INFINITY),
    );
    const anyValue = fc.oneof(text, number, fc.boolean(), fc.constant(null), fc.jsonValue());
    fc.assert(
      fc.property(
        text,
        text,
        fc.array(text, { maxLength: 3 }),
        number,
        number,
        fc.dictionary(text, anyValue, { maxKeys: 4 }),
        fc.option(fc.record({ id: text, permissions: fc.array(text, { maxLength: 2 }) }), {
          nil: undefined,
        }),
        (id, host, tags, hour, n, args, user) => {
          const decision = engine.evaluate(
            request({
              tool: cedarTool(id, { action_class: host, tags, owner: id }),
              user,
              agent: { id: host },
              context: { hour_utc: hour, spend_cents: n, destination_host: host, arguments: args },
            }),
          );
          assert.ok(decision.decision === 'allow' || decision.decision === 'deny');
          if (decision.decision === 'deny') assert.ok(decision.reasons.length > 0);
        },
      ),
      { numRuns: 500 },
    );
  });

  test('evaluate returns a decision for values of the wrong shape altogether', () => {
    const engine = load('forbid (principal, action, resource) when { context.hour_utc < 6 };');
    fc.assert(
      fc.property(fc.anything(), fc.anything(), (a, b) => {
        const broken = { ...request(), tool: a, context: b } as unknown as CedarRequest;
        const decision = engine.evaluate(broken);
        assert.equal(decision.decision, 'deny');
      }),
      { numRuns: 200 },
    );
    assert.equal(engine.evaluate(null as unknown as CedarRequest).decision, 'deny');
  });
});
