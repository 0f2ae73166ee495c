/**
 * The sealed `requestState`: its claims round-trip, nothing in it is readable, and any change —
 * one byte, another master key, a past expiry, a re-encoding — opens to a refusal, never to claims.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isToolgateError } from '../../src/core/index.js';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { REQUEST_STATE_KEY_LABEL, RequestStateSealer } from '../../src/domain/decisions/index.js';

const CLAIMS = {
  agentId: 'pay-bot',
  userId: 'alice',
  credential: 'key_123',
  run: 'ses_run',
  toolId: 'wire_funds',
  toolVersion: '1.0.0',
  argsHash: 'sha256:abc',
  approvalId: 'apr_secret_id',
};

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(isToolgateError(err), String(err));
    return err.code;
  }
  assert.fail('opened');
}

test('claims round-trip; the wire form reveals none of them', () => {
  const master = MasterKey.generate();
  const sealer = new RequestStateSealer(master.derive(REQUEST_STATE_KEY_LABEL));
  const state = sealer.seal(CLAIMS);
  const { expiresAt, ...claims } = sealer.open(state);
  assert.deepEqual(claims, CLAIMS);
  assert.ok(expiresAt > Date.now());
  const decoded = Buffer.from(state.slice('tgrs1.'.length), 'base64url').toString('latin1');
  for (const value of Object.values(CLAIMS)) assert.ok(!decoded.includes(value), value);
  assert.notEqual(sealer.seal(CLAIMS), state, 'a fresh nonce each time');
});

test('a changed byte, another key, another label, a re-encoding or an expiry is refused', () => {
  const master = MasterKey.generate();
  const sealer = new RequestStateSealer(master.derive(REQUEST_STATE_KEY_LABEL));
  const state = sealer.seal(CLAIMS);
  const raw = Buffer.from(state.slice(6), 'base64url');
  for (let i = 0; i < raw.length; i += 7) {
    const copy = Buffer.from(raw);
    copy[i] = (copy[i] ?? 0) ^ 1;
    assert.equal(
      code(() => sealer.open(`tgrs1.${copy.toString('base64url')}`)),
      'REQUEST_STATE_INVALID',
    );
  }
  const otherKey = new RequestStateSealer(MasterKey.generate().derive(REQUEST_STATE_KEY_LABEL));
  assert.equal(
    code(() => otherKey.open(state)),
    'REQUEST_STATE_INVALID',
  );
  const otherLabel = new RequestStateSealer(master.derive('another purpose'));
  assert.equal(
    code(() => otherLabel.open(state)),
    'REQUEST_STATE_INVALID',
  );
  assert.equal(
    code(() => sealer.open(`${state}=`)),
    'REQUEST_STATE_INVALID',
  );
  assert.equal(
    code(() => sealer.open('')),
    'REQUEST_STATE_INVALID',
  );
  const past = new RequestStateSealer(master.derive(REQUEST_STATE_KEY_LABEL), {
    clock: () => new Date(Date.now() - 11 * 60_000),
  });
  assert.equal(
    code(() => sealer.open(past.seal(CLAIMS))),
    'REQUEST_STATE_EXPIRED',
  );
  // The benign neighbour: a state sealed a minute ago still opens.
  const recent = new RequestStateSealer(master.derive(REQUEST_STATE_KEY_LABEL), {
    clock: () => new Date(Date.now() - 60_000),
  });
  assert.equal(sealer.open(recent.seal(CLAIMS)).approvalId, CLAIMS.approvalId);
});
