/**
 * @module How `toolgate serve` stops (docs/operations.md "Stopping"): SIGTERM or SIGINT drains the
 * HTTP server within the shutdown deadline (src/edge/rest/drain.ts), then closes the gateway —
 * the calls still running recorded as interrupted, the audit log flushed and synced, the store
 * closed — and exits 0. A second signal during the drain exits at once, non-zero.
 */
import { constants } from 'node:os';
import type { FastifyInstance } from 'fastify';
import { drainServer } from '../rest/index.js';

/** Beyond the deadline, how long closing the gateway may take before the process gives up. */
const CLOSE_GRACE_MS = 10_000;

/**
 * Calls `stop` on the first SIGTERM or SIGINT. A second one while it runs exits the process at
 * once with 128 + the signal's number (130 for SIGINT, 143 for SIGTERM), as a shell reports a
 * process the signal killed: the drain is not finished, and calls still running keep only their
 * pre records (outcome unknown, as after a crash).
 */
export function onStopSignals(stop: (signal: NodeJS.Signals) => Promise<void>): void {
  let stopping = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) {
        process.stderr.write(`toolgate: ${signal} again, exiting without finishing the drain\n`);
        process.exit(128 + constants.signals[signal]);
      }
      stopping = true;
      void stop(signal);
    });
  }
}

/**
 * Drains `app` within `deadlineMs`, closes the gateway, and exits: 0 when everything closed, 1
 * when closing failed or hung past the deadline by CLOSE_GRACE_MS. Never returns.
 */
export async function stopGateway(
  app: FastifyInstance | null,
  gateway: { close(): Promise<void> } | null,
  deadlineMs: number,
): Promise<never> {
  const hung = setTimeout(() => {
    process.stderr.write('toolgate: closing the gateway hung; exiting\n');
    process.exit(1);
  }, deadlineMs + CLOSE_GRACE_MS);
  hung.unref();
  let code = 0;
  try {
    const drained = app ? await drainServer(app, deadlineMs) : { cut: false };
    if (drained.cut) {
      process.stdout.write(
        'toolgate: the shutdown deadline passed; connections still open were cut, calls still running are recorded as interrupted\n',
      );
    }
    await gateway?.close();
  } catch (err) {
    process.stderr.write(`toolgate: closing failed: ${err instanceof Error ? err.message : err}\n`);
    code = 1;
  }
  process.exit(code);
}
