/**
 * @module Clean shutdown of the HTTP server that carries every front but the CLI (REST, /mcp, the
 * console: docs/architecture.md §6), as docs/operations.md "Stopping" describes it. The server
 * stops accepting; a request arriving on a connection already open is refused SHUTTING_DOWN (it
 * never runs); every standing stream and wait is ended with a close its client sees (the fronts'
 * `preClose` hooks: MCP listen streams, 2025 sessions' GET streams, calls waiting for the person
 * at the client; `onDrain`: MCP calls held for their approval's decision, answered still
 * pending); idle keep-alive connections are closed at once, and each other one after its
 * last answer (that answer says `Connection: close`; one the MCP transport writes itself is
 * followed by the idle sweep); requests in flight, pipelined ones too, may finish until the
 * deadline, when what is still open is cut. What the gate then records of a call still running
 * is the gateway's to say (its `close`).
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
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
 *
 * Only the last answer of a connection says `Connection: close`. HTTP/1.1 clients may pipeline:
 * send the next request before the answer to the one before, and Node hands the server each
 * request as it reads it, so several calls of one connection may run at once, their answers
 * queued in order. A close on an earlier answer would tell the client that the later requests
 * were not processed (RFC 9112 §9.6), and Node would end the connection after it, the later
 * answers unsent: a call that ran would go unanswered, and one still running would lose its
 * connection, and with it the drain, long before the deadline.
 */
export function refuseWhileDraining(app: FastifyInstance, onDrain: () => void): void {
  let draining = false;
  // The newest request each connection has sent so far; its answer is the connection's last.
  // Before Fastify's own listener, so that a request is known before any of its hooks runs.
  const newest = new WeakMap<Socket, IncomingMessage>();
  app.server.prependListener('request', (req: IncomingMessage) => {
    newest.set(req.socket, req);
  });
  app.addHook('preClose', async () => {
    draining = true;
    onDrain();
  });
  // Every request passes these two: callback hooks, no promise on the hot path.
  // An answer during the drain closes its connection after it, unless the client has sent
  // another request on it since: that one's answer closes it, or the idle sweep does.
  app.addHook('onSend', (req, reply, payload, done) => {
    if (draining) {
      if (newest.get(req.raw.socket) === req.raw) reply.header('connection', 'close');
      // Fastify sets close itself on a request it routes while closing.
      else if (String(reply.raw.getHeader('connection')).toLowerCase() === 'close')
        reply.raw.removeHeader('connection');
    }
    done(null, payload);
  });
  app.addHook('onRequest', (_req, _reply, done) => {
    if (!draining) return done();
    // Nothing of it runs. Refused one turn later: by then Node has read every request the client
    // sent in the same packet, so only the last of them closes the connection (onSend above),
    // and each is answered.
    setImmediate(() =>
      done(
        new ToolgateError(
          'SHUTTING_DOWN',
          'the gateway is stopping; send the request again once it answers',
          { retryAfterSeconds: RETRY_AFTER_S },
        ),
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
