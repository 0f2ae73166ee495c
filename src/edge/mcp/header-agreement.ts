/**
 * @module Header/body agreement for 2026-07-28 requests at /mcp. The revision mirrors routing
 * fields into headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, and `Mcp-Param-*` for
 * arguments a tool's input schema marks with `x-mcp-header`) so intermediaries can act on them
 * without reading the body. A header that disagrees with the body is how a request would make an
 * intermediary (a WAF, a rate limiter, an audit tap) see one call while toolgate runs another, so
 * every disagreement — and a missing required header — is refused (400, HeaderMismatch) before
 * anything else looks at the request. Pure functions: the front records and answers.
 */
import { classifyInboundRequest, PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';

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
    const decoded = decodeValue(text);
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
  const decoded = decodeValue(header);
  if (typeof body !== 'string' || decoded !== body) {
    return { header: 'Mcp-Name', reason: `Mcp-Name does not name the body's ${source}` };
  }
  return null;
}

/** One `x-mcp-header` declaration: the argument path it mirrors and the header's name. */
export interface ParamDeclaration {
  readonly path: readonly string[];
  readonly header: string;
  readonly type: string | undefined;
  /**
   * Reached through a `$ref`: the revision does not make clients mirror it (such an annotation is
   * outside the `properties` chain), so a missing header is not refused, but a header that is
   * sent must agree all the same: an intermediary may act on it.
   */
  readonly viaRef: boolean;
}

/** Deepest `properties`/`$ref` chain followed; a schema deeper than this is not a tool's. */
const MAX_DECLARATION_DEPTH = 32;

/** The schema a local `$ref` (`#` or `#/…`, JSON pointer) names in `root`, or undefined. */
function resolveRef(root: unknown, ref: string): unknown {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    let token: string;
    try {
      token = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    } catch {
      return undefined;
    }
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, token)) return undefined;
    node = (node as Record<string, unknown>)[token];
  }
  return node;
}

/**
 * The `x-mcp-header` declarations of an input schema, along `properties` chains and through
 * local `$ref`s (bounded in depth; a `$ref` already on the current chain is not followed again,
 * so a recursive schema ends).
 */
export function paramDeclarations(schema: unknown): ParamDeclaration[] {
  const out: ParamDeclaration[] = [];
  const visit = (
    node: unknown,
    path: string[],
    viaRef: boolean,
    refs: ReadonlySet<string>,
  ): void => {
    if (node === null || typeof node !== 'object' || path.length > MAX_DECLARATION_DEPTH) return;
    const s = node as Record<string, unknown>;
    const name = s['x-mcp-header'];
    if (path.length > 0 && typeof name === 'string' && name.length > 0) {
      out.push({
        path,
        header: name,
        type: typeof s.type === 'string' ? s.type : undefined,
        viaRef,
      });
    }
    const ref = s.$ref;
    if (typeof ref === 'string' && !refs.has(ref) && refs.size < MAX_DECLARATION_DEPTH) {
      visit(resolveRef(schema, ref), path, true, new Set([...refs, ref]));
    }
    const props = s.properties;
    if (props !== null && typeof props === 'object') {
      for (const [k, child] of Object.entries(props)) visit(child, [...path, k], viaRef, refs);
    }
  };
  visit(schema, [], false, new Set());
  return out;
}

const SENTINEL = /^=\?base64\?(.*)\?=$/s;
/** Canonical Base64: whole quads, padding only at the end (Node's decoder would take anything). */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * A header value, its `=?base64?…?=` form decoded (UTF-8); undefined when that form is broken
 * (bad padding, a character outside the alphabet, not UTF-8): a mirror that cannot be read
 * cannot agree with the body.
 */
function decodeValue(value: string): string | undefined {
  const m = SENTINEL.exec(value);
  if (!m) return value;
  const encoded = m[1] ?? '';
  if (!BASE64.test(encoded)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(encoded, 'base64'));
  } catch {
    return undefined;
  }
}

function asHeaderString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** An integer's header form: its decimal digits, no sign but `-`, no leading zero; `.0…` allowed. */
const INTEGER_FORM = /^(-?(?:0|[1-9][0-9]*))(?:\.0+)?$/;

/**
 * Whether a decoded header value is the body value's canonical form (2026-07-28, "Custom Headers
 * from Tool Parameters": strings as they are, booleans `true`/`false`, integers in decimal; the
 * revision lets `42.0` agree with 42). Compared as text, never through `Number()`: `0x3E8`, `1e3`,
 * `+1000`, `01000` and ` 1000` are other spellings an intermediary may read differently.
 */
function agrees(decoded: string, value: unknown, canonical: string): boolean {
  if (typeof value === 'number' && Number.isInteger(value)) {
    const m = INTEGER_FORM.exec(decoded);
    return m !== null && m[1] === canonical;
  }
  return decoded === canonical;
}

/**
 * Every declared argument the body carries must ride in its `Mcp-Param-*` header with the same
 * value in its canonical form (`agrees`). A header for an argument the body does not carry (or
 * carries as no scalar) is refused: a header must mirror the body, or an intermediary acts on a
 * value toolgate never runs. An integer outside ±(2^53−1) is refused whether or not its header is
 * sent: the parsed body no longer holds the digits the client wrote, so no comparison can be
 * trusted. A declaration reached through `$ref` is checked when its header is sent.
 */
export function paramHeaders(
  declarations: readonly ParamDeclaration[],
  args: unknown,
  headers: Headers,
): HeaderRefusal | null {
  for (const d of declarations) {
    let value: unknown = args;
    for (const k of d.path) {
      value =
        value !== null && typeof value === 'object'
          ? (value as Record<string, unknown>)[k]
          : undefined;
    }
    const name = `Mcp-Param-${d.header}`;
    const raw = one(headers, name);
    if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value)) {
      return { header: name, reason: `the argument ${name} mirrors is an integer beyond 2^53` };
    }
    const body = asHeaderString(value);
    if (body === undefined) {
      if (raw === undefined) continue;
      return { header: name, reason: `${name} is sent for an argument the body does not carry` };
    }
    if (raw === undefined) {
      if (d.viaRef) continue;
      return { header: name, reason: `the ${name} header is missing` };
    }
    const decoded = decodeValue(raw);
    const equal = decoded !== undefined && agrees(decoded, value, body);
    if (!equal) return { header: name, reason: `${name} disagrees with the argument it mirrors` };
  }
  return null;
}
