import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkUrl, MAX_ECHO_CHARS, MAX_URL_LENGTH } from '../../src/domain/policy/index.js';

const rule = { hosts: ['api.example.com', 'files.example.org'] };

function refusedWith(raw: unknown, expected: string, hosts: readonly string[] = rule.hosts): void {
  const verdict = checkUrl(raw, { hosts });
  assert.equal(verdict.ok, false, `expected ${String(raw)} to be refused`);
  if (!verdict.ok) assert.equal(verdict.rule, expected, verdict.message);
}

describe('checkUrl', () => {
  test('an https URL to an allow-listed host is allowed and returned in canonical form', () => {
    const verdict = checkUrl('https://api.example.com/v1/items?q=a%20b#top', rule);
    assert.deepEqual(verdict, {
      ok: true,
      value: { url: 'https://api.example.com/v1/items?q=a%20b#top', host: 'api.example.com' },
    });
  });

  test('the returned URL is the parser serialization, with the path normalized and encoded', () => {
    const verdict = checkUrl('https://api.example.com/a/./b/../c/ü', rule);
    assert.ok(verdict.ok);
    if (verdict.ok) assert.equal(verdict.value.url, 'https://api.example.com/a/c/%C3%BC');
  });

  test('a bare authority gets the root path', () => {
    const verdict = checkUrl('https://api.example.com', rule);
    assert.ok(verdict.ok);
    if (verdict.ok) assert.equal(verdict.value.url, 'https://api.example.com/');
  });

  test('non-strings are refused as url.type', () => {
    for (const value of [undefined, null, 42, true, {}, [], ['https://api.example.com/']]) {
      refusedWith(value, 'url.type');
    }
  });

  test('an empty allow-list allows nothing', () => {
    refusedWith('https://api.example.com/', 'url.host_not_allowed', []);
  });

  test('hosts are compared by equality, never by suffix, prefix or containment', () => {
    refusedWith('https://api.example.com.evil.com/', 'url.host_not_allowed');
    refusedWith('https://evilapi.example.com/', 'url.host_not_allowed');
    refusedWith('https://example.com/', 'url.host_not_allowed');
    refusedWith('https://v2.api.example.com/', 'url.host_not_allowed');
    refusedWith('https://api.example.co/', 'url.host_not_allowed');
  });

  test('userinfo is refused, even an empty "@"', () => {
    refusedWith('https://example.com@api.example.com/', 'url.userinfo');
    refusedWith('https://api.example.com@evil.com/', 'url.userinfo');
    refusedWith('https://@api.example.com/', 'url.userinfo');
    refusedWith('https://:@api.example.com/', 'url.userinfo');
  });

  test('a userinfo refusal never quotes the credentials', () => {
    for (const raw of [
      'https://admin:hunter2@api.example.com/',
      'HTTPS://admin:hunter2@api.example.com/',
      'https:admin:hunter2@api.example.com/',
      'https://admin:hunter2@127.0.0.1:8080/',
    ]) {
      const verdict = checkUrl(raw, rule);
      assert.equal(verdict.ok, false);
      if (!verdict.ok) {
        assert.equal(verdict.rule, 'url.userinfo');
        assert.ok(!verdict.message.includes('hunter2'), verdict.message);
      }
    }
  });

  test('a port other than the default is refused; the default one is dropped', () => {
    refusedWith('https://api.example.com:8443/', 'url.port');
    refusedWith('https://api.example.com:80/', 'url.port');
    for (const raw of ['https://api.example.com:443/', 'https://api.example.com:/']) {
      const verdict = checkUrl(raw, rule);
      assert.ok(verdict.ok, raw);
      if (verdict.ok) assert.equal(verdict.value.url, 'https://api.example.com/');
    }
  });

  test('an upper-case scheme or host is accepted and normalised, brackets in the query kept', () => {
    const verdict = checkUrl('HTTPS://API.Example.COM/x?a[]=1', { hosts: ['api.example.com'] });
    assert.ok(verdict.ok, verdict.ok ? '' : verdict.message);
    if (verdict.ok) {
      assert.equal(verdict.value.url, 'https://api.example.com/x?a[]=1');
      assert.equal(verdict.value.host, 'api.example.com');
    }
  });

  test('IP literals are refused in every spelling the parser accepts', () => {
    for (const host of [
      '127.0.0.1',
      '2130706433',
      '0177.0.0.1',
      '0x7f000001',
      '127.1',
      '0x7f.0.0.1',
      '[::1]',
      '[::ffff:127.0.0.1]',
      '[::127.0.0.1]',
      '169.254.169.254',
      '[fd00:ec2::254]',
    ]) {
      refusedWith(`https://${host}/`, 'url.ip_literal');
    }
  });

  test('an IP listed as an allowed host still never matches', () => {
    refusedWith('https://127.0.0.1/', 'url.ip_literal', ['127.0.0.1']);
  });

  test('a host that parses to an allowed name from another spelling is refused', () => {
    refusedWith('https://api.example.com./', 'url.not_canonical');
    refusedWith('https://api%2Eexample.com/', 'url.not_canonical');
    refusedWith('https://api\u{ff0e}example\u{ff0e}com/', 'url.not_canonical');
    refusedWith('https://\u{212a}api.example.com/', 'url.not_canonical', ['kapi.example.com']);
    refusedWith('https:api.example.com/', 'url.not_canonical');
    refusedWith('https:///api.example.com/', 'url.not_canonical');
  });

  test('a trailing-dot host is refused even when allow-listed with the dot', () => {
    refusedWith('https://api.example.com./', 'url.not_canonical', ['api.example.com.']);
  });

  test('schemes other than https are refused', () => {
    for (const raw of [
      'http://api.example.com/',
      'ftp://api.example.com/',
      'file:///etc/passwd',
      'gopher://api.example.com/',
      'data:text/plain,hi',
      'javascript:alert(1)',
      'wss://api.example.com/',
    ]) {
      refusedWith(raw, 'url.scheme');
    }
  });

  test('whitespace, controls and backslashes are refused before parsing', () => {
    for (const raw of [
      'https://api.exa\tmple.com/',
      'https://api.example.com/\n',
      ' https://api.example.com/',
      'https://api.example.com\\@evil.com/',
      'https://api.example.com/\u0000',
      'https://api.example.com/\u00a0',
      'https://api.example.com/\u2028',
      'https://api.example.com/\u0085',
    ]) {
      refusedWith(raw, 'url.syntax');
    }
  });

  test('strings that are not absolute URLs are refused as url.syntax', () => {
    for (const raw of ['', 'api.example.com', '//api.example.com/', '/v1/items', 'https://']) {
      refusedWith(raw, 'url.syntax');
    }
  });

  test(`URLs longer than ${MAX_URL_LENGTH} characters are refused; exactly that many are fine`, () => {
    const base = 'https://api.example.com/';
    const fits = base + 'a'.repeat(MAX_URL_LENGTH - base.length);
    assert.equal(fits.length, MAX_URL_LENGTH);
    assert.ok(checkUrl(fits, rule).ok);
    refusedWith(`${fits}a`, 'url.too_long');
  });

  test(`messages never quote more than ${MAX_ECHO_CHARS} characters of input`, () => {
    const long = `https://${'a'.repeat(300)}.evil.com/${'b'.repeat(1500)}`;
    for (const raw of [long, `${long}\t`, `ftp${long.slice(5)}`, long.replace('https', 'HTTPS')]) {
      const verdict = checkUrl(raw, rule);
      assert.equal(verdict.ok, false);
      if (!verdict.ok) {
        assert.ok(!verdict.message.includes('a'.repeat(MAX_ECHO_CHARS + 1)), verdict.message);
        assert.ok(verdict.message.length < 400, verdict.message);
      }
    }
  });

  test('messages escape control and non-ASCII characters instead of echoing them', () => {
    const verdict = checkUrl('https://\u202eevil.com/', rule);
    assert.equal(verdict.ok, false);
    if (!verdict.ok) assert.ok(!verdict.message.includes('\u202e'), verdict.message);
  });
});
