/**
 * The destination rules as pure checks: each kind parsed and normalised (then compared exactly),
 * the e-mail domain rule exact unless sub-domains are declared, look-alike and double-@ tricks
 * refused, arrays read element by element, a missing set failing closed, and a refusal that
 * never echoes the allow-list.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  checkDestination,
  type DestinationRule,
  destinationValues,
  emailDomainAdmits,
  normaliseDestination,
  type SetMembership,
} from '../../src/domain/policy/index.js';

const norm = (kind: DestinationRule['kind'], v: unknown) => {
  const n = normaliseDestination(kind, v);
  return n.ok ? n.value : null;
};

describe('normalisation by kind', () => {
  test('e-mail: lower-cased, one @, plain dot-atom, an ASCII LDH domain', () => {
    assert.equal(norm('email', 'Ana.Lopez+x@Example.COM'), 'ana.lopez+x@example.com');
    for (const bad of [
      'a@b@example.com',
      '"a@b"@example.com',
      'Ana <ana@example.com>',
      'ana@exаmple.com', // Cyrillic а
      'ana@ｅxample.com', // full-width
      'ana@xn--exmple-cua.com',
      'ana@example.com.',
      'ana@[192.0.2.1]',
      'ana@localhost',
      'ana.@example.com',
      'an..a@example.com',
      '@example.com',
      'ana@',
      'ana@example.com\u200b',
      ' ana@example.com',
      'ana@-example.com',
      42,
    ]) {
      assert.equal(norm('email', bad), null, String(bad));
    }
  });

  test('account, phone, chat, host and url', () => {
    assert.equal(norm('account', 'gb82 west 1234 5698 7654 32'), 'GB82WEST12345698765432');
    assert.equal(norm('account', 'DE89-3704'), null);
    assert.equal(norm('phone', '+44 (20) 7946-0958'), '+442079460958');
    assert.equal(norm('phone', '+44 20 7946 0958 ext 2'), null);
    assert.equal(norm('chat', '#Support'), '#support');
    assert.equal(norm('chat', '#supp ort'), null);
    assert.equal(norm('chat', '#ѕupport'), null); // Cyrillic ѕ
    assert.equal(norm('host', 'Hooks.Example.com'), 'hooks.example.com');
    assert.equal(norm('host', '127.0.0.1'), null);
    assert.equal(norm('url', 'HTTPS://Hooks.Example.com:443/x'), 'hooks.example.com');
    assert.equal(norm('url', 'https://user@hooks.example.com/'), null);
  });
});

describe('the e-mail domain rule', () => {
  test('exact after lower-casing; sub-domains only when declared with *.', () => {
    assert.equal(emailDomainAdmits('example.com', 'example.com'), true);
    assert.equal(emailDomainAdmits('example.com', 'mail.example.com'), false);
    assert.equal(emailDomainAdmits('example.com', 'example.com.evil.example'), false);
    assert.equal(emailDomainAdmits('example.com', 'notexample.com'), false);
    assert.equal(emailDomainAdmits('*.example.com', 'mail.example.com'), true);
    assert.equal(emailDomainAdmits('*.example.com', 'example.com'), false);
    assert.equal(emailDomainAdmits('*.example.com', 'evilexample.com'), false);
  });
});

describe('checking a call', () => {
  const sets: SetMembership = {
    admits: async (set, value) =>
      set !== 'team' ? 'missing' : value === 'bea@partner.example' ? 'yes' : 'no',
  };
  const rule: DestinationRule = {
    argument: '/cc',
    kind: 'email',
    allow: { values: ['Boss@Example.com'], email_domains: ['example.com'], sets: ['team'] },
  };

  test('arrays are read element by element, each with its own pointer', () => {
    assert.deepEqual(
      destinationValues({ cc: ['a@example.com', 'b@example.com'] }, rule).map((v) => v.pointer),
      ['/cc/0', '/cc/1'],
    );
    assert.deepEqual(destinationValues({ to: 'x' }, rule), []);
  });

  test('each source admits; anything else is refused naming the pointer, never the list', async () => {
    for (const v of ['ana@EXAMPLE.com', 'bea@Partner.example', 'boss@example.com']) {
      const r = await checkDestination(rule, { pointer: '/cc/0', value: v }, sets);
      assert.equal(r.ok, true, v);
    }
    const r = await checkDestination(rule, { pointer: '/cc/2', value: 'eve@evil.example' }, sets);
    assert.equal(r.ok, false);
    if (r.ok) return;
    assert.equal(r.rule, 'destination.not_allowed');
    assert.equal(r.pointer, '/cc/2');
    assert.ok(!r.message.includes('Boss@') && !r.message.includes('bea@'), r.message);
  });

  test('a set that does not exist, or no set service at all, fails closed', async () => {
    const gone: DestinationRule = { argument: '/to', kind: 'email', allow: { sets: ['gone'] } };
    const a = await checkDestination(gone, { pointer: '/to', value: 'a@example.com' }, sets);
    assert.equal(a.ok ? 'ok' : a.rule, 'destination.set_unavailable');
    const b = await checkDestination(
      rule,
      { pointer: '/cc/0', value: 'eve@evil.example' },
      undefined,
    );
    assert.equal(b.ok ? 'ok' : b.rule, 'destination.set_unavailable');
  });
});
