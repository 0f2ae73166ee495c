/**
 * One upstream listing two prompts whose names differ only in case imports the first only, as a
 * tool listing does (attack round 10, F8; docs/tools-and-catalog.md, "Names the model sees"): the
 * second is skipped with the reason, beside the benign neighbours — prompts of distinct names, and
 * a resource whose URI differs from another's only in case — imported.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { admitListedEntries } from '../../src/execution/providers/listed-names.js';

const entry = (kind: string, key: string) => ({ kind, key, name: key });

test('prompts differing only in case: the first imported, the second skipped with the reason', () => {
  const { admitted, skipped } = admitListedEntries([
    entry('prompt', 'GREET3'),
    entry('prompt', 'greet3'),
    entry('prompt', 'farewell'),
    entry('resource', 'file:///A'),
    entry('resource', 'file:///a'),
    entry('prompt', 'zz__prompt__x'),
  ]);
  assert.deepEqual(
    admitted.map((e) => `${e.kind}:${e.key}`),
    ['prompt:GREET3', 'prompt:farewell', 'resource:file:///A', 'resource:file:///a'],
  );
  assert.deepEqual(
    skipped.map((s) => s.name),
    ['prompt:greet3', 'prompt:zz__prompt__x'],
  );
  assert.match(skipped[0]?.reason ?? '', /differing only in case/);
});

test('a resource, template or prompt listed more than once (round 11 F6): skipped with the reason, no occurrence imported', () => {
  const { admitted, skipped } = admitListedEntries([
    entry('resource', 'file:///readme'),
    { kind: 'resource', key: 'file:///readme', name: 'readme again' },
    entry('resource_template', 'docs://pages/{page}'),
    { kind: 'resource_template', key: 'docs://pages/{page}', name: 'pages again' },
    entry('prompt', 'greet'),
    entry('prompt', 'greet'),
    entry('resource_template', 'docs://pages/{page}'),
    // Benign neighbours: the same key under another kind, and distinct keys.
    entry('prompt', 'docs://pages/{page}'),
    entry('resource', 'file:///license'),
    entry('resource_template', 'docs://topics/{topic}'),
  ]);
  assert.deepEqual(
    admitted.map((e) => `${e.kind}:${e.key}`),
    [
      'prompt:docs://pages/{page}',
      'resource:file:///license',
      'resource_template:docs://topics/{topic}',
    ],
  );
  assert.deepEqual(skipped, [
    { name: 'resource:file:///readme', reason: 'listed more than once' },
    { name: 'resource_template:docs://pages/{page}', reason: 'listed more than once' },
    { name: 'prompt:greet', reason: 'listed more than once' },
  ]);
});

test('a key or prompt name holding a control, invisible or reordering character is skipped with the reason (attack round 17, T2)', () => {
  const { admitted, skipped } = admitListedEntries([
    entry('prompt', 'greet'),
    entry('prompt', 'gr\u034Feet'),
    entry('resource', 'notes://a\uFE0F'),
    entry('resource_template', 'docs://\u202Eegap/{page}'),
    entry('resource', 'notes://b\u0085'),
    // Benign neighbours: other scripts and emoji read as themselves.
    entry('prompt', 'grüßen'),
    entry('resource', 'notes://日本'),
    { kind: 'resource', key: 'notes://c', name: 'notes 😀' },
  ]);
  assert.deepEqual(
    admitted.map((e) => `${e.kind}:${e.key}`),
    ['prompt:greet', 'prompt:grüßen', 'resource:notes://日本', 'resource:notes://c'],
  );
  assert.equal(skipped.length, 4);
  for (const s of skipped) assert.match(s.reason, /control, invisible or reordering/);
});
