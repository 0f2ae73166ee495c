/**
 * @module Invisible characters made visible: bidirectional controls (which reorder what a reader
 * sees) and zero-width characters (which hide inside a value) are shown as `\uXXXX` escapes on
 * the pages where operators decide, so the text a reader approves is the text that runs.
 */

/**
 * Bidi embeddings, overrides, isolates and marks; zero-width and every other format character
 * (Cf: tags, soft hyphen, interlinear annotation, musical formatting) and default-ignorable code
 * point (variation selectors, the grapheme joiner, the Hangul fillers): each renders as nothing or
 * not as itself (attack round 16, S1: text hidden in tag characters inside an e-mail body was not
 * on the approval page an approver read).
 */
const INVISIBLE = /[\p{Cf}\p{Default_Ignorable_Code_Point}\u180E]/gu;

/** `text` with every invisible or reordering character as a visible `\uXXXX` escape. */
export function visibleEscapes(text: string): string {
  return text.replace(
    INVISIBLE,
    (c) => `\\u${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`,
  );
}
