/**
 * @module The progress relay's bounds: what an upstream sends is passed on only while it keeps to
 * the MCP rule (progress increases), with its message capped; the agent's token is the one used.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import { progressRelay } from '../../src/edge/mcp/progress-relay.js';

test('only increasing, finite progress is relayed, under the agent token, messages capped', async () => {
  const sent: ServerNotification[] = [];
  const relay = progressRelay('agent-token', async (n) => {
    sent.push(n);
  });
  relay.onProgress({ progress: 1, total: 3, message: 'one' });
  relay.onProgress({ progress: 1, message: 'again' }); // repeated
  relay.onProgress({ progress: 0.5 }); // falling
  relay.onProgress({ progress: Number.NaN }); // not a number
  relay.onProgress({ progress: 2, total: Number.POSITIVE_INFINITY, message: 'x'.repeat(5000) });
  await relay.flush();
  assert.equal(sent.length, 2);
  assert.deepEqual(sent[0], {
    method: 'notifications/progress',
    params: { progressToken: 'agent-token', progress: 1, total: 3, message: 'one' },
  });
  const second = sent[1]?.params as { progress: number; total?: number; message: string };
  assert.equal(second.progress, 2);
  assert.equal(second.total, undefined, 'an infinite total is left out');
  assert.equal(second.message.length, 1000);
});

test('a report the transport cannot take is dropped; the relay goes on', async () => {
  let calls = 0;
  const relay = progressRelay(7, async () => {
    calls += 1;
    if (calls === 1) throw new Error('stream gone');
  });
  relay.onProgress({ progress: 1 });
  relay.onProgress({ progress: 2 });
  await relay.flush();
  assert.equal(calls, 2);
});
