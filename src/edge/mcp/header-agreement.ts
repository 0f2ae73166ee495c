/**
 * @module Header/body agreement for 2026-07-28 requests at /mcp. The revision mirrors routing
 * fields into headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`) so intermediaries can
 * act on them without reading the body. A header that disagrees with the body is how a request
 * would make an intermediary (a WAF, a rate limiter, an audit tap) see one call while toolgate
 * runs another, so every disagreement — and a missing required header — is refused (400,
 * HeaderMismatch) before anything else looks at the request. `Mcp-Param-*` headers, which mirror
 * arguments a tool's schema declares, need the tool: the front hands them to the gate as sent
 * (`mcpParamHeaders`), whose `headers` step compares them with the version it resolved
 * (docs/architecture.md §3). Pure functions: the front records and answers.
 */
import { classifyInboundRequest, PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';
import { decodeHeaderValue } from '../../core/index.js';

export interface HeaderRefusal {
  /** The header that is missing or disagrees. */
  readonly header: string;
  readonly reason: string;
}

type Headers = Record<string, string | string[] | undefined>;

function one(headers: Headers, name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  return Array.isArray(v) ? v.join(',') : v;
}

/** The body field `Mcp-Name` mirrors, per method. */
const NAME_SOURCE: Record<string, 'name' | 'uri'> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
};

/** The era of a request as the spec's versioning rules classify it, or a refusal. */
export type Classified =
  | { readonly era: 'legacy' }
  | { readonly era: 'modern'; readonly method: string; readonly params: Record<string, unknown> }
  | { readonly era: 'refused'; readonly refusal: HeaderRefusal }
  /** A 2026-07-28 request whose `_meta` envelope is missing or broken: INPUT_INVALID, its own id. */
  | { readonly era: 'invalid'; readonly message: string; readonly id: string | number | null };

/**
 * Classifies a POST body with its headers: legacy (no per-request `_meta` envelope: the session
 * protocol), modern (checked: every mirrored header present and equal), or refused.
 */
export function classify(headers: Headers, body: unknown): Classified {
  // The 2025 era's hot path: no envelope claim and no mirrored header is a session request (the
  // classifier would say so too, after validating the whole body against the protocol's schemas).
  if (!claimsEnvelope(body) && one(headers, 'mcp-method') === undefined) return { era: 'legacy' };
  const outcome = classifyInboundRequest({
    httpMethod: 'POST',
    ...optional('protocolVersionHeader', one(headers, 'mcp-protocol-version')),
    ...optional('mcpMethodHeader', one(headers, 'mcp-method')),
    ...optional('mcpNameHeader', one(headers, 'mcp-name')),
    body,
  });
  if (outcome.kind === 'legacy') return { era: 'legacy' };
  if (outcome.kind === 'reject') {
    // A header disagreeing with the body is refused here. A request that names 2026-07-28 but
    // whose envelope is missing or broken is Invalid params (the revision's rule), answered after
    // authentication; any other fault (not JSON-RPC) is answered by the session path as before.
    if (outcome.rung === 'envelope' && !outcome.cell.includes('mismatch')) {
      return { era: 'invalid', message: outcome.message, id: requestIdOf(body) };
    }
    if (!outcome.cell.includes('mismatch')) return { era: 'legacy' };
    return {
      era: 'refused',
      refusal: { header: headerNameOf(outcome.cell), reason: outcome.message },
    };
  }
  if (outcome.messageKind === 'notification') {
    return { era: 'modern', method: outcome.message.method, params: {} };
  }
  const { method } = outcome.message;
  const params = (outcome.message.params ?? {}) as Record<string, unknown>;
  const refusal = standardHeaders(headers, method, params);
  return refusal ? { era: 'refused', refusal } : { era: 'modern', method, params };
}

function requestIdOf(body: unknown): string | number | null {
  const id = (body as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/** MCP's request and notification method names, which a refusal's reason may name as they are. */
const PROTOCOL_METHODS: ReadonlySet<string> = new Set([
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'resources/subscribe',
  'resources/unsubscribe',
  'completion/complete',
  'logging/setLevel',
  'subscriptions/listen',
  'server/discover',
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/roots/list_changed',
]);

/**
 * What a refusal's reason may quote of the request as the caller sent it: every `Mcp-*` and
 * `MCP-Protocol-Version` header (decoded, and as sent), the body's method, the name or URI
 * `Mcp-Name` mirrors, and the protocol version in `_meta`. The audit hashes each where it appears.
 */
export function sentValues(headers: Headers, body: unknown): string[] {
  const out: string[] = [];
  const push = (v: string) => {
    // The protocol's own method names are its vocabulary, not anyone's data: kept readable.
    if (!PROTOCOL_METHODS.has(v)) out.push(v);
  };
  for (const [name, value] of Object.entries(headers)) {
    if (!name.toLowerCase().startsWith('mcp-') || value === undefined) continue;
    const text = Array.isArray(value) ? value.join(',') : value;
    push(text);
    const decoded = decodeHeaderValue(text);
    if (decoded !== undefined && decoded !== text) push(decoded);
  }
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    const b = body as { method?: unknown; params?: Record<string, unknown> };
    const meta = b.params?._meta;
    for (const v of [
      b.method,
      b.params?.name,
      b.params?.uri,
      meta !== null && typeof meta === 'object'
        ? (meta as Record<string, unknown>)[PROTOCOL_VERSION_META_KEY]
        : undefined,
    ]) {
      if (typeof v === 'string') push(v);
    }
  }
  return out;
}

function claimsEnvelope(body: unknown): boolean {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return false;
  const meta = (body as { params?: { _meta?: unknown } }).params?._meta;
  return meta !== null && typeof meta === 'object' && PROTOCOL_VERSION_META_KEY in meta;
}

function optional<K extends string>(key: K, value: string | undefined) {
  return (value === undefined ? {} : { [key]: value }) as Partial<Record<K, string>>;
}

function headerNameOf(cell: string): string {
  if (cell.startsWith('method')) return 'Mcp-Method';
  if (cell.startsWith('name')) return 'Mcp-Name';
  return 'MCP-Protocol-Version';
}

/** Presence of the standard headers on a modern request, and `Mcp-Name` against the body. */
function standardHeaders(
  headers: Headers,
  method: string,
  params: Record<string, unknown>,
): HeaderRefusal | null {
  if (one(headers, 'mcp-protocol-version') === undefined) {
    return { header: 'MCP-Protocol-Version', reason: 'the MCP-Protocol-Version header is missing' };
  }
  const m = one(headers, 'mcp-method');
  if (m === undefined) return { header: 'Mcp-Method', reason: 'the Mcp-Method header is missing' };
  if (m !== method) {
    return { header: 'Mcp-Method', reason: `Mcp-Method names ${m} but the body ${method}` };
  }
  const source = NAME_SOURCE[method];
  if (source === undefined) return null;
  const body = params[source];
  const header = one(headers, 'mcp-name');
  if (header === undefined) return { header: 'Mcp-Name', reason: 'the Mcp-Name header is missing' };
  const decoded = decodeHeaderValue(header);
  if (typeof body !== 'string' || decoded !== body) {
    return { header: 'Mcp-Name', reason: `Mcp-Name does not name the body's ${source}` };
  }
  return null;
}

/**
 * A 2026-07-28 tools/call's `Mcp-Param-*` headers as sent (names in lower case, values raw), for
 * the gate's `headers` step; every such request gets a record, empty when it sent none (a header
 * a declaration needs is then missing).
 */
export function paramHeadersOf(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const key = name.toLowerCase();
    if (!key.startsWith('mcp-param-') || value === undefined) continue;
    out[key] = Array.isArray(value) ? value.join(',') : value;
  }
  return out;
}
