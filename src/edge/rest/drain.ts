/**
 * @module Clean shutdown of the HTTP server that carries every front but the CLI (REST, /mcp, the
 * console: docs/architecture.md §6), as docs/operations.md "Stopping" describes it. The server
 * stops accepting; a request arriving on a connection already open is refused SHUTTING_DOWN with
 * `Connection: close`; every standing stream and wait is ended with a close its client sees (the
 * fronts' `preClose` hooks: MCP listen streams, 2025 sessions' GET streams, calls waiting for the
 * person at the client); idle keep-alive connections are closed at once, and each one as it turns
 * idle; requests in flight may finish until the deadline, when what is still open is cut. What
 * the gate then records of a call still running is the gateway's to say (its `close`).
 */
import type { FastifyInstance } from 'fastify';
import { ToolgateError } from '../../core/index.js';

/** What a refused request is told to wait: a restart, or another replica taking over. */
const RETRY_AFTER_S = 5;
/** How often a draining server closes the connections that have turned idle since. */
const IDLE_SWEEP_MS = 50;

/**
 * From the moment the server starts closing, every request is refused before admission and
 * authentication (probes too: a stopping gateway is not ready). Register before any other
 * `onRequest` hook (and with Fastify's own `return503OnClosing` off, whose body is not ours).
 * `onDrain` runs once as the drain begins, before the listener closes.
 */
export function refuseWhileDraining(app: FastifyInstance, onDrain: () => void): void {
  let draining = false;
  app.addHook('preClose', async () => {
    draining = true;
    onDrain();
  });
  // Every request passes these two: callback hooks, no promise on the hot path.
  // A call in flight is answered, and its connection closed after it rather than kept idle.
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (draining) reply.header('connection', 'close');
    done(null, payload);
  });
  app.addHook('onRequest', (_req, reply, done) => {
    if (!draining) return done();
    // The connection is not kept for another request: the next one goes to a live gateway.
    reply.header('connection', 'close');
    done(
      new ToolgateError(
        'SHUTTING_DOWN',
        'the gateway is stopping; send the request again once it answers',
        { retryAfterSeconds: RETRY_AFTER_S },
      ),
    );
  });
}

/**
 * Drains and closes `app`, its `onClose` hooks included. Resolves once every connection has
 * closed, at the latest when `deadlineMs` has passed and the connections still open (calls in
 * flight, clients that never finished a request) are cut: `cut` says whether any were. Never
 * rejects: a failing hook must not keep a stopping process.
 */
export async function drainServer(
  app: FastifyInstance,
  deadlineMs: number,
): Promise<{ readonly cut: boolean }> {
  const server = app.server;
  // Node closes the connections idle when the listener closes; these turn idle later (a response
  // finished), and a keep-alive timeout would hold each of them for a minute.
  const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
  let cut = false;
  const deadline = setTimeout(() => {
    cut = true;
    server.closeAllConnections();
  }, deadlineMs);
  try {
    await app.close();
  } catch (err) {
    app.log.error({ err }, 'closing the HTTP server failed');
  } finally {
    clearInterval(sweep);
    clearTimeout(deadline);
  }
  return { cut };
}
