/**
 * @module How `serve` tells of failures in work nobody waits on (docs/architecture.md §5, "The
 * audit log across replicas"): an integration of staged audit records that fails rolls back and
 * is tried again a few times a second, so a failure that repeats would fill the log. Each failure
 * is logged when it differs from the last one logged, or when a minute has passed since, with how
 * many times it happened in between; before the server's logger exists, on stderr.
 */
import type { FastifyBaseLogger } from 'fastify';

/** The longest a repeated failure goes unlogged. */
export const REPEAT_LOG_MS = 60_000;

export function backgroundErrorLog(
  what: string,
  logger: () => FastifyBaseLogger | null,
  now: () => number = Date.now,
): (err: unknown) => void {
  let last: string | null = null;
  let loggedAt = 0;
  let repeated = 0;
  return (err) => {
    const text = err instanceof Error ? err.message : String(err);
    const t = now();
    if (text === last && t - loggedAt < REPEAT_LOG_MS) {
      repeated += 1;
      return;
    }
    const again = text === last ? repeated : 0;
    last = text;
    loggedAt = t;
    repeated = 0;
    const log = logger();
    if (log) log.error({ err, ...(again > 0 ? { repeated: again } : {}) }, what);
    else
      process.stderr.write(
        `toolgate: ${what}: ${text}${again > 0 ? ` (${again} more times since)` : ''}\n`,
      );
  };
}
