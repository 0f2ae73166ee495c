/**
 * @module The egress bridge started inside a sandbox before the tool: socat listens on
 * 127.0.0.1:3128 (loopback of the sandbox's own network namespace) and forwards every connection
 * to the egress proxy's Unix socket bound in at /run/toolgate/egress.sock. The tool's argv is
 * passed as positional parameters, so nothing is ever interpolated into the script.
 */
import { EGRESS_SOCKET_PATH } from './run-spec.js';

const BRIDGE_SCRIPT = [
  `socat TCP-LISTEN:3128,bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${EGRESS_SOCKET_PATH} </dev/null >/dev/null 2>&1 &`,
  // Wait (≤ 1 s) until the listener is up so the tool's first request cannot race it.
  'i=0',
  "while [ $i -lt 200 ] && ! grep -q ':0C38 00000000:0000 0A' /proc/net/tcp 2>/dev/null; do sleep 0.005; i=$((i+1)); done",
  'exec "$@"',
].join('\n');

/** Wraps an argv so the bridge runs first; returns the argv unchanged without egress. */
export function withEgressBridge(argv: readonly string[], egress: boolean): string[] {
  return egress ? ['/bin/sh', '-c', BRIDGE_SCRIPT, 'toolgate-egress', ...argv] : [...argv];
}
