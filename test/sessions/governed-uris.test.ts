/**
 * @module What a resource URI names (docs/security-model.md "Resources and templates: one URI,
 * one governed thing"), as a pure function: a template's value that needs percent-encoding is
 * matched as the value it encodes, so the template's expansion and its match agree; every spelling
 * that could reach something else (an encoded slash, double encoding, a dot segment, userinfo,
 * control and format characters, compatibility forms, a static's look-alike) names nothing.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { expandTemplate } from '../../src/domain/catalog/index.js';
import {
  type GovernedUriEntry,
  resolveGovernedUri,
} from '../../src/domain/sessions/governed-uris.js';

const ENTRIES: readonly GovernedUriEntry[] = [
  { id: 'docs.secret', kind: 'resource', key: 'docs://internal/secret', listed: true },
  { id: 'docs.readme', kind: 'resource', key: 'docs://public/readme', listed: true },
  { id: 'docs.page', kind: 'resource_template', key: 'docs://public/{name}', listed: true },
  { id: 'docs.nested', kind: 'resource_template', key: 'docs://pages/{+path}', listed: true },
];

const named = (uri: string) => resolveGovernedUri(uri, ENTRIES);

test('a value that needs percent-encoding reads as the value it encodes, both ways', () => {
  for (const name of [
    'a@b',
    'jane.doe@mail.example',
    'a b',
    'a:b',
    'é',
    'caf\u00e9 au lait',
    'faq',
  ]) {
    const uri = expandTemplate('docs://public/{name}', { name });
    assert.ok(uri !== null);
    assert.deepEqual(
      named(uri),
      { kind: 'resource_template', id: 'docs.page', args: { name } },
      uri,
    );
  }
  assert.deepEqual(named('docs://public/a%40b'), {
    kind: 'resource_template',
    id: 'docs.page',
    args: { name: 'a@b' },
  });
  assert.deepEqual(named('docs://pages/notes/caf%C3%A9%20menu'), {
    kind: 'resource_template',
    id: 'docs.nested',
    args: { path: 'notes/café menu' },
  });
});

test('spellings that could reach something else name nothing', () => {
  for (const uri of [
    // An encoded slash, backslash, query or fragment would leave the template's segment.
    'docs://public/a%2Fb',
    'docs://public/..%2Finternal%2Fsecret',
    'docs://public/a%5Cb',
    'docs://public/a%3Fb',
    'docs://public/a%23b',
    'docs://pages/a%2Fb',
    // Double encoding: an upstream that decodes twice reads another value.
    'docs://public/a%2540b',
    'docs://public/a%252Fb',
    'docs://public/%252e%252e',
    // Dot segments, escaped or not; a static's look-alike; userinfo.
    'docs://public/%2e%2e',
    'docs://public/..',
    'docs://public/%2E',
    'docs://public/readme%3B',
    'docs://public/README',
    'docs://u%40public/readme',
    // Control, format and compatibility characters; a spelling that is not the expansion.
    'docs://public/a%00b',
    'docs://public/a%0Ab',
    'docs://public/se%E2%80%8Bcret',
    'docs://public/%EF%BD%93ecret',
    'docs://public/caf%c3%a9',
    'docs://public/a@b',
    'docs://public/é',
    'docs://public/a%G0b',
  ]) {
    assert.equal(named(uri), null, uri);
  }
  // The static resources are themselves, never the template's.
  assert.deepEqual(named('docs://public/readme'), { kind: 'resource', id: 'docs.readme' });
});

test('a value holding a default-ignorable character or an ideographic full stop names nothing', () => {
  for (const uri of [
    'docs://public/priv%CD%8Fate',
    'docs://public/be%EF%B8%8Fn',
    'docs://public/a%E2%80%8Bb',
    'docs://public/a%E1%85%9Fb',
    'docs://public/private%E3%80%82',
    'docs://public/private%EF%BD%A1',
    'docs://pages/notes/priv%CD%8Fate',
  ]) {
    assert.equal(named(uri), null, uri);
  }
  for (const name of ['priv\u034fate', 'private\u3002', 'private\uff61', 'be\ufe0fn']) {
    const uri = expandTemplate('docs://public/{name}', { name });
    assert.ok(uri !== null);
    assert.equal(named(uri), null, uri);
  }
  // Benign neighbours: an accented letter, an emoji without a variation selector, a plain dot.
  for (const name of ['été', '\u{1F600}', 'private.notes']) {
    const uri = expandTemplate('docs://public/{name}', { name });
    assert.ok(uri !== null);
    assert.deepEqual(
      named(uri),
      { kind: 'resource_template', id: 'docs.page', args: { name } },
      uri,
    );
  }
});

test("identical entries of two providers name the caller's own copy; different templates, nothing", () => {
  const twins: readonly GovernedUriEntry[] = [
    ...ENTRIES,
    { id: 'twin.secret', kind: 'resource', key: 'docs://internal/secret', listed: true },
    { id: 'twin.page', kind: 'resource_template', key: 'docs://public/{name}', listed: true },
    { id: 'wide.any', kind: 'resource_template', key: 'docs://{area}/faq', listed: true },
  ];
  const read = (uri: string, offered: readonly string[]) =>
    resolveGovernedUri(uri, twins, new Set(offered));
  assert.deepEqual(read('docs://internal/secret', ['twin.secret']), {
    kind: 'resource',
    id: 'twin.secret',
  });
  assert.deepEqual(read('docs://internal/secret', ['docs.secret', 'twin.secret']), {
    kind: 'resource',
    id: 'docs.secret',
  });
  // Offered neither copy: nothing (never a copy the caller is not offered).
  assert.equal(read('docs://internal/secret', []), null);
  assert.equal(read('docs://internal/secret', ['docs.page']), null);
  assert.deepEqual(read('docs://public/tea', ['twin.page']), {
    kind: 'resource_template',
    id: 'twin.page',
    args: { name: 'tea' },
  });
  assert.equal(read('docs://public/tea', []), null);
  // docs://public/{name} and docs://{area}/faq are different templates: nothing, whoever asks.
  assert.equal(read('docs://public/faq', ['docs.page', 'wide.any']), null);
  assert.equal(read('docs://public/faq', ['docs.page']), null);
  // A copy never reads a dot segment or another spelling of a static.
  assert.equal(read('docs://public/../internal/secret', ['twin.page']), null);
  assert.equal(read('docs://internal/secret;x', ['twin.page']), null);
});
