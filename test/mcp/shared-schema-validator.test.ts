import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SESSION_SCHEMA_VALIDATOR } from '../../src/edge/mcp/shared-schema-validator.js';

test('the shared validator checks answers against their schema', () => {
  const check = SESSION_SCHEMA_VALIDATOR.getValidator({
    type: 'object',
    properties: { ok: { type: 'boolean' } },
    required: ['ok'],
  });
  assert.equal(check({ ok: true }).valid, true);
  const bad = check({ ok: 'yes' });
  assert.equal(bad.valid, false);
  assert.match(bad.errorMessage ?? '', /boolean/);
});

test('one schema text is compiled once, however many objects carry it', () => {
  const a = SESSION_SCHEMA_VALIDATOR.getValidator({ type: 'string', maxLength: 3 });
  const b = SESSION_SCHEMA_VALIDATOR.getValidator({ type: 'string', maxLength: 3 });
  assert.equal(a, b);
  assert.notEqual(a, SESSION_SCHEMA_VALIDATOR.getValidator({ type: 'string', maxLength: 4 }));
});

test('schemas built per call do not pile up: the oldest compiled one is dropped', () => {
  const first = SESSION_SCHEMA_VALIDATOR.getValidator({ type: 'integer', minimum: -1 });
  for (let i = 0; i < 200; i++)
    SESSION_SCHEMA_VALIDATOR.getValidator({ type: 'integer', minimum: i });
  // Dropped, so asked again it is compiled anew (a different function), and still correct.
  const again = SESSION_SCHEMA_VALIDATOR.getValidator({ type: 'integer', minimum: -1 });
  assert.notEqual(again, first);
  assert.equal(again(-1).valid, true);
  assert.equal(again(-2).valid, false);
});
