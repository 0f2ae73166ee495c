/**
 * @module Invisible characters made visible: bidirectional controls (which reorder what a reader
 * sees) and zero-width characters (which hide inside a value) are shown as `\uXXXX` escapes on
 * the pages where operators decide, so the text a reader approves is the text that runs.
 */

/** Bidi embeddings, overrides, isolates and marks; zero-width and invisible formatting. */
const INVISIBLE =
  /[\u061C\u115F\u1160\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u206F\u3164\uFEFF\uFFA0]/g;

/** `text` with every invisible or reordering character as a visible `\uXXXX` escape. */
export function visibleEscapes(text: string): string {
  return text.replace(
    INVISIBLE,
    (c) => `\\u${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`,
  );
}
