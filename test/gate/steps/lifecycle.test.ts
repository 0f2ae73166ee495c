/** The `lifecycle` step: effective now; quarantined is "not registered", retired refused, deprecated warns. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { CallState } from '../../../src/gate/steps/step.js';
import { type Harness, openHarness } from './step-harness.js';

let h: Harness;
let resolved: CallState;
before(async () => {
  h = await openHarness();
  const ctx = await h.open();
  resolved = await h.before(h.state(ctx, 'echo', {}), 'lifecycle');
});
after(async () => {
  await h.close();
});

/** The resolved call with its tool version's detail changed as the test says. */
function withDetail(change: Record<string, unknown>): CallState {
  const s = h.state({ agentId: 'bot', sessionId: resolved.session.id }, 'echo', {});
  s.now = resolved.now;
  s.detail = { ...resolved.detail, ...change } as CallState['detail'];
  return s;
}

test('an active tool goes on without warnings', async () => {
  const s = withDetail({});
  assert.equal(await h.step(s, 'lifecycle'), undefined);
  assert.deepEqual(s.warnings, []);
});

test('a quarantined tool is refused as not registered, the audit keeps the reason', async () => {
  const r = await h.step(withDetail({ quarantined: true }), 'lifecycle');
  assert.ok(r?.kind === 'refuse');
  assert.equal(r.code, 'TOOL_NOT_REGISTERED');
  assert.equal(r.auditedRule, 'lifecycle.quarantined');
  assert.equal(r.anonymous, true);
});

test('a retired tool is refused; a deprecated one goes on with a warning', async () => {
  const retired = await h.step(
    withDetail({ lifecycle: 'deprecated', retire_at: '2026-05-01T00:00:00Z' }),
    'lifecycle',
  );
  assert.ok(retired?.kind === 'refuse');
  assert.equal(retired.code, 'TOOL_RETIRED');
  assert.equal(retired.rule, 'lifecycle.retired');
  const s = withDetail({ lifecycle: 'deprecated', retire_at: '2026-07-01T00:00:00Z' });
  assert.equal(await h.step(s, 'lifecycle'), undefined);
  assert.match(s.warnings[0] ?? '', /deprecated and retires 2026-07-01/);
});
