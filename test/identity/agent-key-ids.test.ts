/**
 * A key id never starts with `-`, so `toolgate agents revoke-key ID` (the kill switch for a leaked
 * key) takes every id as printed: a leading `-` would read as an option. The ids stay base64url
 * of 12 random bytes otherwise.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keyIdFrom } from '../../src/domain/identity/agent-keys.js';

test('bytes whose base64url starts with "-" give an id that does not', () => {
  // 0xF8 is 111110xx: its first six bits are 62, which base64url writes as "-".
  for (const first of [0xf8, 0xf9, 0xfa, 0xfb]) {
    const bytes = Buffer.from([first, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    assert.ok(bytes.toString('base64url').startsWith('-'));
    const id = keyIdFrom(bytes);
    assert.ok(!id.startsWith('-'), id);
    assert.equal(id.length, 16);
    assert.match(id, /^[A-Za-z0-9_-]{16}$/);
    assert.equal(id.slice(1), bytes.toString('base64url').slice(1));
  }
});

test('any other bytes give their base64url unchanged, "-" and "_" inside included', () => {
  const bytes = Buffer.from([0x00, 0xfb, 0xff, 0xf8, 4, 5, 6, 7, 8, 9, 10, 0xff]);
  const plain = bytes.toString('base64url');
  assert.ok(plain.includes('-') || plain.includes('_'));
  assert.equal(keyIdFrom(bytes), plain);
});
