/** The `idempotency-lookup` step: the argument hash, the key's form, replay and conflict. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { argumentsHash } from '../../../src/domain/decisions/index.js';
import { harnessForFile } from './step-harness.js';

const { h, ctx } = harnessForFile({ session: true });

const lookup = (args: unknown, key?: string) =>
  h.at('idempotency-lookup', ctx, 'echo', args, key === undefined ? {} : { idempotencyKey: key });

test('without a key the call goes on with its canonical argument hash and no key', async () => {
  const { s, r } = await lookup({ invoice: 'I-1' });
  assert.equal(r, undefined);
  assert.equal(s.argsHash, argumentsHash({ invoice: 'I-1' }));
  assert.equal(s.idemKey, null);
});

test('arguments that are not valid Unicode are refused before anything is hashed or stored', async () => {
  const { r } = await lookup({ invoice: '\ud800' });
  assert.ok(r?.kind === 'refuse');
  assert.equal(r.rule, 'schema.unicode');
});

test('a key of the wrong form is INPUT_INVALID; a free key goes on, scoped to the principal', async () => {
  const bad = await lookup({ invoice: 'I-1' }, 'has space');
  assert.ok(bad.r?.kind === 'refuse');
  assert.equal(bad.r.rule, 'idempotency.key');
  const free = await lookup({ invoice: 'I-1' }, 'free-key');
  assert.equal(free.r, undefined);
  // The whole principal: agent, user and credential (none for this in-process caller).
  assert.equal(free.s.idemKey, JSON.stringify(['v4', 'bot', null, null, 'echo', 'free-key']));
});

test('a finished call under the key is replayed (audited) and other arguments conflict', async () => {
  const first = await h.tg.gate.invoke(ctx, 'echo', { invoice: 'I-9' }, { idempotencyKey: 'done' });
  assert.equal(first.kind, 'allow');
  const replay = await lookup({ invoice: 'I-9' }, 'done');
  assert.ok(replay.r?.kind === 'allow');
  assert.equal(replay.r.callId, first.callId);
  assert.deepEqual(replay.r.output, first.kind === 'allow' ? first.output : null);
  assert.deepEqual(await h.auditOf(replay.s.callId), ['call.replayed']);
  const other = await lookup({ invoice: 'I-10' }, 'done');
  assert.ok(other.r?.kind === 'refuse');
  assert.equal(other.r.code, 'IDEMPOTENCY_CONFLICT');
  assert.equal(other.r.rule, 'idempotency.arguments_differ');
});
