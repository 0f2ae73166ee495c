/**
 * The detectors of the result scan, each with the benign neighbour it must not take for it:
 * checksums decide for cards and IBANs, so order numbers, dates and ids pass.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findPersonalData, findSecrets } from '../../src/domain/text-trust/index.js';

const rules = (text: string) => findPersonalData(text).map((f) => f.rule);
const spans = (text: string) => findPersonalData(text).map((f) => text.slice(f.start, f.end));

test('e-mail addresses are found; a handle or a version with an at sign is not one', () => {
  assert.deepEqual(spans('write to Alice.Smith+billing@mail.example.co.uk today'), [
    'Alice.Smith+billing@mail.example.co.uk',
  ]);
  assert.deepEqual(rules('ping @alice on chat, pkg foo@1.2.3'), []);
});

test('card numbers must pass the Luhn check and start like a card', () => {
  assert.deepEqual(spans('paid with 4111 1111 1111 1111 yesterday'), ['4111 1111 1111 1111']);
  assert.deepEqual(spans('amex 3782-822463-10005'), ['3782-822463-10005']);
  assert.deepEqual(spans('contiguous 5555555555554444'), ['5555555555554444']);
  // One digit off: not a card. An id of 16 digits starting with 1, and a run of one digit: neither.
  assert.deepEqual(rules('paid with 4111 1111 1111 1112'), []);
  assert.deepEqual(rules('trace id 1234567890123452'), []);
  assert.deepEqual(rules('padding 4444444444444444'), []);
});

test('IBANs must pass mod-97; the digits of an IBAN-shaped value are not a card', () => {
  assert.deepEqual(spans('refund to DE89 3704 0044 0532 0130 00 please'), [
    'DE89 3704 0044 0532 0130 00',
  ]);
  assert.deepEqual(spans('GB82WEST12345698765432'), ['GB82WEST12345698765432']);
  assert.deepEqual(rules('refund to DE89 3704 0044 0532 0130 01 please'), []);
});

test('phone numbers in international and North American forms; dates and order ids are not', () => {
  assert.deepEqual(spans('call +44 20 7946 0958 or (555) 123-4567 or 555.123.4567'), [
    '+44 20 7946 0958',
    '(555) 123-4567',
    '555.123.4567',
  ]);
  assert.deepEqual(rules('order ORD-004211 shipped 2026-12-01 at 10:30, build 1.2.3-4'), []);
});

test('credentials by vendor shape; prose about keys is not one', () => {
  const text = 'key AKIAIOSFODNN7EXAMPLE, token ghp_abcdefghijklmnopqrstuvwxyz0123456789';
  assert.deepEqual(
    findSecrets(text).map((f) => f.rule),
    ['secret.aws_access_key', 'secret.github_token'],
  );
  assert.deepEqual(findSecrets('rotate your API key every 90 days'), []);
});

test('long text with many near misses stays fast (the patterns are linear)', () => {
  const text = '1234 '.repeat(40_000) + 'a@'.repeat(20_000) + '+1 '.repeat(20_000);
  const started = performance.now();
  findPersonalData(text);
  findSecrets(text);
  assert.ok(performance.now() - started < 2_000, 'a scan of ~300 kB of near misses took too long');
});
