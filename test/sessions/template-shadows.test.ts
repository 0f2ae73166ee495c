/**
 * @module Which templates no URI can be read through (src/domain/sessions/template-shadows.ts;
 * attack round 9 F2), as a pure function: a template every URI of which another listed template
 * may match too is shadowed, whatever either's state; one with a URI of its own is not, nor are
 * copies of one URI template; a removed template shadows nothing. Each shadow beside its benign
 * neighbour, and every URI a kept template is said to own is one the resolver reads through it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type GovernedUriEntry,
  resolveGovernedUri,
  shadowedTemplates,
} from '../../src/domain/sessions/index.js';

const t = (id: string, key: string, listed = true): GovernedUriEntry => ({
  id,
  kind: 'resource_template',
  key,
  listed,
});

/** The shadowed templates of a set, as `id by key,key`. */
function shadows(entries: readonly GovernedUriEntry[]): string[] {
  return [...shadowedTemplates(entries)]
    .map(([id, s]) => `${id} by ${s.by.map((b) => b.key).join(',')}`)
    .sort();
}

test('a broader template shadows the narrower one; the broader and an unrelated one stay', () => {
  assert.deepEqual(
    shadows([
      t('notes.template.topic', 'notes://topics/{topic}'),
      t('other.template.any', 'notes://{kind}/{name}'),
      t('other.template.page', 'docs://pages/{page}'),
    ]),
    ['notes.template.topic by notes://{kind}/{name}'],
  );
  assert.deepEqual(
    shadows([t('up.template.c', 'notes://customer/{id}'), t('zz.template.r', 'notes://{+rest}')]),
    ['up.template.c by notes://{+rest}'],
  );
  assert.deepEqual(
    shadows([t('a.template.x', 'notes://c/{a}-{b}'), t('b.template.y', 'notes://c/{x}')]),
    ['a.template.x by notes://c/{x}'],
  );
});

test('templates that share some URIs but each own others are both kept', () => {
  // notes://topics/vip matches both; notes://topics/tea and notes://kitchen/vip one each.
  assert.deepEqual(
    shadows([
      t('notes.template.topic', 'notes://topics/{topic}'),
      t('wide.template.vip', 'notes://{area}/vip'),
    ]),
    [],
  );
  // A query the plain variable cannot hold (`?` is escaped in its expansion).
  assert.deepEqual(
    shadows([
      t('up.template.c', 'notes://customer/{id}'),
      t('zz.template.q', 'notes://customer/{id}{?x}'),
    ]),
    [],
  );
  // `{+path}` reads across `/`, which neither narrower template does.
  assert.deepEqual(
    shadows([
      t('up.template.one', 'file:///{path}'),
      t('zz.template.all', 'file:///{+path}'),
      t('y.template.x', 'file:///x/{a}'),
    ]),
    ['up.template.one by file:///{+path}', 'y.template.x by file:///{+path}'],
  );
});

test('several templates together, copies, a removed template and one that does not parse', () => {
  assert.deepEqual(
    shadows([
      t('a.template.any', 'a://x/{a}'),
      t('b.template.json', 'a://x/{b}.json'),
      t('c.template.y', 'a://x/y{c}'),
    ]),
    ['b.template.json by a://x/{a},a://x/y{c}', 'c.template.y by a://x/{a},a://x/{b}.json'],
  );
  // One URI template listed by two providers: copies, not shadows.
  assert.deepEqual(
    shadows([
      t('up.template.c', 'notes://customer/{id}'),
      t('zz.template.c', 'notes://customer/{id}'),
    ]),
    [],
  );
  // A removed template reads nothing and shadows nothing; one the SDK cannot parse matches nothing.
  assert.deepEqual(
    shadows([
      t('up.template.c', 'notes://customer/{id}'),
      t('zz.template.r', 'notes://{+rest}', false),
      t('zz.template.bad', 'notes://{kind'),
    ]),
    [],
  );
});

test('a kept template has a URI of its own that the resolver reads through it', () => {
  const entries = [
    t('notes.template.topic', 'notes://topics/{topic}'),
    t('wide.template.vip', 'notes://{area}/vip'),
  ];
  assert.equal(shadowedTemplates(entries).size, 0);
  assert.deepEqual(resolveGovernedUri('notes://topics/tea', entries), {
    kind: 'resource_template',
    id: 'notes.template.topic',
    args: { topic: 'tea' },
  });
  assert.equal(resolveGovernedUri('notes://topics/vip', entries), null);
});
