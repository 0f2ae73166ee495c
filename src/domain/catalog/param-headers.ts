/**
 * @module The `x-mcp-header` declarations of a tool's input schema, and whether a 2026-07-28
 * request's `Mcp-Param-*` headers agree with the arguments they mirror (MCP 2026-07-28, "Custom
 * Headers from Tool Parameters"). A header that disagrees with the body is how a request would
 * make an intermediary (a WAF, a rate limiter, an audit tap) see one call while toolgate runs
 * another. The declarations are read once per tool version (the gate's tool cache) and compared
 * by the gate's `headers` step against the version it resolved (docs/architecture.md §3). Pure.
 */
import { decodeHeaderValue } from '../../core/index.js';

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

/** A header that is missing or disagrees, and why (MCP_HEADER_MISMATCH's details). */
export interface ParamHeaderMismatch {
  readonly header: string;
  readonly reason: string;
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
 * trusted. A declaration reached through `$ref` is checked when its header is sent. `headers`
 * holds the request's `Mcp-Param-*` headers as sent, names in lower case.
 */
export function paramHeaderMismatch(
  declarations: readonly ParamDeclaration[],
  args: unknown,
  headers: Readonly<Record<string, string>>,
): ParamHeaderMismatch | null {
  for (const d of declarations) {
    let value: unknown = args;
    for (const k of d.path) {
      value =
        value !== null && typeof value === 'object'
          ? (value as Record<string, unknown>)[k]
          : undefined;
    }
    const name = `Mcp-Param-${d.header}`;
    const key = name.toLowerCase();
    const raw = Object.hasOwn(headers, key) ? headers[key] : undefined;
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
    const decoded = decodeHeaderValue(raw);
    const equal = decoded !== undefined && agrees(decoded, value, body);
    if (!equal) return { header: name, reason: `${name} disagrees with the argument it mirrors` };
  }
  return null;
}
