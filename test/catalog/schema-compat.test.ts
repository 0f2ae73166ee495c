// A default import needs esModuleInterop, which this project's tsconfig leaves off.
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import {
  findBreakingChanges,
  isMajorBump,
  type JsonSchema,
  type SchemaBreak,
} from '../../src/domain/catalog/schema-compat.js';
import { fc } from '../support/property.js';

type Obj = { readonly [k: string]: unknown };

/** A closed top-level object, the shape every tool input schema has. */
function closed(properties: Obj, extra: Obj = {}): Obj {
  return { type: 'object', properties, additionalProperties: false, ...extra };
}

function inputBreaks(oldInput: JsonSchema, newInput: JsonSchema): SchemaBreak[] {
  return findBreakingChanges(
    { input_schema: oldInput, output_schema: {} },
    { input_schema: newInput, output_schema: {} },
  );
}

function outputBreaks(oldOutput: JsonSchema, newOutput: JsonSchema): SchemaBreak[] {
  const input = closed({});
  return findBreakingChanges(
    { input_schema: input, output_schema: oldOutput },
    { input_schema: input, output_schema: newOutput },
  );
}

/** Exactly one break, of this kind at this pointer; returns it for message checks. */
function assertOnly(breaks: readonly SchemaBreak[], kind: string, pointer: string): SchemaBreak {
  assert.deepEqual(
    breaks.map((b) => ({ kind: b.kind, pointer: b.pointer })),
    [{ kind, pointer }],
    JSON.stringify(breaks, null, 2),
  );
  const [only] = breaks;
  assert.ok(only);
  return only;
}

function assertNone(breaks: readonly SchemaBreak[]): void {
  assert.deepEqual(breaks, [], JSON.stringify(breaks, null, 2));
}

// --- input breaks -------------------------------------------------------------------------------

test('removing an input property under additionalProperties:false is property_removed', () => {
  const b = assertOnly(
    inputBreaks(
      closed({ to: { type: 'string' }, cc: { type: 'string' } }),
      closed({ to: { type: 'string' } }),
    ),
    'property_removed',
    '/input_schema/properties/cc',
  );
  assert.match(b.message, /'cc'/);
});

test('removing an input property when extra properties are still allowed is compatible', () => {
  assertNone(
    inputBreaks(
      { type: 'object', properties: { to: { type: 'string' }, cc: { type: 'string' } } },
      { type: 'object', properties: { to: { type: 'string' } } },
    ),
  );
});

test('a new required input property is required_added', () => {
  const b = assertOnly(
    inputBreaks(closed({}), closed({ to: { type: 'string' } }, { required: ['to'] })),
    'required_added',
    '/input_schema/properties/to',
  );
  assert.match(b.message, /'to' is now required/);
});

test('making an existing optional input property required is required_added', () => {
  assertOnly(
    inputBreaks(
      closed({ to: { type: 'string' } }),
      closed({ to: { type: 'string' } }, { required: ['to'] }),
    ),
    'required_added',
    '/input_schema/properties/to',
  );
});

test('narrowing an input type union is type_narrowed naming the lost type', () => {
  const b = assertOnly(
    inputBreaks(
      closed({ amount: { type: ['string', 'number'] } }),
      closed({ amount: { type: 'string' } }),
    ),
    'type_narrowed',
    '/input_schema/properties/amount',
  );
  assert.match(b.message, /'amount'/);
  assert.match(b.message, /number/);
});

test('number to integer on input is type_narrowed', () => {
  assertOnly(
    inputBreaks(closed({ n: { type: 'number' } }), closed({ n: { type: 'integer' } })),
    'type_narrowed',
    '/input_schema/properties/n',
  );
});

test('adding a type where there was none is type_narrowed', () => {
  assertOnly(
    inputBreaks(closed({ v: {} }), closed({ v: { type: 'string' } })),
    'type_narrowed',
    '/input_schema/properties/v',
  );
});

test('removing an enum value on input is enum_narrowed naming the value', () => {
  const b = assertOnly(
    inputBreaks(
      closed({ mode: { type: 'string', enum: ['fast', 'slow', 'safe'] } }),
      closed({ mode: { type: 'string', enum: ['safe', 'fast'] } }),
    ),
    'enum_narrowed',
    '/input_schema/properties/mode',
  );
  assert.match(b.message, /"slow"/);
});

test('adding an enum to an open input string is enum_narrowed', () => {
  assertOnly(
    inputBreaks(
      closed({ mode: { type: 'string' } }),
      closed({ mode: { type: 'string', enum: ['a'] } }),
    ),
    'enum_narrowed',
    '/input_schema/properties/mode',
  );
});

test('adding or changing const on input is enum_narrowed', () => {
  assertOnly(
    inputBreaks(closed({ v: { type: 'string' } }), closed({ v: { const: 'x' } })),
    'enum_narrowed',
    '/input_schema/properties/v',
  );
  const b = assertOnly(
    inputBreaks(closed({ v: { const: 'x' } }), closed({ v: { const: 'y' } })),
    'enum_narrowed',
    '/input_schema/properties/v',
  );
  assert.match(b.message, /"x"/);
});

test('additionalProperties true, absent or a schema becoming false is additional_properties_tightened', () => {
  for (const before of [
    { additionalProperties: true },
    {},
    { additionalProperties: { type: 'string' } },
  ]) {
    assertOnly(
      inputBreaks(
        { type: 'object', properties: { a: { type: 'string' } }, ...before },
        closed({ a: { type: 'string' } }),
      ),
      'additional_properties_tightened',
      '/input_schema/additionalProperties',
    );
  }
});

test('additionalProperties gaining a schema is additional_properties_tightened', () => {
  assertOnly(
    inputBreaks({ type: 'object' }, { type: 'object', additionalProperties: { type: 'string' } }),
    'additional_properties_tightened',
    '/input_schema/additionalProperties',
  );
});

test('a narrowed additionalProperties schema reports the narrowing inside it', () => {
  assertOnly(
    inputBreaks(
      { type: 'object', additionalProperties: { type: ['string', 'number'] } },
      { type: 'object', additionalProperties: { type: 'string' } },
    ),
    'type_narrowed',
    '/input_schema/additionalProperties',
  );
});

test('every tightened or added input limit is constraint_tightened', () => {
  const cases: readonly [Obj, Obj, string][] = [
    [{ type: 'string' }, { type: 'string', minLength: 1 }, 'minLength'],
    [{ type: 'string', maxLength: 100 }, { type: 'string', maxLength: 50 }, 'maxLength'],
    [{ type: 'string' }, { type: 'string', pattern: '^[a-z]+$' }, 'pattern'],
    [{ type: 'string', pattern: '^a' }, { type: 'string', pattern: '^b' }, 'pattern'],
    [{ type: 'string' }, { type: 'string', format: 'email' }, 'format'],
    [{ type: 'number', minimum: 0 }, { type: 'number', minimum: 1 }, 'lower bound'],
    [{ type: 'number', minimum: 0 }, { type: 'number', exclusiveMinimum: 0 }, 'lower bound'],
    [{ type: 'number' }, { type: 'number', maximum: 10 }, 'upper bound'],
    [{ type: 'number', multipleOf: 2 }, { type: 'number', multipleOf: 3 }, 'multipleOf'],
    [{ type: 'array', maxItems: 5 }, { type: 'array', maxItems: 3 }, 'maxItems'],
    [{ type: 'array' }, { type: 'array', minItems: 1 }, 'minItems'],
    [{ type: 'array' }, { type: 'array', uniqueItems: true }, 'uniqueItems'],
    [{ type: 'object' }, { type: 'object', maxProperties: 2 }, 'maxProperties'],
  ];
  for (const [before, after, what] of cases) {
    const b = assertOnly(
      inputBreaks(closed({ v: before }), closed({ v: after })),
      'constraint_tightened',
      '/input_schema/properties/v',
    );
    assert.ok(b.message.includes(what), `${b.message} should name ${what}`);
  }
});

test('narrowed array items are reported at the items pointer', () => {
  assertOnly(
    inputBreaks(
      closed({ tags: { type: 'array', items: { type: ['string', 'number'] } } }),
      closed({ tags: { type: 'array', items: { type: 'string' } } }),
    ),
    'type_narrowed',
    '/input_schema/properties/tags/items',
  );
});

test('narrowed prefixItems are reported per position', () => {
  assertOnly(
    inputBreaks(
      closed({ pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }] } }),
      closed({ pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }] } }),
    ),
    'type_narrowed',
    '/input_schema/properties/pair/prefixItems/1',
  );
});

test('closing a tuple with items:false is constraint_tightened', () => {
  assertOnly(
    inputBreaks(
      closed({ pair: { type: 'array', prefixItems: [{ type: 'string' }] } }),
      closed({ pair: { type: 'array', prefixItems: [{ type: 'string' }], items: false } }),
    ),
    'constraint_tightened',
    '/input_schema/properties/pair/items',
  );
});

test('an input schema replaced by false rejects everything and is type_narrowed', () => {
  assertOnly(
    inputBreaks(closed({ v: { type: 'string' } }), closed({ v: false })),
    'type_narrowed',
    '/input_schema/properties/v',
  );
});

// --- output breaks ------------------------------------------------------------------------------

test('removing an output property is output_property_removed', () => {
  const b = assertOnly(
    outputBreaks(
      closed({ id: { type: 'string' }, name: { type: 'string' } }, { required: ['id'] }),
      closed({ name: { type: 'string' } }),
    ),
    'output_property_removed',
    '/output_schema/properties/id',
  );
  assert.match(b.message, /'id'/);
});

test('removing an optional output property is still output_property_removed', () => {
  assertOnly(
    outputBreaks(
      { type: 'object', properties: { id: { type: 'string' }, note: { type: 'string' } } },
      { type: 'object', properties: { id: { type: 'string' } } },
    ),
    'output_property_removed',
    '/output_schema/properties/note',
  );
});

test('a required output property made optional is output_required_removed', () => {
  assertOnly(
    outputBreaks(
      closed({ id: { type: 'string' } }, { required: ['id'] }),
      closed({ id: { type: 'string' } }),
    ),
    'output_required_removed',
    '/output_schema/properties/id',
  );
});

test('widening an output type to nullable is output_type_changed naming null', () => {
  const b = assertOnly(
    outputBreaks(
      closed({ status: { type: 'string' } }),
      closed({ status: { type: ['string', 'null'] } }),
    ),
    'output_type_changed',
    '/output_schema/properties/status',
  );
  assert.match(b.message, /null/);
});

test('changing an output type outright is output_type_changed', () => {
  assertOnly(
    outputBreaks(closed({ n: { type: 'string' } }), closed({ n: { type: 'number' } })),
    'output_type_changed',
    '/output_schema/properties/n',
  );
  assertOnly(
    outputBreaks(closed({ n: { type: 'integer' } }), closed({ n: { type: 'number' } })),
    'output_type_changed',
    '/output_schema/properties/n',
  );
});

test('a new output enum value is output_enum_widened naming it', () => {
  const b = assertOnly(
    outputBreaks(
      closed({ state: { type: 'string', enum: ['open', 'closed'] } }),
      closed({ state: { type: 'string', enum: ['open', 'closed', 'archived'] } }),
    ),
    'output_enum_widened',
    '/output_schema/properties/state',
  );
  assert.match(b.message, /"archived"/);
});

test('dropping an output enum altogether is output_enum_widened', () => {
  assertOnly(
    outputBreaks(
      closed({ state: { type: 'string', enum: ['open'] } }),
      closed({ state: { type: 'string' } }),
    ),
    'output_enum_widened',
    '/output_schema/properties/state',
  );
});

test('a relaxed output limit is reported as output_type_changed', () => {
  assertOnly(
    outputBreaks(
      closed({ s: { type: 'string', maxLength: 10 } }),
      closed({ s: { type: 'string', maxLength: 20 } }),
    ),
    'output_type_changed',
    '/output_schema/properties/s',
  );
});

test('an output additionalProperties schema dropped is output_type_changed', () => {
  assertOnly(
    outputBreaks({ type: 'object', additionalProperties: { type: 'string' } }, { type: 'object' }),
    'output_type_changed',
    '/output_schema/additionalProperties',
  );
});

// --- compatible changes -------------------------------------------------------------------------

test('adding a constrained property to an input object that allowed any extra property is a break', () => {
  // Old callers could already send `y` with any value; the new schema rejects some of those.
  const b = assertOnly(
    inputBreaks(
      closed({ opts: { type: 'object', properties: { x: { type: 'string' } } } }),
      closed({
        opts: { type: 'object', properties: { x: { type: 'string' }, y: { type: 'integer' } } },
      }),
    ),
    'type_narrowed',
    '/input_schema/properties/opts/properties/y',
  );
  assert.match(b.message, /additionalProperties/);
});

test('adding an optional input property is compatible', () => {
  assertNone(
    inputBreaks(
      closed({ to: { type: 'string' } }),
      closed({ to: { type: 'string' }, cc: { type: 'string' } }),
    ),
  );
});

test('dropping a required constraint from input is compatible', () => {
  assertNone(
    inputBreaks(
      closed({ to: { type: 'string' } }, { required: ['to'] }),
      closed({ to: { type: 'string' } }),
    ),
  );
});

test('widening an input type or enum is compatible', () => {
  assertNone(
    inputBreaks(closed({ v: { type: 'string' } }), closed({ v: { type: ['string', 'null'] } })),
  );
  assertNone(inputBreaks(closed({ v: { type: 'integer' } }), closed({ v: { type: 'number' } })));
  assertNone(
    inputBreaks(
      closed({ v: { type: 'string', enum: ['a'] } }),
      closed({ v: { type: 'string', enum: ['a', 'b'] } }),
    ),
  );
  assertNone(inputBreaks(closed({ v: { const: 'a' } }), closed({ v: { enum: ['a', 'b'] } })));
  assertNone(inputBreaks(closed({ v: { type: 'string', enum: ['a'] } }), closed({ v: {} })));
});

test('relaxing input limits is compatible', () => {
  assertNone(
    inputBreaks(
      closed({
        s: { type: 'string', minLength: 2, maxLength: 10, pattern: '^a', format: 'email' },
        n: { type: 'number', exclusiveMinimum: 0, maximum: 10, multipleOf: 4 },
        l: { type: 'array', minItems: 2, maxItems: 3, uniqueItems: true },
      }),
      closed({
        s: { type: 'string', minLength: 1, maxLength: 20 },
        n: { type: 'number', minimum: 0, multipleOf: 2 },
        l: { type: 'array', maxItems: 5 },
      }),
    ),
  );
});

test('an enum input stays compatible with a new limit all its values meet', () => {
  assertNone(
    inputBreaks(
      closed({ v: { type: 'string', enum: ['ab', 'cd'] } }),
      closed({ v: { type: 'string', maxLength: 2, pattern: '^[a-d]+$' } }),
    ),
  );
  assertOnly(
    inputBreaks(
      closed({ v: { type: 'string', enum: ['ab', 'cde'] } }),
      closed({ v: { type: 'string', maxLength: 2 } }),
    ),
    'constraint_tightened',
    '/input_schema/properties/v',
  );
});

test('adding an output property is compatible, even where the old output was closed', () => {
  assertNone(
    outputBreaks(
      closed({ id: { type: 'string' } }),
      closed({ id: { type: 'string' }, extra: { type: 'number' } }),
    ),
  );
  assertNone(
    outputBreaks(
      { type: 'object', properties: { id: { type: 'string' } } },
      { type: 'object', properties: { id: { type: 'string' }, extra: { type: 'number' } } },
    ),
  );
});

test('narrowing an output is compatible', () => {
  assertNone(
    outputBreaks(
      closed({ s: { type: ['string', 'null'], enum: ['a', 'b', null] }, n: { type: 'number' } }),
      closed(
        { s: { type: 'string', enum: ['a'] }, n: { type: 'integer', minimum: 0 } },
        { required: ['s'] },
      ),
    ),
  );
});

test('changing only descriptions, titles and examples is compatible', () => {
  const before = closed(
    { to: { type: 'string', description: 'recipient', examples: ['a@b.c'] } },
    { title: 'Send', description: 'Sends mail', required: ['to'] },
  );
  const after = closed(
    { to: { type: 'string', description: 'who receives it', title: 'To', examples: [] } },
    { title: 'Send mail', description: 'Sends one mail', $comment: 'v2', required: ['to'] },
  );
  assertNone(
    findBreakingChanges(
      { input_schema: before, output_schema: before },
      { input_schema: after, output_schema: after },
    ),
  );
});

test('reordering properties, enum values, types and required lists is compatible', () => {
  const before = closed(
    { a: { type: ['string', 'null'], enum: ['x', 'y', null] }, b: { type: 'number' } },
    { required: ['a', 'b'] },
  );
  const after = {
    required: ['b', 'a'],
    additionalProperties: false,
    properties: { b: { type: 'number' }, a: { enum: [null, 'y', 'x'], type: ['null', 'string'] } },
    type: 'object',
  };
  assertNone(
    findBreakingChanges(
      { input_schema: before, output_schema: before },
      { input_schema: after, output_schema: after },
    ),
  );
});

test('adding an anyOf branch to an input is compatible', () => {
  assertNone(
    inputBreaks(
      closed({ v: { anyOf: [{ type: 'string' }, { type: 'number' }] } }),
      closed({ v: { anyOf: [{ type: 'number' }, { type: 'string' }, { type: 'null' }] } }),
    ),
  );
});

test('moving a property schema behind a $ref is compatible', () => {
  assertNone(
    inputBreaks(closed({ addr: closed({ zip: { type: 'string' } }) }), {
      ...closed({ addr: { $ref: '#/$defs/Address', description: 'where' } }),
      $defs: { Address: closed({ zip: { type: 'string' } }) },
    }),
  );
});

// --- nesting and references ---------------------------------------------------------------------

test('a property removed from a nested object points at its nested location', () => {
  assertOnly(
    inputBreaks(
      closed({ opts: closed({ x: { type: 'string' }, y: { type: 'string' } }) }),
      closed({ opts: closed({ y: { type: 'string' } }) }),
    ),
    'property_removed',
    '/input_schema/properties/opts/properties/x',
  );
});

test('an output property removed inside array items is found', () => {
  const b = assertOnly(
    outputBreaks(
      closed({
        items: { type: 'array', items: closed({ id: { type: 'string' }, n: { type: 'number' } }) },
      }),
      closed({ items: { type: 'array', items: closed({ n: { type: 'number' } }) } }),
    ),
    'output_property_removed',
    '/output_schema/properties/items/items/properties/id',
  );
  assert.match(b.message, /items\[\]\.id/);
});

test('a change inside a $ref target is reported at the target in the new definition', () => {
  const defs = (zip: Obj): Obj => ({
    ...closed({ home: { $ref: '#/$defs/Address' }, work: { $ref: '#/$defs/Address' } }),
    $defs: { Address: closed({ zip }) },
  });
  assertOnly(
    inputBreaks(defs({ type: ['string', 'integer'] }), defs({ type: 'string' })),
    'type_narrowed',
    '/input_schema/$defs/Address/properties/zip',
  );
});

test('recursive $ref schemas terminate and still find breaks', () => {
  const tree = (leaf: Obj): Obj => ({
    $ref: '#/$defs/Node',
    $defs: {
      Node: closed({ value: leaf, children: { type: 'array', items: { $ref: '#/$defs/Node' } } }),
    },
  });
  assertNone(inputBreaks(tree({ type: 'string' }), tree({ type: 'string' })));
  assertOnly(
    inputBreaks(tree({ type: ['string', 'null'] }), tree({ type: 'string' })),
    'type_narrowed',
    '/input_schema/$defs/Node/properties/value',
  );
});

// --- conservative cases -------------------------------------------------------------------------

test('a changed anyOf that cannot be compared is not_provably_compatible', () => {
  assertOnly(
    inputBreaks(
      closed({ v: { anyOf: [{ type: 'string' }, { type: 'number' }] } }),
      closed({ v: { anyOf: [{ type: 'string', minLength: 1 }, { type: 'number' }] } }),
    ),
    'not_provably_compatible',
    '/input_schema/properties/v/anyOf',
  );
});

test('oneOf, if/then/else, patternProperties and external $ref changes are not_provably_compatible', () => {
  const cases: readonly [Obj, Obj, string][] = [
    [
      { oneOf: [{ type: 'string' }, { type: 'number' }] },
      { oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'integer' }] },
      'oneOf',
    ],
    [
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's then keyword, not a thenable
      { if: { type: 'string' }, then: { minLength: 1 } },
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's then keyword, not a thenable
      { if: { type: 'string' }, then: { minLength: 2 } },
      'if',
    ],
    [
      { type: 'object', patternProperties: { '^x': { type: 'string' } } },
      { type: 'object', patternProperties: { '^y': { type: 'string' } } },
      'patternProperties',
    ],
    [{ $ref: 'https://example.com/a.json' }, { $ref: 'https://example.com/b.json' }, '$ref'],
  ];
  for (const [before, after, keyword] of cases) {
    const breaks = inputBreaks(closed({ v: before }), closed({ v: after }));
    assert.ok(
      breaks.some(
        (b) =>
          b.kind === 'not_provably_compatible' &&
          b.pointer === `/input_schema/properties/v/${keyword.replace('/', '~1')}`,
      ),
      `${keyword}: ${JSON.stringify(breaks)}`,
    );
  }
});

test('removing an output anyOf branch is fine but adding one is not provable', () => {
  const two = closed({ v: { anyOf: [{ type: 'string' }, { type: 'number' }] } });
  const three = closed({
    v: { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'null' }] },
  });
  assertNone(outputBreaks(three, two));
  assertOnly(
    outputBreaks(two, three),
    'not_provably_compatible',
    '/output_schema/properties/v/anyOf',
  );
});

test('an unchanged external $ref is compatible', () => {
  const s = closed({ v: { $ref: 'https://example.com/a.json' } });
  assertNone(inputBreaks(s, structuredClone(s)));
});

// --- ordering -----------------------------------------------------------------------------------

test('breaks come back sorted by pointer, inputs before outputs, whatever the key order', () => {
  const oldDef = {
    input_schema: closed({ b: { type: 'string' }, a: { type: 'string' } }),
    output_schema: closed({ z: { type: 'string' }, y: { type: 'string' } }),
  };
  const newDef = { input_schema: closed({}), output_schema: closed({}) };
  const pointers = findBreakingChanges(oldDef, newDef).map((b) => b.pointer);
  assert.deepEqual(pointers, [
    '/input_schema/properties/a',
    '/input_schema/properties/b',
    '/output_schema/properties/y',
    '/output_schema/properties/z',
  ]);
  const reordered = {
    input_schema: closed({ a: { type: 'string' }, b: { type: 'string' } }),
    output_schema: closed({ y: { type: 'string' }, z: { type: 'string' } }),
  };
  assert.deepEqual(findBreakingChanges(reordered, newDef), findBreakingChanges(oldDef, newDef));
});

test('property names with / and ~ are escaped in pointers', () => {
  assertOnly(
    inputBreaks(closed({ 'a/b~c': { type: 'string' } }), closed({})),
    'property_removed',
    '/input_schema/properties/a~1b~0c',
  );
});

// --- isMajorBump --------------------------------------------------------------------------------

test('isMajorBump follows caret semantics', () => {
  const yes: readonly [string, string][] = [
    ['1.4.0', '2.0.0'],
    ['1.4.0', '3.1.0'],
    ['1.4.0', '2.0.0-rc.1'],
    ['0.1.3', '0.2.0'],
    ['0.0.1', '0.0.2'],
    ['0.9.9', '1.0.0'],
  ];
  const no: readonly [string, string][] = [
    ['1.4.0', '1.5.0'],
    ['1.4.0', '1.4.1'],
    ['1.4.0', '1.5.0-beta.1'],
    ['0.1.3', '0.1.9'],
    ['1.0.0-rc.1', '1.0.0'],
    ['2.0.0', '1.9.0'],
    ['1.4.0', '1.4.0'],
    ['1.4.0', 'not-a-version'],
  ];
  for (const [a, b] of yes) assert.equal(isMajorBump(a, b), true, `${a} -> ${b}`);
  for (const [a, b] of no) assert.equal(isMajorBump(a, b), false, `${a} -> ${b}`);
});

// --- properties ---------------------------------------------------------------------------------

const SCHEMA_VALUED = new Set([
  'items',
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
]);
const SCHEMA_LISTS = new Set(['anyOf', 'allOf', 'oneOf']);
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'dependentSchemas']);

/** Same contract, different text and key order: descriptions edited, set-like arrays reversed. */
function cosmetic(schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return schema;
  const out: Record<string, unknown> = {};
  const entries = Object.entries(schema).reverse();
  if (!entries.some(([k]) => k === 'description')) out.description = 'added later';
  for (const [k, v] of entries) {
    if (k === 'description' || k === 'title') out[k] = `${String(v)} (edited)`;
    else if (k === 'examples') out[k] = [];
    else if (k === 'enum' || k === 'required' || k === 'type')
      out[k] = Array.isArray(v) ? [...v].reverse() : v;
    else if (SCHEMA_VALUED.has(k)) out[k] = cosmetic(v);
    else if (SCHEMA_LISTS.has(k) && Array.isArray(v)) out[k] = v.map(cosmetic).reverse();
    else if (k === 'prefixItems' && Array.isArray(v)) out[k] = v.map(cosmetic);
    else if (SCHEMA_MAPS.has(k) && typeof v === 'object' && v !== null) {
      out[k] = Object.fromEntries(
        Object.entries(v)
          .reverse()
          .map(([name, sub]) => [name, cosmetic(sub)]),
      );
    } else out[k] = v;
  }
  return out;
}

const opts = { requiredKeys: [] as never[], noNullPrototype: true };
const key = fc.constantFrom('a', 'b', 'c', 'd/e', 'f~g');
const small = fc.integer({ min: -3, max: 10 });
const typeName = fc.constantFrom(
  'string',
  'number',
  'integer',
  'boolean',
  'null',
  'object',
  'array',
);
const annotations = {
  description: fc.string({ maxLength: 4 }),
  title: fc.string({ maxLength: 4 }),
  examples: fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 2 }),
};
const { schema } = fc.letrec<{
  schema: unknown;
  scalar: unknown;
  object: unknown;
  array: unknown;
  combo: unknown;
}>((tie) => ({
  schema: fc.oneof(
    { depthSize: 'small', maxDepth: 3 },
    fc.boolean(),
    tie('scalar'),
    tie('object'),
    tie('array'),
    tie('combo'),
  ),
  // Separate families, so most generated scalars accept some values and get compared in depth.
  scalar: fc.oneof(
    fc.record(
      {
        type: fc.oneof(typeName, fc.uniqueArray(typeName, { minLength: 1, maxLength: 3 })),
        minLength: small,
        maxLength: small,
        pattern: fc.constantFrom('^a', '[0-9]+', '('),
        format: fc.constantFrom('email', 'uri'),
        ...annotations,
      },
      opts,
    ),
    fc.record(
      {
        type: fc.constantFrom('number', 'integer', ['integer', 'string']),
        minimum: small,
        exclusiveMinimum: small,
        maximum: small,
        exclusiveMaximum: small,
        multipleOf: fc.constantFrom(0.01, 0.5, 2, 3),
        ...annotations,
      },
      opts,
    ),
    fc.record(
      {
        type: fc.oneof(typeName, fc.uniqueArray(typeName, { minLength: 1, maxLength: 3 })),
        enum: fc.array(fc.jsonValue({ maxDepth: 1 }), { minLength: 1, maxLength: 4 }),
        const: fc.jsonValue({ maxDepth: 1 }),
        maxLength: small,
        ...annotations,
      },
      opts,
    ),
  ),
  object: fc.record(
    {
      type: fc.constant('object'),
      properties: fc.dictionary(key, tie('schema'), { maxKeys: 3, noNullPrototype: true }),
      patternProperties: fc.dictionary(fc.constantFrom('^x', 'y$'), tie('schema'), {
        maxKeys: 2,
        noNullPrototype: true,
      }),
      additionalProperties: tie('schema'),
      required: fc.uniqueArray(key, { maxLength: 3 }),
      minProperties: small,
      maxProperties: small,
      dependentRequired: fc.dictionary(key, fc.uniqueArray(key, { maxLength: 2 }), {
        maxKeys: 2,
        noNullPrototype: true,
      }),
      ...annotations,
    },
    { requiredKeys: ['type'], noNullPrototype: true },
  ),
  array: fc.record(
    {
      type: fc.constant('array'),
      items: tie('schema'),
      prefixItems: fc.array(tie('schema'), { maxLength: 3 }),
      minItems: small,
      maxItems: small,
      uniqueItems: fc.boolean(),
      contains: tie('schema'),
      ...annotations,
    },
    { requiredKeys: ['type'], noNullPrototype: true },
  ),
  combo: fc.record(
    {
      anyOf: fc.array(tie('schema'), { minLength: 1, maxLength: 3 }),
      allOf: fc.array(tie('schema'), { minLength: 1, maxLength: 2 }),
      oneOf: fc.array(tie('schema'), { minLength: 1, maxLength: 2 }),
      not: tie('schema'),
      if: tie('schema'),
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's then keyword, not a thenable
      then: tie('schema'),
      $ref: fc.constantFrom('#/$defs/A', '#/$defs/B', '#', 'https://example.com/x.json'),
      ...annotations,
    },
    opts,
  ),
}));
const root = fc.record(
  {
    type: fc.constant('object'),
    properties: fc.dictionary(key, schema, { maxKeys: 4, noNullPrototype: true }),
    required: fc.uniqueArray(key, { maxLength: 3 }),
    additionalProperties: fc.constant(false),
    $defs: fc.record({ A: schema, B: schema }, { noNullPrototype: true }),
  },
  { requiredKeys: ['type', 'properties', 'additionalProperties', '$defs'], noNullPrototype: true },
);

test('property: a schema compared with itself or a cosmetic copy never reports a break', () => {
  fc.assert(
    fc.property(root, root, (input, output) => {
      const def = { input_schema: input as JsonSchema, output_schema: output as JsonSchema };
      assertNone(findBreakingChanges(def, def));
      assertNone(findBreakingChanges(def, structuredClone(def)));
      const edited = {
        input_schema: cosmetic(input) as JsonSchema,
        output_schema: cosmetic(output) as JsonSchema,
      };
      assertNone(findBreakingChanges(def, edited));
      assertNone(findBreakingChanges(edited, def));
    }),
    { numRuns: 300 },
  );
});

// Soundness against a real validator: small schemas over a small value domain, so that generated
// values often satisfy the schemas and the check has teeth.
const ajv = new Ajv2020({ strict: false, logger: false, addUsedSchema: false });
const word = fc.constantFrom('a', 'b', 'c');
const atom = fc.constantFrom<unknown>(
  null,
  true,
  false,
  -1,
  0,
  0.5,
  1,
  2,
  3,
  '',
  'a',
  'ab',
  'abc',
  'b1',
);
const anyType = fc.constantFrom(
  'string',
  'number',
  'integer',
  'boolean',
  'null',
  'object',
  'array',
);
const { tiny } = fc.letrec<{
  tiny: unknown;
  str: unknown;
  nums: unknown;
  en: unknown;
  ob: unknown;
  ar: unknown;
  comb: unknown;
}>((tie) => ({
  tiny: fc.oneof(
    { depthSize: 'small', maxDepth: 2 },
    fc.boolean(),
    tie('str'),
    tie('nums'),
    tie('en'),
    tie('ob'),
    tie('ar'),
    tie('comb'),
  ),
  str: fc.record(
    {
      type: fc.oneof(anyType, fc.uniqueArray(anyType, { minLength: 1, maxLength: 3 })),
      minLength: fc.nat(3),
      maxLength: fc.nat(3),
      pattern: fc.constantFrom('^a', 'b'),
    },
    opts,
  ),
  nums: fc.record(
    {
      type: fc.constantFrom('number', 'integer', ['integer', 'null']),
      minimum: fc.integer({ min: -1, max: 2 }),
      exclusiveMinimum: fc.integer({ min: -1, max: 2 }),
      maximum: fc.nat(3),
      exclusiveMaximum: fc.nat(3),
      multipleOf: fc.constantFrom(0.5, 1, 2),
    },
    opts,
  ),
  en: fc.record(
    { enum: fc.array(atom, { minLength: 1, maxLength: 4 }), const: atom, type: anyType },
    opts,
  ),
  ob: fc.record(
    {
      type: fc.constant('object'),
      properties: fc.dictionary(word, tie('tiny'), { maxKeys: 3, noNullPrototype: true }),
      required: fc.uniqueArray(word, { maxLength: 2 }),
      additionalProperties: tie('tiny'),
      patternProperties: fc.dictionary(fc.constant('^c'), tie('tiny'), {
        maxKeys: 1,
        noNullPrototype: true,
      }),
      minProperties: fc.nat(2),
      maxProperties: fc.nat(2),
    },
    opts,
  ),
  ar: fc.record(
    {
      type: fc.constant('array'),
      items: tie('tiny'),
      prefixItems: fc.array(tie('tiny'), { maxLength: 2 }),
      minItems: fc.nat(2),
      maxItems: fc.nat(3),
      uniqueItems: fc.boolean(),
    },
    opts,
  ),
  comb: fc.record(
    {
      anyOf: fc.array(tie('tiny'), { minLength: 1, maxLength: 3 }),
      allOf: fc.array(tie('tiny'), { minLength: 1, maxLength: 2 }),
      not: tie('tiny'),
      $ref: fc.constant('#/$defs/A'),
    },
    opts,
  ),
}));
const { instance } = fc.letrec<{ instance: unknown }>((tie) => ({
  instance: fc.oneof(
    { depthSize: 'small', maxDepth: 3 },
    atom,
    fc.array(tie('instance'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd'), tie('instance'), {
      maxKeys: 3,
      noNullPrototype: true,
    }),
  ),
}));
const tinyRoot = fc
  .tuple(
    fc.dictionary(word, tiny, { maxKeys: 2, noNullPrototype: true }),
    tiny,
    fc.oneof(fc.constant(false), tiny),
  )
  .map(([properties, A, additionalProperties]) => ({
    type: 'object',
    properties,
    additionalProperties,
    $defs: { A },
  }));
const instances = fc.array(
  fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd'), instance, {
    maxKeys: 3,
    noNullPrototype: true,
  }),
  { minLength: 30, maxLength: 30 },
);

/** Drops keys at random, which yields the near-miss pairs where a wrong "compatible" would hide. */
function pruned(schema: unknown, seed: number): unknown {
  let state = seed >>> 0;
  const coin = (): boolean => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 2 ** 32 < 0.15;
  };
  const walk = (s: unknown): unknown => {
    if (typeof s !== 'object' || s === null) return s;
    if (Array.isArray(s)) return s.filter(() => !coin()).map(walk);
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(s)) {
      if (coin()) continue;
      out[k] = k === 'enum' || k === 'const' || k === 'required' || k === 'type' ? v : walk(v);
    }
    return out;
  };
  return walk(schema);
}

/**
 * Removes additionalProperties:false, the one place outputs are deliberately lenient (new
 * properties). Not under `not`: there, dropping it would close what the schema accepts instead of
 * opening it (`{ not: { additionalProperties: false } }` accepts any object with an extra property).
 */
function opened(schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null) return schema;
  if (Array.isArray(schema)) return schema.map(opened);
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([k, v]) => !(k === 'additionalProperties' && v === false))
      .map(([k, v]) => [k, k === 'enum' || k === 'const' || k === 'not' ? v : opened(v)]),
  );
}

/** Runs a validator, treating a schema that overflows the stack (degenerate $ref loops) as no answer. */
function accepts(validate: (v: unknown) => boolean, value: unknown): boolean | undefined {
  try {
    return validate(value);
  } catch {
    return undefined;
  }
}

for (const direction of ['input', 'output'] as const) {
  test(`property: when no ${direction} break is reported, a validator agrees the contract holds`, () => {
    fc.assert(
      fc.property(
        tinyRoot,
        tinyRoot,
        fc.integer(),
        fc.boolean(),
        instances,
        (a, b, seed, related, values) => {
          const oldSchema = a as JsonSchema;
          const newSchema = (related ? pruned(a, seed) : b) as JsonSchema;
          const empty = { type: 'object' };
          const defs =
            direction === 'input'
              ? [
                  { input_schema: oldSchema, output_schema: empty },
                  { input_schema: newSchema, output_schema: empty },
                ]
              : [
                  { input_schema: empty, output_schema: oldSchema },
                  { input_schema: empty, output_schema: newSchema },
                ];
          const [oldDef, newDef] = defs;
          if (!oldDef || !newDef || findBreakingChanges(oldDef, newDef).length > 0) return;
          // Inputs: old-valid must stay new-valid. Outputs: new-valid must have been old-valid.
          const [from, to] =
            direction === 'input'
              ? [oldSchema, newSchema]
              : [newSchema, opened(oldSchema) as JsonSchema];
          let fromValid: (v: unknown) => boolean;
          let toValid: (v: unknown) => boolean;
          try {
            fromValid = ajv.compile(from);
            toValid = ajv.compile(to);
          } catch {
            return;
          }
          for (const v of values) {
            if (accepts(fromValid, v) !== true) continue;
            const verdict = accepts(toValid, v);
            if (verdict === undefined) continue;
            assert.ok(
              verdict,
              `${JSON.stringify(v)} broke ${JSON.stringify({ old: oldSchema, new: newSchema })}`,
            );
          }
        },
      ),
      { numRuns: 300 },
    );
  });
}
