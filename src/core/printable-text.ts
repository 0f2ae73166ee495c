/**
 * @module Free text a person reads over several lines (an agent's description): what it may hold.
 * The one-line rule for names beside an id is isPrintableName (actor.ts).
 */
import { UNPRINTABLE_BUT_LAYOUT } from './visible-text.js';

/**
 * Never in free text a person reads: any UNPRINTABLE_CLASS character (visible-text.ts) but newline
 * and tab — controls, format characters, separators, private use, lone surrogates, noncharacters
 * and default-ignorable code points, which reorder what a reader sees or render as nothing.
 */
const UNPRINTABLE_IN_TEXT = new RegExp(UNPRINTABLE_BUT_LAYOUT, 'u');

/** Whether `text` reads as what it is; newlines and tabs are allowed, blank text too. */
export function isPrintableText(text: string): boolean {
  return !UNPRINTABLE_IN_TEXT.test(text);
}
