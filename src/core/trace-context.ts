/**
 * @module The W3C trace context a caller sends (`traceparent`, in an HTTP header or in MCP
 * `params._meta`) and the request id (`X-Request-Id`), read once at the edge into one shape the
 * gate and the logs share (docs/operations.md, "Tracing"). Pure: no I/O, no tracing SDK. The
 * caller's `tracestate` is read but never passed on (it is the caller's free text).
 */

/** A parsed `traceparent` (version 00): ids in lower-case hex, as W3C Trace Context defines them. */
export interface TraceParent {
  readonly traceId: string;
  readonly spanId: string;
  /** The sampled flag of the caller's trace flags. */
  readonly sampled: boolean;
}

/**
 * Where a call came from, for its trace: the caller's context (or none), the front and its
 * transport, and the protocol's own ids. Never arguments, never a credential.
 */
export interface TraceOrigin {
  readonly parent: TraceParent | null;
  /** `mcp` (either protocol era) or `rest`. */
  readonly front: 'mcp' | 'rest';
  /** OpenTelemetry `network.transport`: `tcp` over HTTP, `pipe` over stdio. */
  readonly transport: 'tcp' | 'pipe';
  /** The MCP protocol revision the request speaks, when the front knows it. */
  readonly protocolVersion?: string;
  /** The JSON-RPC request id (MCP), as sent. */
  readonly jsonrpcId?: string | number;
  /** The request id of the HTTP request that carried the call (request-id.ts in the REST front). */
  readonly requestId?: string;
}

const HEX = '0123456789abcdef';

function isLowerHex(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (!HEX.includes(s.charAt(i))) return false;
  return true;
}

/**
 * A `traceparent` value parsed exactly (version `00`: 2-32-16-2 lower-case hex, dash separated;
 * an all-zero trace or span id is invalid); null for anything else, which the caller then is
 * treated as having sent no context (a new trace starts). Never throws.
 */
export function parseTraceparent(value: unknown): TraceParent | null {
  if (typeof value !== 'string' || value.length !== 55) return null;
  const parts = value.split('-');
  if (parts.length !== 4) return null;
  const [version, traceId, spanId, flags] = parts as [string, string, string, string];
  if (version !== '00' || traceId.length !== 32 || spanId.length !== 16 || flags.length !== 2) {
    return null;
  }
  if (!isLowerHex(version + traceId + spanId + flags)) return null;
  if (traceId === '0'.repeat(32) || spanId === '0'.repeat(16)) return null;
  return { traceId, spanId, sampled: (Number.parseInt(flags, 16) & 1) === 1 };
}

/** The `traceparent` header value of a context (version 00). */
export function formatTraceparent(traceId: string, spanId: string, sampled: boolean): string {
  return `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`;
}

/**
 * The caller's context of an MCP request: `params._meta.traceparent` first (it names this very
 * message; the HTTP header covers the whole HTTP request), else the HTTP header. Never throws.
 */
export function traceParentOf(
  meta: Readonly<Record<string, unknown>> | undefined,
  header: string | readonly string[] | undefined,
): TraceParent | null {
  const fromMeta = meta === undefined ? null : parseTraceparent(meta.traceparent);
  if (fromMeta) return fromMeta;
  return parseTraceparent(typeof header === 'string' ? header : undefined);
}

/** The longest `X-Request-Id` kept as sent. */
export const REQUEST_ID_MAX = 128;

/**
 * The request id to use for an HTTP request: the `X-Request-Id` the client sent when it is one
 * value of 1–128 printable ASCII characters without spaces (it is written into logs and echoed in
 * a header), else the trace id of its `traceparent`, else `fallback` (a fresh id). Never throws.
 */
export function requestIdOf(
  header: string | readonly string[] | undefined,
  traceparent: string | readonly string[] | undefined,
  fallback: () => string,
): string {
  if (typeof header === 'string' && header.length > 0 && header.length <= REQUEST_ID_MAX) {
    let printable = true;
    for (let i = 0; i < header.length; i++) {
      const c = header.charCodeAt(i);
      if (c < 0x21 || c > 0x7e) {
        printable = false;
        break;
      }
    }
    if (printable) return header;
  }
  const parent = parseTraceparent(typeof traceparent === 'string' ? traceparent : undefined);
  return parent ? parent.traceId : fallback();
}
