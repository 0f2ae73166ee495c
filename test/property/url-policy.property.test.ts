/**
 * Properties of the URL rule that must hold for every input, not only the red-team cases
 * (fast-check): it never throws, it never allows a host outside the list, and it allows exactly
 * the canonical https form of an allowed host.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkUrl } from '../../src/domain/policy/index.js';
import { fc } from '../support/property.js';

const LETTERS = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** A lower-case LDH label that does not start or end with a hyphen. */
const label = fc
  .tuple(
    fc.constantFrom(...LETTERS),
    fc.string({ unit: fc.constantFrom(...LETTERS, '-'), maxLength: 12 }),
    fc.constantFrom(...LETTERS),
  )
  .map(([first, middle, last]) => `${first}${middle}${last}`)
  .filter((l) => !l.startsWith('xn--') && l.slice(2, 4) !== '--');

/** A canonical DNS name whose last label is a letters-only TLD, so it can never read as IPv4. */
const hostName = fc
  .tuple(
    fc.array(label, { minLength: 1, maxLength: 3 }),
    fc.string({
      unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz'),
      minLength: 2,
      maxLength: 6,
    }),
  )
  .map(([labels, tld]) => [...labels, tld].join('.'));

/** Path, query and fragment characters the parser keeps as they are. */
const pathText = fc.string({
  unit: fc.constantFrom(
    ..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@/%20",
  ),
  maxLength: 60,
});

const anyString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 120 }),
  fc.string({ unit: 'grapheme', maxLength: 120 }),
  fc.webUrl({ withQueryParameters: true, withFragments: true }),
  fc.webUrl().map((u) => u.replace(/^http:/, 'https:')),
  fc
    .tuple(
      fc.constantFrom('https://', 'https://api.example.com', 'https://api.example.com@'),
      fc.string({ unit: 'binary', maxLength: 60 }),
    )
    .map(([a, b]) => a + b),
);

test('checkUrl never throws, and whatever it allows has a host from the list, in canonical form', () => {
  fc.assert(
    fc.property(anyString, fc.array(hostName, { maxLength: 3 }), (raw, extra) => {
      const hosts = ['api.example.com', ...extra];
      const verdict = checkUrl(raw, { hosts });
      if (verdict.ok) {
        assert.ok(hosts.includes(verdict.value.host), verdict.value.host);
        const reparsed = new URL(verdict.value.url);
        assert.equal(reparsed.hostname, verdict.value.host);
        assert.equal(reparsed.protocol, 'https:');
        assert.equal(reparsed.port, '');
        assert.equal(reparsed.username + reparsed.password, '');
        assert.equal(reparsed.href, verdict.value.url);
      } else {
        assert.ok(verdict.rule.startsWith('url.'), verdict.rule);
        assert.ok(verdict.message.length <= 400, verdict.message);
      }
    }),
    { numRuns: 3_000 },
  );
});

test('https://h/ plus any path is allowed for an allowed host h', () => {
  fc.assert(
    fc.property(hostName, pathText, (host, rest) => {
      const verdict = checkUrl(`https://${host}/${rest}`, { hosts: [host] });
      assert.ok(verdict.ok, verdict.ok ? '' : `${verdict.rule}: ${verdict.message}`);
      assert.equal(verdict.value.host, host);
    }),
    { numRuns: 1_000 },
  );
});

test('an explicit default port or an upper-case host is the same URL: accepted and normalised', () => {
  fc.assert(
    fc.property(hostName, pathText, (host, rest) => {
      for (const raw of [`https://${host}:443/${rest}`, `HTTPS://${host.toUpperCase()}/${rest}`]) {
        const verdict = checkUrl(raw, { hosts: [host] });
        assert.ok(verdict.ok, verdict.ok ? '' : `${raw}: ${verdict.rule}`);
        assert.equal(verdict.value.host, host);
        assert.equal(verdict.value.url, new URL(`https://${host}/${rest}`).href);
      }
    }),
    { numRuns: 1_000 },
  );
});

test('a longer host, a sub-domain, another port and plain http of an allowed host are all refused', () => {
  fc.assert(
    fc.property(hostName, label, pathText, (host, extra, rest) => {
      const rule = { hosts: [host] };
      for (const raw of [
        `https://${host}.${extra}/${rest}`,
        `https://${extra}.${host}/${rest}`,
        `http://${host}/${rest}`,
        `https://${host}${extra}/${rest}`,
        `https://${host}:8443/${rest}`,
        `https://${host}@${extra}.com/${rest}`,
      ]) {
        const verdict = checkUrl(raw, rule);
        assert.equal(verdict.ok, false, raw);
      }
    }),
    { numRuns: 1_000 },
  );
});
