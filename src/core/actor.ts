/** @module Who performed an administrative action, as recorded in the events table. */
import { ToolgateError } from './errors.js';
import { problem } from './problem.js';
import { UNPRINTABLE_CLASS } from './visible-text.js';

export interface Actor {
  /** `cli:alice`, `admin-token`, `system:lifecycle` … */
  readonly id: string;
  /** Which front the action came through. */
  readonly via: 'cli' | 'rest' | 'console' | 'system' | 'library';
}

export const systemActor = (what: string): Actor => ({ id: `system:${what}`, via: 'system' });

const VIAS: ReadonlySet<string> = new Set(['cli', 'rest', 'console', 'system', 'library']);

/** The longest actor id recorded: a name, not a payload. */
export const MAX_ACTOR_ID_LENGTH = 200;

/**
 * Never in an audit's "who": any UNPRINTABLE_CLASS character (visible-text.ts: controls, format
 * characters, separators, private use, lone surrogates — which the store would replace by U+FFFD,
 * recording something other than what was passed —, noncharacters, default-ignorable code points)
 * and unassigned code points (Cn), which render as nothing or differently from one reader to the
 * next.
 */
const UNPRINTABLE = new RegExp(String.raw`[${UNPRINTABLE_CLASS}\p{Cn}]`, 'u');
/**
 * A visible base character: a letter, number, punctuation or symbol that is not the braille
 * blank (U+2800, a symbol that renders as white space). An id made only of spaces, blanks or
 * combining marks has none and would read as nobody.
 */
const VISIBLE = /(?!\u2800)[\p{L}\p{N}\p{P}\p{S}]/u;
/** A blank id, or one padded with white space, would read like another actor. */
const PADDED = /^\s|\s$/u;

/** Counted in code points (an emoji is one), after a cheap UTF-16 bound. */
function withinLength(id: string): boolean {
  return id.length <= 2 * MAX_ACTOR_ID_LENGTH && [...id].length <= MAX_ACTOR_ID_LENGTH;
}

/**
 * Whether `text` reads as what it is: no UNPRINTABLE character, at least one VISIBLE one, no white
 * space at either end. The rule for an actor's id, and for any name a person reads beside one (an
 * operator's display name).
 */
export function isPrintableName(text: string): boolean {
  return !UNPRINTABLE.test(text) && !PADDED.test(text) && VISIBLE.test(text);
}

/**
 * Refuses, as INPUT_INVALID, an actor that is not `{ id, via }` — a library caller passing a bare
 * string — or whose id is longer than MAX_ACTOR_ID_LENGTH code points, blank, padded with white
 * space, holds an UNPRINTABLE character or no VISIBLE one, before
 * anything is written, so no event is recorded without a named, bounded, printable actor. The id
 * is otherwise what the caller says (the library is in process and trusted).
 */
export function checkActor(actor: unknown): asserts actor is Actor {
  const a = actor as { id?: unknown; via?: unknown } | null;
  const id = typeof a === 'object' && a !== null ? a.id : undefined;
  const via = typeof a === 'object' && a !== null ? a.via : undefined;
  if (typeof id === 'string' && id.length > 0 && typeof via === 'string' && VIAS.has(via)) {
    if (withinLength(id) && isPrintableName(id)) return;
    throw new ToolgateError(
      'INPUT_INVALID',
      `the actor's id must be 1–${MAX_ACTOR_ID_LENGTH} printable characters`,
      { problems: [problem('/actor/id', 'too long or not printable', 'actor.id')] },
    );
  }
  throw new ToolgateError(
    'INPUT_INVALID',
    "the actor must be { id, via } (e.g. { id: 'library:ops', via: 'library' })",
    { problems: [problem('/actor', 'not an actor { id, via }', 'actor.shape')] },
  );
}
