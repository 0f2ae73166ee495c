/**
 * @module Patterns someone else wrote run in linear time or not at all: registration refuses what
 * RE2 cannot express (every pattern under its own pointer), and the gate's validators, the
 * registration compile and the breaking-change check match catastrophic patterns at once.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { checkToolDefinition } from '../../src/domain/catalog/index.js';
import { createRuntimeAjv } from '../../src/domain/catalog/json-schema-validator.js';
import { findBreakingChanges } from '../../src/domain/catalog/schema-compat.js';
import { validTool } from '../support/tools.js';

/** Classic catastrophic-backtracking patterns, each with an input that takes V8 2^n steps. */
const CATASTROPHIC = JSON.parse(
  readFileSync(new URL('../redteam/redos-patterns.json', import.meta.url), 'utf8'),
) as { pattern: string; evil: string; benign: string }[];

function withPattern(pattern: string): Record<string, unknown> {
  return validTool({
    input_schema: {
      type: 'object',
      additionalProperties: false,
      properties: { value: { type: 'string', pattern } },
    },
  });
}

function problemsOf(input: unknown): { pointer: string; rule: string; message: string }[] {
  const result = checkToolDefinition(input);
  return result.ok ? [] : [...result.problems];
}

describe('registration refuses patterns that need backtracking', () => {
  for (const [pattern, what] of [
    ['^(a)\\1$', /backreference/],
    ['^(?<w>a)\\k<w>$', /named backreference/],
    ['^(?=a)a+$', /lookahead/],
    ['^(?!a)\\w+$', /lookahead/],
    ['^\\w+(?<=a)$', /lookbehind/],
    ['^(?<!a)b$', /lookbehind/],
  ] as const) {
    test(`${pattern} is refused under its pointer`, () => {
      const found = problemsOf(withPattern(pattern));
      assert.deepEqual(
        found.map((p) => [p.pointer, p.rule]),
        [['/input_schema/properties/value/pattern', 'schema.pattern_unsupported']],
      );
      assert.match(found[0]?.message ?? '', what);
    });
  }

  test('every refused pattern is listed, in patternProperties, propertyNames, $defs and the output schema', () => {
    const found = problemsOf(
      validTool({
        input_schema: {
          type: 'object',
          additionalProperties: false,
          properties: {
            a: { type: 'string', pattern: '(x)\\1' },
            b: { type: 'object', patternProperties: { '^(?=k)k$': { type: 'string' } } },
            c: { type: 'object', propertyNames: { pattern: '(?!z)' } },
            d: { $ref: '#/$defs/d' },
            // A property *named* "pattern" is data, not a keyword: nothing to refuse here.
            pattern: { type: 'string', default: '(q)\\1' },
          },
          $defs: { d: { anyOf: [{ type: 'string', pattern: '\\k<n>(?<n>x)' }] } },
        },
        output_schema: {
          type: 'object',
          properties: { s: { type: 'array', items: { type: 'string', pattern: '(?<=y)y' } } },
        },
      }),
    );
    assert.deepEqual(
      found.map((p) => p.pointer),
      [
        '/input_schema/properties/a/pattern',
        '/input_schema/properties/b/patternProperties/^(?=k)k$',
        '/input_schema/properties/c/propertyNames/pattern',
        '/input_schema/$defs/d/anyOf/0/pattern',
        '/output_schema/properties/s/items/pattern',
      ],
    );
  });

  test('ordinary patterns (anchors, classes, counted repeats, named groups, Unicode classes) are accepted', () => {
    for (const pattern of [
      '^ORD-[0-9]{4}$',
      '^[A-Z]{3}$',
      '^(?<year>\\d{4})-(?<month>\\d{2})$',
      '^\\p{Lu}\\p{Ll}+$',
      '^[^\\s@]+@[^\\s@]+$',
      '^(a+)+$',
    ]) {
      assert.deepEqual(problemsOf(withPattern(pattern)), [], pattern);
    }
  });

  test('a pattern RE2 cannot compile, or an oversized one, is refused with the reason', () => {
    const tooComplex = problemsOf(withPattern('^((a{1,100}){1,100}){1,100}$'));
    assert.equal(tooComplex[0]?.rule, 'schema.pattern_unsupported');
    const tooLong = problemsOf(withPattern(`^${'a'.repeat(2000)}$`));
    assert.match(tooLong[0]?.message ?? '', /longer than 1024/);
  });
});

describe('catastrophic patterns cost linear time', () => {
  test('the gate validator answers each evil input at once', () => {
    const ajv = createRuntimeAjv();
    for (const { pattern, evil, benign } of CATASTROPHIC) {
      const validate = ajv.compile({
        type: 'object',
        properties: { value: { type: 'string', pattern } },
      });
      const started = performance.now();
      assert.equal(validate({ value: evil }), false, pattern);
      assert.equal(validate({ value: evil.repeat(1000) }), false, pattern);
      const ms = performance.now() - started;
      assert.ok(ms < 1000, `${pattern} took ${ms.toFixed(0)} ms`);
      assert.equal(validate({ value: benign }), true, pattern);
    }
  });

  test('patternProperties keys are matched by the same engine', () => {
    const validate = createRuntimeAjv().compile({
      type: 'object',
      patternProperties: { '^(a+)+$': { type: 'integer' } },
      additionalProperties: false,
    });
    assert.equal(validate({ [`${'a'.repeat(40)}!`]: 1 }), false);
    assert.equal(validate({ aaaa: 1 }), true);
    assert.equal(validate({ aaaa: 'x' }), false);
  });

  test("registration never runs an author's pattern on V8 (strict mode's matching-properties lint)", () => {
    const started = performance.now();
    const result = checkToolDefinition(
      validTool({
        input_schema: {
          type: 'object',
          additionalProperties: false,
          properties: { [`${'a'.repeat(40)}!`]: { type: 'string' } },
          patternProperties: { '^(a+)+$': { type: 'string' } },
        },
      }),
    );
    assert.equal(result.ok, true, JSON.stringify(result));
    assert.ok(performance.now() - started < 2000);
  });

  test('the breaking-change check matches old enum values against a new pattern in linear time', () => {
    const evil = `${'a'.repeat(40)}!`;
    const started = performance.now();
    const breaks = findBreakingChanges(
      {
        input_schema: { type: 'object', properties: { v: { type: 'string', enum: [evil] } } },
        output_schema: { type: 'object' },
      },
      {
        input_schema: { type: 'object', properties: { v: { type: 'string', pattern: '^(a+)+$' } } },
        output_schema: { type: 'object' },
      },
    );
    assert.ok(performance.now() - started < 2000);
    assert.ok(breaks.length > 0, 'the old value no longer matches: a break');
  });
});
