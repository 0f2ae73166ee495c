/** @module Who performed an administrative action, as recorded in the events table. */
import { ToolgateError } from './errors.js';
import { problem } from './problem.js';

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

/** Control characters (C0, DEL, C1) and line or paragraph separators: never in an audit's "who". */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point.
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/**
 * Refuses, as INPUT_INVALID, an actor that is not `{ id, via }` — a library caller passing a bare
 * string — or whose id is longer than MAX_ACTOR_ID_LENGTH or holds a control character, before
 * anything is written, so no event is recorded without a named, bounded, printable actor. The id
 * is otherwise what the caller says (the library is in process and trusted).
 */
export function checkActor(actor: unknown): asserts actor is Actor {
  const a = actor as { id?: unknown; via?: unknown } | null;
  const id = typeof a === 'object' && a !== null ? a.id : undefined;
  const via = typeof a === 'object' && a !== null ? a.via : undefined;
  if (typeof id === 'string' && id.length > 0 && typeof via === 'string' && VIAS.has(via)) {
    if (id.length <= MAX_ACTOR_ID_LENGTH && !UNPRINTABLE.test(id)) return;
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
