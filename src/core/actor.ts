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

/**
 * Refuses, as INPUT_INVALID, an actor that is not `{ id, via }` — a library caller passing a bare
 * string — before anything is written, so no event is recorded without a named actor.
 */
export function checkActor(actor: unknown): asserts actor is Actor {
  const a = actor as { id?: unknown; via?: unknown } | null;
  if (
    typeof a === 'object' &&
    a !== null &&
    typeof a.id === 'string' &&
    a.id.length > 0 &&
    typeof a.via === 'string' &&
    VIAS.has(a.via)
  )
    return;
  throw new ToolgateError(
    'INPUT_INVALID',
    "the actor must be { id, via } (e.g. { id: 'library:ops', via: 'library' })",
    { problems: [problem('/actor', 'not an actor { id, via }', 'actor.shape')] },
  );
}
