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

/** Escapes of the characters that delimit a URI's parts: `/`, `\\`, `?`, `#`. */
const DELIMITER_ESCAPE_RE = /%(?:2f|5c|3f|23)/i;
const ESCAPE_RE = /%[0-9a-f]{2}/i;
/**
 * Control and format characters, the other default ignorables (U+034F, variation selectors:
 * UTS #46 maps them to nothing) and the ideographic full stops IDNA reads as `.`.
 */
const CONTROL_OR_FORMAT_RE = /[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\u3002\uff61]/u;

/**
 * The value a variable's matched text encodes (expansion percent-encodes it, so the match decodes
 * it: `a%40b` is `a@b`), or null when that value could reach something other than what it says:
 * an escaped `/`, `\\`, `?` or `#` (it would leave the template's segment for an upstream that
 * decodes first), an escape left after decoding (double encoding: `%2540`), a control, format or
 * other default-ignorable character, an ideographic full stop, a character NFKC would change, or
 * escapes that are not UTF-8.
 */
function variableValue(matched: string): string | null {
  if (!ESCAPE_RE.test(matched)) return CONTROL_OR_FORMAT_RE.test(matched) ? null : matched;
  if (DELIMITER_ESCAPE_RE.test(matched)) return null;
  let value: string;
  try {
    value = decodeURIComponent(matched);
  } catch {
    return null;
  }
  if (ESCAPE_RE.test(value) || CONTROL_OR_FORMAT_RE.test(value)) return null;
  return value.normalize('NFKC') === value ? value : null;
}

/**
 * The variables `uri` binds in the template, each the value its text encodes, or null when it
 * does not match or a value is refused (variableValue). A list value (an exploded variable) is
 * refused: every argument of an entry is one string. The caller still checks that the values
 * expand back to exactly `uri` (only the expansion's own spelling of a value is its match).
 */
export function matchTemplate(source: string, uri: string): Record<string, string> | null {
  const vars = template(source)?.match(uri);
  if (!vars) return null;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(vars)) {
    if (typeof v !== 'string') return null;
    const value = variableValue(v);
    if (value === null) return null;
    out[k] = value;
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
