/**
 * Every text the console interpolates into a page shows its bidi controls and zero-width
 * characters as visible `\uXXXX` escapes, besides being HTML-escaped (attack round 15, R1: a user
 * id whose subject held a right-to-left override read as another user's on the approval page).
 * Markup built by `html` itself is kept as it is; plain text in any script is shown unchanged.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { html, toHtmlString } from '../../src/edge/console/html.js';

test('interpolated text shows bidi and zero-width characters as escapes, and is HTML-escaped', () => {
  const spoof = 'oauth:["https://idp.test","\u202erotciv\u202c"]';
  const page = toHtmlString(html`<dd><code>${spoof}</code></dd><p>${'bo\u200bb'}</p>`);
  assert.equal(
    page,
    '<dd><code>oauth:[&quot;https://idp.test&quot;,&quot;\\u202Erotciv\\u202C&quot;]</code></dd><p>bo\\u200Bb</p>',
  );
  assert.doesNotMatch(page, /[\u202a-\u202e\u200b]/);
});

test('every other invisible or default-ignorable character is escaped too: tags, soft hyphen, variation selectors, grapheme joiner, interlinear annotation, musical formatting (attack round 16, S1)', () => {
  // An agent hid a card number in tag characters inside an e-mail body: the approver read only
  // the visible words beside "Approve this exact call".
  const hidden = [...'4111 1111']
    .map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0)))
    .join('');
  const body = `Your refund is on its way.${hidden} Best, Support`;
  const page = toHtmlString(html`<pre>${body}</pre>`);
  assert.match(page, /\\u\{E0034\}\\u\{E0031\}/);
  assert.doesNotMatch(page, /[\u{E0000}-\u{E007F}]/u);
  for (const c of ['\u00AD', '\uFE0F', '\u034F', '\u17B4', '\uFFF9', '\u{1D173}', '\u2061']) {
    const shown = toHtmlString(html`${`a${c}b`}`);
    assert.doesNotMatch(shown, /[\p{Cf}\p{Default_Ignorable_Code_Point}]/u, JSON.stringify(c));
    assert.match(shown, /^a\\u(?:[0-9A-F]{4}|\{[0-9A-F]{5}\})b$/, JSON.stringify(c));
  }
});

test('controls a terminal or browser draws as nothing, separators and private use are escaped too; newline and tab are kept (attack round 17, T1 and T3)', () => {
  // C1 controls and DEL: an agent hid a card number in them inside an e-mail body; a terminal
  // drew the approval's arguments without them. LS, PS and NEL break lines the reader cannot see.
  const hidden = [...'4111'].map((c) => String.fromCharCode(0x80 + Number(c))).join('');
  for (const c of [
    '\u007F',
    '\u0085',
    '\u009B',
    '\u009D',
    hidden,
    '\u2028',
    '\u2029',
    '\r',
    '\uE000',
    '\uFFFF',
    '\u{F0000}',
  ]) {
    const shown = toHtmlString(html`${`a${c}b`}`);
    assert.doesNotMatch(
      shown,
      /[\p{Cc}\p{Zl}\p{Zp}\p{Co}\p{Noncharacter_Code_Point}]/u,
      JSON.stringify(c),
    );
    assert.match(shown, /^a(?:\\u(?:[0-9A-F]{4}|\{[0-9A-F]{5}\}))+b$/, JSON.stringify(c));
  }
  // A code point beyond the first plane is written \u{…}, never five digits that read as \uXXXX
  // and a digit (attack round 17, T4).
  assert.equal(toHtmlString(html`${'x\u{E0041}'}`), 'x\\u{E0041}');
  // The benign neighbours: line breaks and tabs lay out text, and stay as they are.
  assert.equal(toHtmlString(html`${'line one\n\tline two'}`), 'line one\n\tline two');
});

test('benign: text in any script, and markup built by html, are kept as they are', () => {
  const inner = html`<b>${'Ålice Ünal'}</b>`;
  assert.equal(
    toHtmlString(html`<p>${inner} ${'李雷'} ${"O'Brien"}</p>`),
    '<p><b>Ålice Ünal</b> 李雷 O&#39;Brien</p>',
  );
});
