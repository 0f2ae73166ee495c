/**
 * @module The path of an `http` runtime (C6 "the tool takes a structured path and the
 * server assembles the URL"): `{name}` placeholders filled from arguments, each value one
 * percent-encoded segment, so an argument can never add a segment, climb with `..`, start a
 * query or fragment, or name a scheme or host.
 */

export type TemplateResult =
  | { readonly ok: true; readonly path: string; readonly used: ReadonlySet<string> }
  | { readonly ok: false; readonly rule: string; readonly message: string };

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const MAX_SEGMENT_CHARS = 1_024;

function fail(rule: string, message: string): TemplateResult {
  return { ok: false, rule, message };
}

/** One argument as one path segment, or a reason it cannot be one. */
function segment(name: string, value: unknown): string | { rule: string; message: string } {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'number' && Number.isFinite(value)) text = String(value);
  else if (typeof value === 'boolean') text = String(value);
  else if (value === undefined) {
    return { rule: 'http.path_argument', message: `path argument "${name}" is missing` };
  } else {
    return {
      rule: 'http.path_argument',
      message: `path argument "${name}" must be a string, a finite number or a boolean`,
    };
  }
  if (text.length === 0 || text === '.' || text === '..') {
    return {
      rule: 'http.path_argument',
      message: `path argument "${name}" may not be empty, "." or ".."`,
    };
  }
  if (text.length > MAX_SEGMENT_CHARS) {
    return { rule: 'http.path_argument', message: `path argument "${name}" is too long` };
  }
  // encodeURIComponent escapes "/", "?", "#", "%", ":" and "@"; it throws on lone surrogates.
  try {
    return encodeURIComponent(text);
  } catch {
    return { rule: 'http.path_argument', message: `path argument "${name}" is not valid text` };
  }
}

/**
 * Fills `template` (from the tool definition, trusted but still checked) with `args`. Returns
 * the path and the names it used; the caller sends the other arguments as query or body.
 */
export function fillPathTemplate(
  template: string,
  args: Readonly<Record<string, unknown>>,
): TemplateResult {
  if (!template.startsWith('/')) return fail('http.path_template', 'the path must start with /');
  let out = '';
  const used = new Set<string>();
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf('{', i);
    const literal = open === -1 ? template.slice(i) : template.slice(i, open);
    if (/[?#}\\\s]/.test(literal) || literal.includes('/../') || literal.endsWith('/..')) {
      return fail('http.path_template', 'the path template has a character it may not hold');
    }
    out += literal;
    if (open === -1) break;
    const close = template.indexOf('}', open);
    if (close === -1) return fail('http.path_template', 'the path template has an unclosed {');
    const name = template.slice(open + 1, close);
    if (!NAME.test(name)) return fail('http.path_template', 'a placeholder name is not valid');
    const seg = segment(name, args[name]);
    if (typeof seg !== 'string') return fail(seg.rule, seg.message);
    out += seg;
    used.add(name);
    i = close + 1;
  }
  return { ok: true, path: out, used };
}
