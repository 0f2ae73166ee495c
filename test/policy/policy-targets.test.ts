import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  MAX_SCHEMA_DEPTH,
  type PolicyTarget,
  policyTargets,
  valuesAt,
} from '../../src/domain/policy/index.js';

function sorted(targets: PolicyTarget[]): string[] {
  return targets.map((t) => `${t.kind} ${t.pointer}`).sort();
}

describe('policyTargets', () => {
  test("toolgate's own marks: x-toolgate url, and x-toolgate-code with its language", () => {
    const schema = {
      type: 'object',
      properties: {
        link: { type: 'string', 'x-toolgate': 'url' },
        script: { type: 'string', 'x-toolgate-code': 'javascript' },
        steps: { type: 'array', items: { type: 'string', 'x-toolgate-code': 'python' } },
        other: { type: 'string', 'x-toolgate-code': 'ruby' },
      },
    };
    const targets = policyTargets(schema);
    assert.deepEqual(sorted(targets), ['code /script', 'code /steps/*', 'url /link']);
    assert.equal(targets.find((t) => t.pointer === '/steps/*')?.language, 'python');
    assert.equal(targets.find((t) => t.pointer === '/script')?.language, 'javascript');
  });

  test('top-level string properties marked uri, url, iri or x-toolgate path are found', () => {
    const schema = {
      type: 'object',
      properties: {
        target: { type: 'string', format: 'uri' },
        mirror: { type: 'string', format: 'url' },
        intl: { type: 'string', format: 'iri' },
        file: { type: 'string', 'x-toolgate': 'path' },
        note: { type: 'string' },
        email: { type: 'string', format: 'email' },
        ref: { type: 'string', format: 'uri-reference' },
      },
    };
    assert.deepEqual(sorted(policyTargets(schema)), [
      'path /file',
      'url /intl',
      'url /mirror',
      'url /target',
    ]);
  });

  test('array items become "*" and tuple items their index', () => {
    const schema = {
      type: 'object',
      properties: {
        files: { type: 'array', items: { type: 'string', 'x-toolgate': 'path' } },
        pair: {
          type: 'array',
          prefixItems: [{ type: 'string' }, { type: 'string', format: 'uri' }],
        },
        legacy: { type: 'array', items: [{ format: 'uri' }, { type: 'integer' }] },
      },
    };
    assert.deepEqual(sorted(policyTargets(schema)), [
      'path /files/*',
      'url /legacy/0',
      'url /pair/1',
    ]);
  });

  test('nested objects, $defs and definitions are followed through local $ref', () => {
    const schema = {
      type: 'object',
      properties: {
        request: { $ref: '#/$defs/request' },
        old: { $ref: '#/definitions/old' },
      },
      $defs: {
        request: {
          type: 'object',
          properties: {
            endpoint: { $ref: '#/$defs/endpoint' },
            headers: { type: 'object', additionalProperties: { type: 'string' } },
          },
        },
        endpoint: { type: 'string', format: 'uri' },
      },
      definitions: { old: { type: 'object', properties: { 'a/b~c': { format: 'url' } } } },
    };
    assert.deepEqual(sorted(policyTargets(schema)), ['url /old/a~1b~0c', 'url /request/endpoint']);
  });

  test('marks under combinators count for the value they describe', () => {
    const schema = {
      type: 'object',
      properties: {
        dest: { anyOf: [{ type: 'string', format: 'uri' }, { type: 'null' }] },
        both: { allOf: [{ type: 'string' }, { 'x-toolgate': 'path' }] },
        pick: { oneOf: [{ type: 'object', properties: { u: { format: 'uri' } } }] },
      },
    };
    assert.deepEqual(sorted(policyTargets(schema)), ['path /both', 'url /dest', 'url /pick/u']);
  });

  test('marks on members without a fixed name are found as "*"', () => {
    const schema = {
      type: 'object',
      additionalProperties: { type: 'string', format: 'uri' },
      properties: {
        map: { type: 'object', patternProperties: { '^x': { 'x-toolgate': 'path' } } },
      },
    };
    assert.deepEqual(sorted(policyTargets(schema)), ['path /map/*', 'url /*']);
  });

  test('marks inside "not" and "if" are not targets (they test), those in "then" are', () => {
    // Parsed from text, as schemas arrive: a literal `then` key would read as a thenable.
    const schema: unknown = JSON.parse(
      '{"type":"object","properties":{"a":{"not":{"format":"uri"}},' +
        '"b":{"if":{"format":"uri"},"then":{"x-toolgate":"path"},"else":{"format":"url"}}}}',
    );
    assert.deepEqual(sorted(policyTargets(schema)), ['path /b', 'url /b']);
  });

  test('recursive schemas stop at the depth bound and $ref cycles in place stop at once', () => {
    const schema = {
      $ref: '#/$defs/node',
      $defs: {
        node: {
          type: 'object',
          properties: { link: { format: 'uri' }, next: { $ref: '#/$defs/node' } },
        },
        a: { $ref: '#/$defs/b' },
        b: { $ref: '#/$defs/a' },
      },
      properties: { loop: { $ref: '#/$defs/a' } },
    };
    const targets = policyTargets(schema);
    const pointers = targets.map((t) => t.pointer);
    assert.ok(pointers.includes('/link'));
    assert.ok(pointers.includes('/next/next/link'));
    const deepest = Math.max(...pointers.map((p) => p.split('/').length - 1));
    assert.equal(deepest, MAX_SCHEMA_DEPTH);
  });

  test('a schema that expands exponentially is refused with a RangeError, not half-walked', () => {
    const schema = {
      $defs: {
        tree: {
          type: 'object',
          properties: {
            url: { format: 'uri' },
            left: { $ref: '#/$defs/tree' },
            right: { $ref: '#/$defs/tree' },
          },
        },
      },
      $ref: '#/$defs/tree',
    };
    assert.throws(() => policyTargets(schema), RangeError);
  });

  test('remote references and malformed schemas yield no targets and never throw', () => {
    assert.deepEqual(
      policyTargets({ properties: { a: { $ref: 'https://evil.example/schema.json' } } }),
      [],
    );
    for (const junk of [null, 1, 'x', [], true, { properties: 5 }, { items: 'x' }, { $ref: 7 }]) {
      assert.deepEqual(policyTargets(junk), []);
    }
  });

  test('keywords are read only as own members', () => {
    const proto = { format: 'uri' };
    const schema = Object.create(proto) as Record<string, unknown>;
    assert.deepEqual(policyTargets(schema), []);
  });

  test('each target is listed once', () => {
    const schema = { properties: { a: { format: 'uri', allOf: [{ format: 'uri' }] } } };
    assert.deepEqual(policyTargets(schema), [{ pointer: '/a', kind: 'url' }]);
  });
});

describe('valuesAt', () => {
  const args = {
    target: 'https://api.example.com/',
    files: ['a.txt', 'b.txt'],
    nested: { items: [{ u: 'x' }, { v: 'y' }, { u: 'z' }] },
    'a/b~c': 1,
  };

  test('a plain pointer yields the one value there', () => {
    assert.deepEqual(valuesAt(args, '/target'), [
      { pointer: '/target', value: 'https://api.example.com/' },
    ]);
    assert.deepEqual(valuesAt(args, '/a~1b~0c'), [{ pointer: '/a~1b~0c', value: 1 }]);
    assert.deepEqual(valuesAt(args, '/files/1'), [{ pointer: '/files/1', value: 'b.txt' }]);
  });

  test('"*" expands over every array element with concrete pointers', () => {
    assert.deepEqual(valuesAt(args, '/files/*'), [
      { pointer: '/files/0', value: 'a.txt' },
      { pointer: '/files/1', value: 'b.txt' },
    ]);
    assert.deepEqual(valuesAt(args, '/nested/items/*/u'), [
      { pointer: '/nested/items/0/u', value: 'x' },
      { pointer: '/nested/items/2/u', value: 'z' },
    ]);
  });

  test('"*" over an object yields every member', () => {
    assert.deepEqual(valuesAt({ m: { a: 1, b: 2 } }, '/m/*'), [
      { pointer: '/m/a', value: 1 },
      { pointer: '/m/b', value: 2 },
    ]);
  });

  test('absent paths yield nothing; inherited members are not members', () => {
    assert.deepEqual(valuesAt(args, '/missing'), []);
    assert.deepEqual(valuesAt(args, '/files/2'), []);
    assert.deepEqual(valuesAt(args, '/files/01'), []);
    assert.deepEqual(valuesAt(args, '/files/-1'), []);
    assert.deepEqual(valuesAt(args, '/target/0'), []);
    assert.deepEqual(valuesAt(args, '/toString'), []);
    assert.deepEqual(valuesAt(null, '/a'), []);
  });

  test('the empty pointer is the whole document', () => {
    assert.deepEqual(valuesAt('x', ''), [{ pointer: '', value: 'x' }]);
  });

  test('a malformed pointer throws rather than silently checking nothing', () => {
    assert.throws(() => valuesAt(args, 'target'), TypeError);
  });

  test('targets and values line up for a realistic tool', () => {
    const schema = {
      type: 'object',
      properties: {
        url: { type: 'string', format: 'uri' },
        attachments: {
          type: 'array',
          items: { type: 'object', properties: { path: { type: 'string', 'x-toolgate': 'path' } } },
        },
      },
    };
    const call = { url: 'https://a.example/', attachments: [{ path: 'x' }, { path: 'y' }] };
    const found = policyTargets(schema).flatMap((t) =>
      valuesAt(call, t.pointer).map((v) => `${t.kind} ${v.pointer}=${String(v.value)}`),
    );
    assert.deepEqual(found.sort(), [
      'path /attachments/0/path=x',
      'path /attachments/1/path=y',
      'url /url=https://a.example/',
    ]);
  });
});
