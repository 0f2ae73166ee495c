/**
 * @module Which templates are not offered because another listed template may match a URI they
 * match (src/domain/sessions/template-shadows.ts; attack round 9 F2, round 10 F4), as a pure
 * function: any two different templates that may share a URI are both withheld, whatever either's
 * state, each naming the other; copies of one URI template are not, and a removed template
 * shadows nothing. Each shadow beside its benign neighbour; a kept template's URIs are read
 * through it (the bound on a pathological listing: test/redteam/template-redos.test.ts).
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

test('a broader template and the narrower one it covers are both withheld; an unrelated one stays', () => {
  assert.deepEqual(
    shadows([
      t('notes.template.topic', 'notes://topics/{topic}'),
      t('other.template.any', 'notes://{kind}/{name}'),
      t('other.template.page', 'docs://pages/{page}'),
    ]),
    [
      'notes.template.topic by notes://{kind}/{name}',
      'other.template.any by notes://topics/{topic}',
    ],
  );
  assert.deepEqual(
    shadows([t('up.template.c', 'notes://customer/{id}'), t('zz.template.r', 'notes://{+rest}')]),
    ['up.template.c by notes://{+rest}', 'zz.template.r by notes://customer/{id}'],
  );
  assert.deepEqual(
    shadows([t('a.template.x', 'notes://c/{a}-{b}'), t('b.template.y', 'notes://c/{x}')]),
    ['a.template.x by notes://c/{x}', 'b.template.y by notes://c/{a}-{b}'],
  );
});

test('templates that share some URIs are both withheld, each naming the other (attack round 10 F4)', () => {
  // notes://topics/vip matches both: neither is offered, though each has URIs of its own
  // (a list must never offer a template some of whose URIs another listing made unreadable).
  assert.deepEqual(
    shadows([
      t('notes.template.topic', 'notes://topics/{topic}'),
      t('wide.template.vip', 'notes://{area}/vip'),
    ]),
    ['notes.template.topic by notes://{area}/vip', 'wide.template.vip by notes://topics/{topic}'],
  );
  // A partly covering newcomer: every value of two or more characters matches both.
  assert.deepEqual(
    shadows([
      t('zz.template.c', 'notes://customer/{id}'),
      t('up.template.ab', 'notes://customer/{a}{b}'),
    ]),
    ['up.template.ab by notes://customer/{id}', 'zz.template.c by notes://customer/{a}{b}'],
  );
  // Templates starting with one digit each cover a part of the reviewed one's values.
  assert.deepEqual(
    shadows([
      t('zz.template.c', 'notes://customer/{id}'),
      t('up.template.d0', 'notes://customer/0{a}'),
    ]),
    ['up.template.d0 by notes://customer/{id}', 'zz.template.c by notes://customer/0{a}'],
  );
  // `{+path}` reads across `/`: it shares single segments with `{path}` and `x/...` with the
  // third; `{path}` and `x/{a}` share nothing.
  assert.deepEqual(
    shadows([
      t('up.template.one', 'file:///{path}'),
      t('zz.template.all', 'file:///{+path}'),
      t('y.template.x', 'file:///x/{a}'),
    ]),
    [
      'up.template.one by file:///{+path}',
      'y.template.x by file:///{+path}',
      'zz.template.all by file:///{path},file:///x/{a}',
    ],
  );
});

test('templates sharing no URI are both kept (the benign neighbours)', () => {
  // A query the plain variable cannot hold (`?` is escaped in its expansion).
  assert.deepEqual(
    shadows([
      t('up.template.c', 'notes://customer/{id}'),
      t('zz.template.q', 'notes://customer/{id}{?x}'),
    ]),
    [],
  );
  assert.deepEqual(
    shadows([
      t('up.template.c', 'notes://customer/{id}'),
      t('zz.template.t', 'notes://topics/{topic}'),
      t('zz.template.o', 'notes://customer/{id}/orders'),
      t('mm.template.m', 'memo://{kind}/{id}'),
    ]),
    [],
  );
});

test('several templates together, copies, a removed template and one that does not parse', () => {
  assert.deepEqual(
    shadows([
      t('a.template.any', 'a://x/{a}'),
      t('b.template.json', 'a://x/{b}.json'),
      t('c.template.y', 'a://x/y{c}'),
    ]),
    [
      'a.template.any by a://x/{b}.json,a://x/y{c}',
      'b.template.json by a://x/{a},a://x/y{c}',
      'c.template.y by a://x/{a},a://x/{b}.json',
    ],
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

test('a kept template is read through by the resolver; a URI of two templates by neither', () => {
  const entries = [
    t('notes.template.topic', 'notes://topics/{topic}'),
    t('wide.template.vip', 'notes://vip/{area}'),
  ];
  assert.equal(shadowedTemplates(entries).size, 0);
  assert.deepEqual(resolveGovernedUri('notes://topics/tea', entries), {
    kind: 'resource_template',
    id: 'notes.template.topic',
    args: { topic: 'tea' },
  });
  const both = [...entries, t('wide.template.any', 'notes://{a}/vip')];
  assert.equal(resolveGovernedUri('notes://topics/vip', both), null);
});
