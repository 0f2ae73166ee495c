/**
 * @module Closing the parts of a gateway one after another (docs/operations.md, "Stopping"): the
 * composition root lists them in order (src/host/toolgate.ts) and decides nothing itself.
 */

/**
 * Closes in the order given, each after the one before it finished. Each closer runs even when one
 * before it failed: a part that cannot close must not leave the audit log unsynced or the store
 * open. The first failure is thrown after the last closer ran.
 */
export function closeInOrder(closers: readonly (() => unknown)[]): () => Promise<void> {
  return async () => {
    let failure: { error: unknown } | null = null;
    for (const close of closers) {
      try {
        await close();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  };
}
