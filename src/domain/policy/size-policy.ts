/** @module Size ceilings on each top-level argument and on the whole call, in UTF-8 bytes of JSON (C6). */
import type { PolicyVerdict } from './policy-verdict.js';
import { allow, deny, excerpt } from './policy-verdict.js';

export interface SizeLimits {
  readonly maxArgumentBytes: number;
  readonly maxCallBytes: number;
}

/** UTF-8 bytes of the JSON text, 0 for what JSON omits (`undefined`), undefined if unserializable. */
function jsonBytes(value: unknown): number | undefined {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? 0 : Buffer.byteLength(text, 'utf8');
  } catch {
    // Cycles, BigInt and nesting deep enough to exhaust the stack land here.
    return undefined;
  }
}

/** Written as `bytes <= limit`, not `!(bytes > limit)`, so a NaN or missing limit refuses. */
function withinLimit(bytes: number | undefined, limit: number): boolean {
  return bytes !== undefined && bytes <= limit;
}

/** Own entries of an arguments object; none for anything else, or if reading them throws. */
function topLevelEntries(args: unknown): [string, unknown][] {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return [];
  try {
    return Object.entries(args);
  } catch {
    // The whole-call measurement that follows fails the same way and refuses.
    return [];
  }
}

/**
 * Measures each top-level argument (when `args` is an object) and then the whole call, as the
 * UTF-8 bytes of its JSON text. Never throws; a value that cannot be serialized, or a limit that
 * is not a number, is refused rather than waved through. `bytes` is the size of the whole call.
 */
export function checkSizes(args: unknown, limits: SizeLimits): PolicyVerdict<{ bytes: number }> {
  for (const [name, value] of topLevelEntries(args)) {
    const bytes = jsonBytes(value);
    if (!withinLimit(bytes, limits.maxArgumentBytes)) {
      return deny(
        'size.argument',
        bytes === undefined
          ? `argument ${excerpt(name)} cannot be serialized as JSON`
          : `argument ${excerpt(name)} is ${bytes} bytes; at most ${limits.maxArgumentBytes} are allowed`,
      );
    }
  }
  const total = jsonBytes(args);
  if (total === undefined || !withinLimit(total, limits.maxCallBytes)) {
    return deny(
      'size.call',
      total === undefined
        ? 'the arguments cannot be serialized as JSON'
        : `the arguments are ${total} bytes in all; at most ${limits.maxCallBytes} are allowed`,
    );
  }
  return allow({ bytes: total });
}
