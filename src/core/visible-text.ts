/**
 * @module Invisible characters made visible. One set names every code point that does not read as
 * itself (UNPRINTABLE_CLASS); the name and text rules refuse it (actor.ts, printable-text.ts) and
 * every renderer a person decides from — the console's pages, the CLI's text and JSON — shows it
 * as a visible escape, so the text a reader approves is the text that runs.
 */

/**
 * The body of a Unicode-mode character class of every code point that does not read as itself:
 * control characters (Cc: C0, DEL and C1, which a terminal draws as nothing or obeys — attack
 * round 17, T1), format characters (Cf: bidi embeddings, overrides, isolates and marks, zero-width
 * characters, tags, the soft hyphen, interlinear annotation, musical formatting), the line and
 * paragraph separators (Zl, Zp), private use (Co), lone surrogates (Cs), noncharacters, and the
 * other default-ignorable code points (variation selectors, the grapheme joiner, the Hangul
 * fillers, U+180E, attack round 16, S1). Each renders as nothing, as a box, as a break the reader
 * cannot see, or reorders what is around it.
 */
export const UNPRINTABLE_CLASS = String.raw`\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cs}\p{Noncharacter_Code_Point}\p{Default_Ignorable_Code_Point}\u180E`;

/**
 * A Unicode-mode pattern of one UNPRINTABLE_CLASS character but newline and tab, the two controls
 * that lay out text a person reads: what free text may not hold (printable-text.ts) and what a
 * renderer escapes.
 */
export const UNPRINTABLE_BUT_LAYOUT = String.raw`(?![\n\t])[${UNPRINTABLE_CLASS}]`;

const HIDDEN = new RegExp(UNPRINTABLE_BUT_LAYOUT, 'gu');

/** One code point as a visible escape: `\u202E`, or `\u{E0041}` beyond the first plane. */
export function codePointEscape(c: string): string {
  const cp = c.codePointAt(0) ?? 0;
  const hex = cp.toString(16).toUpperCase();
  return cp > 0xffff ? `\\u{${hex}}` : `\\u${hex.padStart(4, '0')}`;
}

/**
 * `text` with every UNPRINTABLE_CLASS character but newline and tab as a visible escape
 * (codePointEscape). Applying it twice changes nothing more: an escape is printable text.
 */
export function visibleEscapes(text: string): string {
  return text.replace(HIDDEN, codePointEscape);
}

/**
 * visibleEscapes for JSON text: every escape one JSON itself reads (`\u202E`; beyond the first
 * plane its UTF-16 pair, `\uDB40\uDC41`), so the text still parses to the very same value. Only
 * characters inside strings can be hidden ones: JSON.stringify escapes the controls itself.
 */
export function visibleJsonEscapes(json: string): string {
  return json.replace(HIDDEN, (c) =>
    [...Array(c.length).keys()]
      .map((i) => `\\u${c.charCodeAt(i).toString(16).toUpperCase().padStart(4, '0')}`)
      .join(''),
  );
}
