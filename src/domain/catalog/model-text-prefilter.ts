/**
 * @module The cheap first look the scanner takes at a text before its rules run (C3). Most tool
 * results are plain data — JSON, numbers, ids, short strings — and the rules need words to
 * match, so a result is reduced to the prose a model could take as an instruction: the strings
 * of a JSON document (keys and values), each distinct line once, plain values left out. What is
 * left out is provably inert to every rule (a test runs every rule on each shape); what stays is
 * scanned exactly as before.
 */

/** Texts up to this length are scanned as they are: the reduction would cost more than it saves. */
export const PREFILTER_MIN_CHARS = 512;

/** JSON documents nest at most this deep before the rest is kept as raw text. */
const MAX_JSON_DEPTH = 64;

/**
 * A value with no word in it a rule could read: a number, a date or time, a UUID, a short ASCII
 * token without separators, an e-mail address. Separators (`_ . / < % & =`) are not allowed in a
 * token, so paths (`.ssh`, `id_rsa`), markup, links and encodings always reach the rules.
 */
const PLAIN_VALUE = new RegExp(
  [
    // A number: no digit run of 16 or more, which could be hex that spells text.
    String.raw`[-+]?\d{1,15}(?:[.,:]\d{1,15}){0,8}(?:[eE][-+]?\d{1,4})?`,
    String.raw`\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?`,
    String.raw`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`,
    String.raw`[A-Za-z0-9]{1,15}`,
    String.raw`[A-Za-z0-9+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){1,8}`,
    'true|false|null',
  ]
    .map((s) => `(?:${s})`)
    .join('|')
    .replace(/^/, '^(?:')
    .concat(')$'),
);

/** Is `s` a value no rule can read anything into (and not empty of meaning by accident)? */
export function isPlainValue(s: string): boolean {
  if (s.length <= 80 && PLAIN_VALUE.test(s)) return true;
  // No letter at all (a row of numbers, a rule of dashes) and nothing that decodes: the rules
  // read words; hex runs (digits only can spell text) and comment openers are kept.
  return !LETTER.test(s) && !LONG_DIGIT_RUN.test(s) && !s.includes('<!--');
}

const LETTER = /\p{L}/u;
const LONG_DIGIT_RUN = /\d{16}/;

/** Keys and string values of a parsed JSON document, in document order, plain values skipped. */
function jsonStrings(root: unknown, out: string[]): void {
  const stack: { value: unknown; depth: number }[] = [{ value: root, depth: 0 }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { value, depth } = item;
    if (typeof value === 'string') {
      if (!isPlainValue(value)) out.push(value);
    } else if (value !== null && typeof value === 'object') {
      if (depth >= MAX_JSON_DEPTH) {
        out.push(JSON.stringify(value));
        continue;
      }
      const children: unknown[] = [];
      if (Array.isArray(value)) children.push(...value);
      else
        for (const [k, v] of Object.entries(value)) {
          if (!isPlainValue(k)) out.push(k);
          children.push(v);
        }
      // Pushed in reverse so they pop in document order.
      for (let i = children.length - 1; i >= 0; i--) {
        stack.push({ value: children[i], depth: depth + 1 });
      }
    }
  }
}

function parseJson(text: string): unknown {
  const first = text.trimStart()[0];
  if (first !== '{' && first !== '[') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * What the rules need to see of `text`: the text itself when it is short; otherwise the distinct
 * non-plain strings of a JSON document, or the distinct lines of any other text, joined by line
 * breaks. Never drops a line or string that is not a plain value, so nothing a rule would flag
 * is lost; an instruction is not made harmless by repeating it.
 */
export function scanReading(text: string): string {
  if (text.length <= PREFILTER_MIN_CHARS) return text;
  const parsed = parseJson(text);
  const pieces: string[] = [];
  if (parsed !== undefined) jsonStrings(parsed, pieces);
  else pieces.push(...text.split('\n'));
  const seen = new Set<string>();
  const kept: string[] = [];
  for (const piece of pieces) {
    const key = piece.trim();
    if (key === '' || seen.has(key) || isPlainValue(key)) continue;
    seen.add(key);
    kept.push(piece);
  }
  return kept.join('\n');
}
