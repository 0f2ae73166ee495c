/**
 * @module Free text a person reads over several lines (an agent's description): what it may hold.
 * The one-line rule for names beside an id is isPrintableName (actor.ts).
 */

/**
 * Never in free text a person reads: control characters other than newline and tab (C0, DEL,
 * C1), format characters such as bidi overrides, isolates and zero-width spaces (Cf), line and
 * paragraph separators (Zl, Zp), private use (Co), lone surrogates (Cs), noncharacters and
 * default-ignorable code points (a Hangul filler, a variation selector, a tag character), which
 * reorder what a reader sees or render as nothing.
 */
const UNPRINTABLE_IN_TEXT =
  /(?![\t\n])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cs}\p{Noncharacter_Code_Point}\p{Default_Ignorable_Code_Point}]/u;

/** Whether `text` reads as what it is; newlines and tabs are allowed, blank text too. */
export function isPrintableText(text: string): boolean {
  return !UNPRINTABLE_IN_TEXT.test(text);
}
