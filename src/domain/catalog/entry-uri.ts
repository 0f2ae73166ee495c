/**
 * @module URIs of governed resource templates (RFC 6570, as MCP resource templates use them): the
 * variables a template names (the entry's arguments, checked by the gate like any tool's), the
 * variables a requested URI binds, and the URI a set of checked arguments expands to (what the
 * upstream is asked for: never the agent's string itself).
 */
import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';

/** Templates parsed once each (the same few templates serve every read). */
const parsed = new Map<string, UriTemplate | null>();
const MAX_PARSED = 10_000;

function template(source: string): UriTemplate | null {
  let t = parsed.get(source);
  if (t === undefined) {
    try {
      t = new UriTemplate(source);
    } catch {
      t = null;
    }
    if (parsed.size >= MAX_PARSED) parsed.clear();
    parsed.set(source, t);
  }
  return t;
}

/** The variable names of a template, in order, each once; empty when it does not parse. */
export function templateVariables(source: string): string[] {
  return [...new Set(template(source)?.variableNames ?? [])];
}

/**
 * The variables `uri` binds in the template, or null when it does not match. A list value (an
 * exploded variable) is refused: every argument of an entry is one string.
 */
export function matchTemplate(source: string, uri: string): Record<string, string> | null {
  const vars = template(source)?.match(uri);
  if (!vars) return null;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(vars)) {
    if (typeof v !== 'string') return null;
    out[k] = v;
  }
  return out;
}

/** The URI the template gives for these (checked) arguments; null when it does not parse. */
export function expandTemplate(
  source: string,
  args: Readonly<Record<string, unknown>>,
): string | null {
  const t = template(source);
  if (!t) return null;
  const vars: Record<string, string> = {};
  for (const [k, v] of Object.entries(args)) if (typeof v === 'string') vars[k] = v;
  return t.expand(vars);
}
