/**
 * @module The keep-alive hint on /mcp responses. The SDK's transport writes its event-stream
 * answers with its own `Connection: keep-alive`, and Node then leaves out `Keep-Alive: timeout=N`,
 * so clients fall back to their own idle timeout (4 s in undici, Node's fetch): an agent that
 * thinks longer than that between calls opens a new TCP connection for the next one. On a
 * saturated gateway a new connection waits unseen in the kernel's listen queue (Node accepts one
 * per event-loop turn), where neither admission control nor the event-loop watch can answer it —
 * calls waited there up to 20 s. Telling clients how long the server keeps an idle connection lets
 * them reuse it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Sets the hint Node would send itself; never on a connection the client asked to close. */
export function hintKeepAlive(
  req: IncomingMessage,
  res: ServerResponse,
  keepAliveTimeoutMs: number,
): void {
  const seconds = Math.floor(keepAliveTimeoutMs / 1000);
  if (seconds < 1 || req.httpVersion !== '1.1' || res.headersSent) return;
  const connection = String(req.headers.connection ?? '').toLowerCase();
  if (connection.split(',').some((t) => t.trim() === 'close')) return;
  res.setHeader('connection', 'keep-alive');
  res.setHeader('keep-alive', `timeout=${seconds}`);
}
