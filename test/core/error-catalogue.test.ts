import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ERROR_CODES, ToolgateError } from '../../src/core/index.js';

const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');

test('every error code is documented in docs/errors.md with its HTTP status and JSON-RPC code', () => {
  for (const [code, map] of Object.entries(ERROR_CODES)) {
    const row = doc.split('\n').find((line) => line.startsWith(`| \`${code}\` |`));
    assert.ok(row, `${code} has no row in docs/errors.md`);
    const cells = row.split('|').map((c) => c.trim());
    assert.equal(Number(cells[2]), map.http, `${code}: HTTP status in docs differs`);
    assert.equal(Number(cells[3]), map.jsonRpc, `${code}: JSON-RPC code in docs differs`);
  }
});

test('docs/errors.md documents no code that does not exist', () => {
  const documented = [...doc.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]);
  for (const code of documented)
    assert.ok(code && code in ERROR_CODES, `${code} is documented but not defined`);
});

test('the wire body of an error is exactly code, message and details', () => {
  const err = new ToolgateError('TOOL_NOT_FOUND', 'no tool x', { toolId: 'x' });
  assert.deepEqual(Object.keys(err.toBody()).sort(), ['code', 'details', 'message']);
  assert.equal(err.httpStatus, 404);
  assert.equal(JSON.stringify(err.toBody()).includes('stack'), false);
});
