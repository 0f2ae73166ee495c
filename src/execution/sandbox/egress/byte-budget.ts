/**
 * @module The byte budget a lease draws on (C7 "egress bytes"): the proxy asks before
 * it forwards and charges what it forwarded, so a session never moves more than its ceiling.
 */

/**
 * Shared by every lease of one session. `consume` is called only after `remaining` said there
 * was room, and synchronously, so two leases cannot both spend the last bytes.
 */
export interface ByteBudget {
  remaining(): number;
  consume(bytes: number): void;
}

/** An in-memory budget of `limit` bytes; `spent()` tells the gate what to persist. */
export function createByteBudget(limit: number): ByteBudget & { spent(): number } {
  if (!Number.isFinite(limit) && limit !== Number.POSITIVE_INFINITY) {
    throw new RangeError('a byte budget is a number of bytes');
  }
  let spent = 0;
  return {
    remaining: () => Math.max(0, limit - spent),
    consume: (bytes) => {
      spent += bytes;
    },
    spent: () => spent,
  };
}
