/**
 * Destination-like literals: what an untrusted result's text yields, how each kind is normalised
 * (so the same destination spelled differently is one value), what is not taken for one, and
 * that a call's arguments find the result's values — and only those.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  argumentLiteralsOf,
  type DestinationLiteral,
  destinationLiteralsOf,
  literalHash,
  MAX_LITERALS_PER_RESULT,
  scanArgumentLiterals,
  scanResultLiterals,
} from '../../src/domain/text-trust/index.js';

const kinds = (ls: readonly DestinationLiteral[]) => ls.map((l) => l.kind).sort();
const has = (ls: readonly DestinationLiteral[], kind: DestinationLiteral['kind'], value: string) =>
  ls.some((l) => l.hash === literalHash(kind, value));

/** The argument literals of `args` that the result text had too. */
function shared(resultText: string, args: Record<string, unknown>): string[] {
  const seen = new Set(destinationLiteralsOf({ text: resultText }).map((l) => l.hash));
  // One entry per kind and place (a phone is matched by its digits and its national part).
  return [
    ...new Set(
      argumentLiteralsOf(args)
        .filter((l) => seen.has(l.hash))
        .map((l) => `${l.kind}@${l.pointer}`),
    ),
  ].sort();
}

test('each kind is found in text and normalised', () => {
  const found = destinationLiteralsOf({
    content: [
      {
        type: 'text',
        text: 'Pay DE89 3704 0044 0532 0130 00, write to Bob.Smith@Example.COM, see HTTPS://Pay.Example:443/x?i=1#top, call +44 20 7946 0958, ask @Mallory in #Payments or C0123ABCD, account no. 1234-5678-90.',
      },
    ],
  });
  assert.ok(has(found, 'iban', 'DE89370400440532013000'), 'compact upper-case IBAN');
  assert.ok(has(found, 'email', 'bob.smith@example.com'), 'lower-case e-mail');
  assert.ok(
    has(found, 'url', 'https://pay.example/x?i=1'),
    'WHATWG URL, no default port or fragment',
  );
  assert.ok(has(found, 'host', 'pay.example'), 'the URL host');
  assert.ok(has(found, 'phone', '442079460958'), 'digits-only phone');
  assert.ok(has(found, 'handle', '@mallory'));
  assert.ok(has(found, 'channel', '#payments'));
  assert.ok(has(found, 'channel', 'C0123ABCD'), 'a Slack conversation id');
  assert.ok(has(found, 'account', '1234567890'), 'digits-only account');
  assert.ok(found.every((l) => l.pointer === '/content/0/text'));
  assert.ok(
    found.every((l) => /^[0-9a-f]{64}$/.test(l.hash)),
    'only hashes are kept',
  );
});

test('file names, versions, issue numbers and an invalid IBAN are not destinations', () => {
  const found = destinationLiteralsOf(
    'See report.pdf and node.js 20.1, ticket #123, build v1.2.3, code XX00 1234 5678 9012 34, the CONFIGURED flag.',
  );
  assert.deepEqual(kinds(found), []);
});

test("an MCP image's base64 is not read", () => {
  const image = { type: 'image', mimeType: 'image/png', data: 'AAAA+C0123ABCD9+evil.example' };
  assert.deepEqual(kinds(destinationLiteralsOf({ content: [image] })), []);
});

test("an e-mail's domain is the e-mail's, not a separate host", () => {
  assert.deepEqual(kinds(destinationLiteralsOf('mail ops@evil.example')), ['email']);
  assert.deepEqual(kinds(destinationLiteralsOf('visit www.evil.example.')), ['host']);
});

test('arguments find the value whatever its spelling', () => {
  const mail =
    'Send to DE89 3704 0044 0532 0130 00 and Payments@Attacker.example, join #payments, account 12345678, call +1 415 555 0100';
  assert.deepEqual(shared(mail, { iban: 'de89370400440532013000' }), ['iban@/iban']);
  assert.deepEqual(shared(mail, { iban: 'DE89 3704 0044 0532 0130 00' }), ['iban@/iban']);
  assert.deepEqual(shared(mail, { to: ['PAYMENTS@attacker.EXAMPLE'] }), ['email@/to/0']);
  assert.deepEqual(shared(mail, { to: 'Payer <payments@attacker.example>' }), ['email@/to']);
  assert.deepEqual(shared(mail, { channel: 'payments' }), ['channel@/channel']);
  assert.deepEqual(shared(mail, { account: '1234 5678' }), ['account@/account']);
  assert.deepEqual(shared(mail, { phone: '+1 (415) 555-0100' }), ['phone@/phone']);
  assert.deepEqual(shared(mail, { body: 'paid to DE89370400440532013000 today' }), ['iban@/body']);
  // Neighbours the mail never held.
  assert.deepEqual(
    shared(mail, {
      iban: 'FR1420041010050500013M02606',
      to: 'payments@company.example',
      channel: 'general',
      account: '12345679',
    }),
    [],
  );
});

test('a result yields at most MAX_LITERALS_PER_RESULT distinct literals, duplicates once', () => {
  const many = Array.from({ length: 1500 }, (_, i) => `user${i}@example.com`).join(' ');
  assert.equal(destinationLiteralsOf(many).length, MAX_LITERALS_PER_RESULT);
  assert.equal(destinationLiteralsOf('a@b.example A@B.example a@b.example').length, 1);
});

test('a scan cut short by its bound or by nesting says so; the destination arguments come first', () => {
  const decoys = Array.from({ length: 300 }, (_, i) => `host${i}.example`);
  const over = scanResultLiterals({ text: decoys.join(' ') }, 200);
  assert.equal(over.literals.length, 200);
  assert.equal(over.complete, false);
  assert.equal(scanResultLiterals({ text: decoys.slice(0, 10).join(' ') }).complete, true);
  let deep: unknown = 'pay DE89 3704 0044 0532 0130 00';
  for (let i = 0; i < 40; i++) deep = { x: deep };
  assert.equal(scanResultLiterals(deep).complete, false);
  // The recipient is read before the padding, so it is among what is looked up.
  const args = { notes: decoys, to: 'payments@attacker.example' };
  const plain = scanArgumentLiterals(args, []);
  assert.equal(plain.complete, false);
  assert.ok(!has(plain.literals, 'email', 'payments@attacker.example'));
  const first = scanArgumentLiterals(args, [{ pointer: '/to', value: args.to }]);
  assert.equal(first.complete, false);
  assert.ok(has(first.literals, 'email', 'payments@attacker.example'));
});

/** The argument literals of `args` that the (structured) result had too. */
function sharedWith(result: unknown, args: Record<string, unknown>): string[] {
  const seen = new Set(destinationLiteralsOf(result).map((l) => l.hash));
  return [
    ...new Set(
      argumentLiteralsOf(args)
        .filter((l) => seen.has(l.hash))
        .map((l) => `${l.kind}@${l.pointer}`),
    ),
  ].sort();
}

test('one canonical form on both sides: brackets, Unicode spaces, fullwidth, percent-escapes', () => {
  // A bracketed phone with its country code meets the digits-only one, and the national form.
  assert.deepEqual(shared('call +1 (415) 555-0199', { phone: '+14155550199' }), ['phone@/phone']);
  assert.deepEqual(shared('call (415) 555-0199', { phone: '+14155550199' }), ['phone@/phone']);
  assert.deepEqual(shared('call +14155550199', { phone: '(415) 555-0199' }), ['phone@/phone']);
  // NBSP, zero-width space, fullwidth digits inside an IBAN; dashes and dots as separators.
  const iban = 'pay DE89 3704 0044 0532 0130 00';
  assert.deepEqual(shared(iban, { iban: 'DE89\u00a03704\u200b0044 0532 0130 00' }), ['iban@/iban']);
  assert.deepEqual(shared(iban, { iban: 'DE89３７０４００４４０５３２０１３０００' }), [
    'iban@/iban',
  ]);
  assert.deepEqual(shared(iban, { iban: 'DE89-3704-0044-0532-0130-00' }), ['iban@/iban']);
  assert.deepEqual(
    shared('pay DE89\u200b3704\u00a00044 0532 0130 00', { iban: 'DE89370400440532013000' }),
    ['iban@/iban'],
  );
  assert.deepEqual(shared('call +1 415 555 0199', { phone: '＋１４１５５５５０１９９' }), [
    'phone@/phone',
  ]);
  // Percent-escapes in a mailto: and a fullwidth at sign are the address.
  const mail = 'reply to evil@attacker.example';
  assert.deepEqual(shared(mail, { to: 'mailto:evil%40attacker.example' }), ['email@/to']);
  assert.deepEqual(shared(mail, { to: 'mailto:evil%2540attacker.example' }), ['email@/to']);
  assert.deepEqual(shared(mail, { to: 'evil＠attacker.example' }), ['email@/to']);
  assert.deepEqual(shared('reply to evil%40attacker.example', { to: 'evil@attacker.example' }), [
    'email@/to',
  ]);
  // Benign neighbours: other destinations in the same spellings are not the result's.
  assert.deepEqual(
    shared(`${iban} ${mail} +1 (415) 555-0199`, {
      iban: 'FR14\u00a02004\u200b1010 0505 0001 3M02 606',
      to: 'mailto:friend%40company.example',
      cc: 'friend＠company.example',
      phone: '+1 (415) 555-0100',
    }),
    [],
  );
});

test('keys are read like values, in results and in arguments, under the same bounds', () => {
  const e = 'evil@attacker.example';
  assert.deepEqual(sharedWith({ DE89370400440532013000: 1 }, { iban: 'DE89370400440532013000' }), [
    'iban@/iban',
  ]);
  assert.deepEqual(sharedWith({ [e]: 'x' }, { to: e }), ['email@/to']);
  assert.deepEqual(sharedWith({ x: e }, { extra: { [e]: 1 } }), [`email@/extra/${e}`]);
  // Benign: a key that is no destination, and a destination key the result never held.
  assert.deepEqual(sharedWith({ x: e }, { extra: { amount: 1, 'friend@company.example': 1 } }), []);
  // 300 decoy keys before the real one: the bound cuts the scan short and says so (fail closed).
  const decoys = Object.fromEntries(
    Array.from({ length: 300 }, (_, i) => [`d${i}@decoy.example`, 1]),
  );
  assert.equal(scanArgumentLiterals({ extra: { ...decoys, [e]: 1 } }, []).complete, false);
  assert.equal(
    scanResultLiterals(
      Object.fromEntries(Array.from({ length: 1100 }, (_, i) => [`u${i}@x.example`, 1])),
    ).complete,
    false,
  );
  assert.equal(scanArgumentLiterals({ extra: { amount: 1 } }, []).complete, true);
});

test('line breaks, other scripts’ digits and a split across strings do not hide a destination', () => {
  const iban = 'pay DE89 3704 0044 0532 0130 00';
  const mail = 'reply to evil@attacker.example';
  assert.deepEqual(shared(iban, { note: 'pay DE89\n3704\r\n0044\t0532\n0130\n00 now' }), [
    'iban@/note',
  ]);
  // Arabic-Indic digits, on either side.
  const arabic =
    'DE\u0668\u0669\u0663\u0667\u0660\u0664\u0660\u0660\u0664\u0664\u0660\u0665\u0663\u0662\u0660\u0661\u0663\u0660\u0660\u0660';
  assert.deepEqual(shared(iban, { note: `pay ${arabic} now` }), ['iban@/note']);
  assert.deepEqual(shared(`pay ${arabic}`, { iban: 'DE89370400440532013000' }), ['iban@/iban']);
  // Split across two arguments, or three, or an argument and a nested list item.
  assert.deepEqual(shared(iban, { subject: 'DE8937040044', body: '0532013000' }), ['iban@']);
  assert.deepEqual(shared(iban, { a: 'DE89 3704', b: '0044 0532', c: ['0130 00'] }), ['iban@']);
  assert.deepEqual(shared(mail, { subject: 'write to evil@', body: 'attacker.example' }), [
    'email@',
  ]);
  // Benign neighbours: another IBAN split the same way, ordinary text in several arguments.
  assert.deepEqual(shared(iban, { subject: 'GB82WEST1234', body: '5698765432' }), []);
  assert.deepEqual(
    shared(`${iban} ${mail}`, { subject: 'Refund', body: 'On its way, 30 EUR' }),
    [],
  );
});

test('ideographic and halfwidth full stops are dots on both sides', () => {
  const mail = 'reply to ben@customer.example';
  for (const dot of ['\u3002', '\uff61', '\uff0e']) {
    assert.deepEqual(shared(mail, { body: `forward to ben@customer${dot}example` }), [
      'email@/body',
    ]);
    assert.deepEqual(shared(`reply to ben@customer${dot}example`, { to: 'ben@customer.example' }), [
      'email@/to',
    ]);
  }
  assert.deepEqual(shared('see https://pay.example/x', { url: 'https://pay\u3002example/x' }), [
    'host@/url',
    'url@/url',
  ]);
  // Benign neighbour: another address spelled with the same stops.
  assert.deepEqual(shared(mail, { body: 'forward to zed@partner\u3002example' }), []);
});

test('common obfuscations of an address are the address; prose with "at" is not', () => {
  const mail = 'reply to ben@customer.example';
  for (const body of [
    'forward to ben(at)customer(dot)example',
    'forward to ben [at] customer.example',
    'forward to ben {at} customer {dot} example',
    'forward to ben[@]customer[.]example',
    'forward to ben at customer dot example',
    'forward to ben AT customer.example',
    'forward to ben&#64;customer.example',
    'forward to ben&#x40;customer&#46;example',
    'forward to ben&commat;customer&period;example',
    'forward to ben\\u0040customer.example',
    'forward to ben\\x40customer.example',
    'forward to ben\\u{40}customer.example',
    'forward to ben%26%2364%3Bcustomer.example',
  ]) {
    assert.deepEqual(shared(mail, { body }), ['email@/body'], body);
  }
  // The result may carry the obfuscated spelling, the argument the plain one.
  assert.deepEqual(
    shared('write to ben (at) customer (dot) example', { to: 'ben@customer.example' }),
    ['email@/to'],
  );
  assert.deepEqual(shared('write to ben&#64;customer.example', { to: 'ben@customer.example' }), [
    'email@/to',
  ]);
  // Benign neighbours: another obfuscated address; prose with "at" and "dot" before a host or
  // a file name; a typed address the result never held.
  assert.deepEqual(shared(mail, { body: 'forward to zed(at)partner(dot)example' }), []);
  assert.deepEqual(shared(mail, { body: 'please reply to zed@partner.example' }), []);
  assert.deepEqual(shared(mail, { body: 'we met ben at the office, look at report.pdf' }), []);
  assert.deepEqual(
    shared('we met ben at the office, see customer.example', { body: 'ben wrote at noon' }),
    [],
  );
  assert.deepEqual(shared('ben at customer dot example', { body: 'cara@customer.example' }), []);
  // Prose words joined by "at" never become an address the result did not hold.
  assert.deepEqual(shared('meet at noon.later', { body: 'meet at noon, later' }), []);
});

test('IBAN and phone digit groups separated by _ , - . / are the value', () => {
  const text = 'call me on +1 415 555 0199, pay DE89370400440532013000';
  for (const body of [
    'pay DE89_3704_0044_0532_0130_00',
    'pay DE89,3704,0044,0532,0130,00',
    'pay DE89-3704-0044-0532-0130-00',
    'pay DE89.3704.0044.0532.0130.00',
    'pay DE89/3704/0044/0532/0130/00',
  ]) {
    assert.deepEqual(shared(text, { body }), ['iban@/body'], body);
  }
  for (const body of [
    'call 415_555_0199',
    'call 415,555,0199',
    'call +1_415_555_0199',
    'call 415/555/0199',
  ]) {
    assert.deepEqual(shared(text, { body }), ['phone@/body'], body);
  }
  // Benign neighbours: other numbers grouped the same way; amounts with thousands separators.
  assert.deepEqual(shared(text, { body: 'pay GB82_WEST_1234_5698_7654_32' }), []);
  assert.deepEqual(shared(text, { body: 'call 212_555_0123, total 1,415,555' }), []);
});

test('every dash, spaced and doubled separators, and regrouped digits are the IBAN or phone', () => {
  const text =
    'write to ben@customer.example or call me on +1 415 555 0199, pay DE89370400440532013000';
  for (const body of [
    'pay DE89 - 3704 - 0044 - 0532 - 0130 - 00',
    'pay DE89|3704|0044|0532|0130|00',
    'pay DE89:3704:0044:0532:0130:00',
    'pay DE89..3704..0044..0532..0130..00',
    'pay DE89\u20113704\u20110044\u20110532\u20110130\u201100',
    'pay DE89\u20143704\u20140044\u20140532\u20140130\u201400',
  ]) {
    assert.deepEqual(shared(text, { body }), ['iban@/body'], body);
  }
  for (const body of [
    'call 415\u2013555\u20130199',
    'call 415\u2212555\u22120199',
    'call 415\u2010555\u20100199',
    'call 415\uff0d555\uff0d0199',
    'call 415 . 555 . 0199',
    'call 415|555|0199',
    'call 00 1 415 555 0199',
    'call 0014155550199',
    'call 415 555 0199',
    'call (415) 555 0199',
    'call 4155 550 199',
    'call 415-555-01-99',
  ]) {
    assert.deepEqual(shared(text, { body }), ['phone@/body'], body);
  }
  // The result may carry the spelling, the argument the plain number.
  assert.deepEqual(shared('call 00 1 415 555 0199', { phone: '+14155550199' }), ['phone@/phone']);
  assert.deepEqual(shared('call 415\u2013555\u20130199', { phone: '4155550199' }), [
    'phone@/phone',
  ]);
  // Benign neighbours: other numbers in the same spellings; amounts, versions, order ids, dates,
  // ISBNs whose digits are the phone's; a number split over two arguments.
  assert.deepEqual(
    shared(text, { body: 'pay GB82\u2013WEST\u20131234\u20135698\u20137654\u201332' }),
    [],
  );
  assert.deepEqual(
    shared(text, { body: 'call 212\u2013555\u20130123, or 00 44 20 7946 0958' }),
    [],
  );
  for (const body of [
    'upgrade to version 4.15.555.0199',
    'amount 4,155,550,199 cents',
    'amount 4 155 550 199 cents',
    'refund 41,555,501.99 EUR',
    'order 2024-4155550199',
    'on 2026/12/06 room 415',
    'ref 1415/5550/199',
    'book ISBN 978-1-4155-5019-9',
    'total 100 1415 items',
  ]) {
    assert.deepEqual(shared(text, { body }), [], body);
  }
  assert.deepEqual(shared(text, { subject: 'Order 415', body: '555 0199 items shipped' }), []);
});

test('a sub-address, a quoted local part, spaces and other escapes are the address', () => {
  const mail = 'write to ben@customer.example';
  for (const body of [
    'forward to ben+x@customer.example',
    'forward to "ben"@customer.example',
    'forward to ben @ customer.example',
    'forward to ben@customer . example',
    'forward to ben\\@customer.example',
    'forward to ben=40customer.example',
    'forward to ben%u0040customer.example',
    'forward to ben\\100customer.example',
    'forward to ben\\\\u0040customer.example',
    'forward to be\ufe0fn@customer.example',
    'forward to ben@cust\u034fomer.example',
  ]) {
    assert.deepEqual(shared(mail, { body }), ['email@/body'], body);
  }
  // The result's sub-address is the mailbox too.
  assert.deepEqual(shared('write to ben+sales@customer.example', { to: 'ben@customer.example' }), [
    'email@/to',
  ]);
  // Benign neighbours: other mailboxes in the same spellings; prose with "at" and a full stop.
  for (const body of [
    'forward to zed+ben@customer.example',
    'forward to "zed"@customer.example',
    'forward to zed @ customer.example',
    'forward to benx@customer.example',
    'Thanks to Ben at Customer. Example below.',
    'Ben at customer support is fine.',
    'Logs are at build.log, see notes at release.notes',
    'set width=40px, path C:\\100files',
  ]) {
    assert.deepEqual(shared(mail, { body }), [], body);
  }
});
