/**
 * A pin mismatch names what no longer matches (attack round 8, F12): a prompt's or a resource's
 * refusal says prompt or resource, not tool; a tool's still says tool.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { entryPinKey, pinnedWhat } from '../../src/execution/providers/upstream-entries.js';

test('a pin mismatch names the prompt, the resource or the template it pinned; a tool stays a tool', () => {
  assert.equal(pinnedWhat(entryPinKey('prompt', 'summarize')), 'prompt');
  assert.equal(pinnedWhat(entryPinKey('resource', 'notes://readme')), 'resource');
  assert.equal(pinnedWhat(entryPinKey('resource_template', 'notes://{id}')), 'resource template');
  // The benign neighbour: a tool's pin key is its name.
  assert.equal(pinnedWhat('echo'), 'tool');
});
