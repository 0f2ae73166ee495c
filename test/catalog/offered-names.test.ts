/**
 * @module The naming rule as functions (src/domain/catalog/offered-names.ts; docs/tools-and-
 * catalog.md, "Names the model sees"): `__` is reserved in upstream names, and a string two
 * entries would answer to names neither. The same rule end to end, with real upstream servers, is
 * test/providers/tool-names.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clashingNames, idName, reservedNameProblem } from '../../src/domain/catalog/index.js';

test('a clashing entry is named by its catalog id with dots as `__`; an undotted id stays', () => {
  assert.equal(idName('zz.get_order'), 'zz__get_order');
  assert.equal(idName('zz.prompt.greeting-cd174559'), 'zz__prompt__greeting-cd174559');
  assert.equal(idName('get_order'), 'get_order');
});

test('an upstream name holding `__` is reserved, wherever it is; one `_` is not', () => {
  for (const name of ['zz__get_order', '__x', 'x__', 'a___b']) {
    assert.match(reservedNameProblem(name) ?? '', /reserves/, name);
  }
  for (const name of ['get_order', 'a_b_c', 'x-y', 'a_-_b']) {
    assert.equal(reservedNameProblem(name), null, name);
  }
});

test('two entries answering to one name are both refused; distinct names are not', () => {
  const clashes = clashingNames(
    [
      { id: 'zz.get_order', name: 'zz__get_order' },
      { id: 'up.zz__get_order', name: 'zz__get_order' },
      { id: 'get_order', name: 'get_order' },
    ],
    false,
  );
  assert.deepEqual([...clashes.keys()].sort(), ['up.zz__get_order', 'zz.get_order']);
  assert.match(clashes.get('zz.get_order') ?? '', /"zz__get_order".*none of them is offered/);
  assert.equal(
    clashingNames(
      [
        { id: 'up.echo', name: 'up__echo' },
        { id: 'zz.echo', name: 'zz__echo' },
      ],
      false,
    ).size,
    0,
  );
});

test("where a call may name an entry by id, one's name and another's id clash; its own id does not", () => {
  const entries = [
    { id: 'zz.echo', name: 'zz__echo' },
    { id: 'zz__echo', name: 'echo_twin' },
    { id: 'get_order', name: 'get_order' },
  ];
  assert.deepEqual([...clashingNames(entries, true).keys()].sort(), ['zz.echo', 'zz__echo']);
  // Prompts are found by name only: the same set clashes nowhere.
  assert.equal(clashingNames(entries, false).size, 0);
});

test('names that differ only in case are one name: both refused, with the reason (attack round 9 F4)', () => {
  const clashes = clashingNames(
    [
      { id: 'get_order', name: 'get_order' },
      { id: 'shadow_case', name: 'Get_Order' },
      { id: 'order_dash', name: 'get-order' },
    ],
    true,
  );
  assert.deepEqual([...clashes.keys()].sort(), ['get_order', 'shadow_case']);
  assert.match(clashes.get('shadow_case') ?? '', /"Get_Order", "get_order" differ only in case/);
  // A name given by the clash rule is folded too: an admin's `Up__Echo` beside `up.echo`'s name.
  assert.deepEqual(
    [
      ...clashingNames(
        [
          { id: 'up.echo', name: 'up__echo' },
          { id: 'zz.echo', name: 'zz__echo' },
          { id: 'loud', name: 'Up__Echo' },
        ],
        true,
      ).keys(),
    ].sort(),
    ['loud', 'up.echo'],
  );
  // One's name and another's id, by case: `Shadow` beside the tool whose id is `shadow`.
  assert.deepEqual(
    [
      ...clashingNames(
        [
          { id: 'shadow', name: 'lookup' },
          { id: 'other', name: 'Shadow' },
        ],
        true,
      ).keys(),
    ].sort(),
    ['other', 'shadow'],
  );
  // One entry's own name and id that differ only in case name one thing: no clash.
  assert.equal(clashingNames([{ id: 'echo2', name: 'Echo2' }], true).size, 0);
  // Prompts (by name only): `greet` and `Greet` clash; `greet` and `greet-2` do not.
  assert.equal(
    clashingNames(
      [
        { id: 'a.prompt.greet-1', name: 'greet' },
        { id: 'b.prompt.greet-2', name: 'Greet' },
      ],
      false,
    ).size,
    2,
  );
  assert.equal(
    clashingNames(
      [
        { id: 'a.prompt.greet-1', name: 'greet' },
        { id: 'b.prompt.greet-2', name: 'greet-2' },
      ],
      false,
    ).size,
    0,
  );
});
