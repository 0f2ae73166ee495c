/** The `resolve` step: only within the session's own set, by name or id; nothing else is named. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { harnessForFile } from './step-harness.js';

const { h } = harnessForFile();

test('a tool of the set resolves, compiled, and is named in refusals from then on', async () => {
  const ctx = await h.open();
  for (const ref of ['echo', 'send']) {
    const { s, r } = await h.at('resolve', ctx, ref, {});
    assert.equal(r, undefined);
    assert.equal(s.def.id, ref);
    assert.deepEqual(s.ref, { id: ref, version: '1.0.0' });
    assert.equal(typeof s.compiled.validateInput, 'function');
  }
});

test('a tool outside the set, an unknown name or a non-string is "not registered", unnamed', async () => {
  const ctx = await h.open();
  for (const ref of ['secret', 'no_such_tool', 42, null]) {
    const { s, r } = await h.at('resolve', ctx, ref, {});
    assert.equal(r?.kind, 'refuse', String(ref));
    assert.equal(r?.kind === 'refuse' ? r.code : '', 'TOOL_NOT_REGISTERED');
    assert.equal(s.ref, null, 'the refusal names no tool');
  }
});

test('a resource read or prompt get is resolved here: one the set does not offer is not found', async () => {
  const ctx = await h.open();
  for (const [ref, code] of [
    [{ entry: 'resource', uri: 'notes://customers' }, 'RESOURCE_NOT_FOUND'],
    [{ entry: 'prompt', name: 'echo' }, 'PROMPT_NOT_FOUND'],
  ] as const) {
    const { s, r } = await h.at('resolve', ctx, ref, {});
    assert.equal(r?.kind === 'refuse' ? r.code : r?.kind, code);
    assert.equal(r?.kind === 'refuse' && r.anonymous, true, 'the refusal names no tool');
    assert.equal(s.ref, null);
  }
  // A tool of the set is no resource or prompt, whatever its name.
  const { r } = await h.at('resolve', ctx, { entry: 'resource', uri: 'echo' }, {});
  assert.equal(r?.kind === 'refuse' ? r.code : r?.kind, 'RESOURCE_NOT_FOUND');
});
