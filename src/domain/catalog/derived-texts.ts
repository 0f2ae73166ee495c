/**
 * @module Readings of a text that a model makes and a pattern does not: letters spaced apart,
 * base64, hex or percent-encoded runs, and the words of an identifier. The scanner runs its rules
 * on each reading too, so an instruction is caught however it is spelled.
 */

/** What the scanner calls each reading in its findings ("inside letter-spaced text"). */
export type DerivedKind =
  | 'letter-spaced'
  | 'base64'
  | 'hex'
  | 'percent'
  | 'form-encoded'
  | 'html-entities'
  | 'identifier';

export interface DerivedText {
  readonly kind: DerivedKind;
  readonly text: string;
}

const SEP = String.raw`[\s._*·|/\\-]`;
/** At least four single letters, each set apart from the next by one to three separators. */
const LETTER_RUN = new RegExp(
  String.raw`(?<![\p{L}\p{N}])\p{L}(?![\p{L}\p{N}])(?:${SEP}{1,3}\p{L}(?![\p{L}\p{N}])){3,}`,
  'gu',
);
const WIDE_GAP = new RegExp(`${SEP}{2,}`, 'gu');
const NARROW_GAP = new RegExp(`${SEP}`, 'gu');

/**
 * "i g n o r e  p r e v i o u s" reads as "ignore previous": within a run, one separator joins
 * letters and a wider gap separates words. Null when the text has no such run.
 */
export function letterSpacedText(raw: string): string | null {
  let found = false;
  const text = raw.replace(LETTER_RUN, (run) => {
    found = true;
    return run.replace(WIDE_GAP, '\u0000').replace(NARROW_GAP, '').replaceAll('\u0000', ' ');
  });
  return found ? text : null;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });
const READABLE = /[\p{L}\p{N}\p{P}\p{S}\p{Zs}\t\n\r]/u;

/**
 * The bytes as text when they read as words: valid UTF-8, nearly all printable, with a space.
 * Random ids, hashes and keys decode to noise and are left alone.
 */
function readable(bytes: Uint8Array): string | null {
  if (bytes.length < 8) return null;
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    return null;
  }
  // One encoding inside another (base64 of hex, of base64): kept so the scanner decodes it again.
  if (NESTED_RUN.test(text)) return text;
  const chars = Array.from(text);
  const printable = chars.filter((c) => READABLE.test(c)).length;
  return printable >= chars.length * 0.9 && /\s/.test(text) ? text : null;
}

/** A whole decoded text that is itself one base64 or hex run. */
const NESTED_RUN = /^(?:0x)?[A-Za-z0-9+/_-]{16,}={0,2}$/;
const HEX_RUN = /(?<![0-9a-z])(?:0x)?((?:[0-9a-f]{2}){8,})(?![0-9a-z])/gi;
const ESCAPED_HEX_RUN = /(?:\\x[0-9a-f]{2}){8,}/gi;
const PERCENT_SEQUENCE = /(?:%[0-9a-f]{2})+/gi;
/** Standard and URL-safe alphabets; 16 characters at least (12 bytes), padding optional. */
const BASE64_RUN = /(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2}(?![A-Za-z0-9+/=_-])/g;

/**
 * Bounds on decoding, so a text built of encoded runs costs what a plain one does: at most this
 * many candidate runs per encoding are decoded, each at most this long (longer runs are decoded
 * up to the cap; a payload worth hiding is short).
 */
export const MAX_DECODE_CANDIDATES = 16;
export const MAX_DECODE_RUN_CHARS = 8_192;

/** The first `MAX_DECODE_CANDIDATES` matches of `re`, each cut to `MAX_DECODE_RUN_CHARS`. */
function candidates(raw: string, re: RegExp, group = 0): string[] {
  const out: string[] = [];
  for (const m of raw.matchAll(re)) {
    if (out.length >= MAX_DECODE_CANDIDATES) break;
    out.push((m[group] ?? '').slice(0, MAX_DECODE_RUN_CHARS));
  }
  return out;
}

/** Every encoded run in `raw` that decodes to readable text, grouped by encoding. */
export function decodedTexts(raw: string): DerivedText[] {
  const out: DerivedText[] = [];
  const hex: string[] = [];
  for (const run of candidates(raw, HEX_RUN, 1)) {
    const text = readable(Buffer.from(run.length % 2 === 0 ? run : run.slice(0, -1), 'hex'));
    if (text) hex.push(text);
  }
  for (const run of candidates(raw, ESCAPED_HEX_RUN)) {
    const text = readable(Buffer.from(run.replace(/\\x/gi, ''), 'hex'));
    if (text) hex.push(text);
  }
  if (hex.length > 0) out.push({ kind: 'hex', text: hex.join('\n') });

  const base64: string[] = [];
  for (const run of candidates(raw, BASE64_RUN)) {
    // A run of hex digits is hex (above); base64 would only read noise into it.
    if (/^[0-9a-f]+$/i.test(run)) continue;
    const text = readable(Buffer.from(run, 'base64'));
    if (text) base64.push(text);
  }
  if (base64.length > 0) out.push({ kind: 'base64', text: base64.join('\n') });

  // Three escapes at least: one `%20` in a URL is ordinary, a sentence of them is not.
  if ((raw.match(PERCENT_SEQUENCE) ?? []).join('').length >= 9) {
    const text = raw.replace(PERCENT_SEQUENCE, (seq) => {
      try {
        return decodeURIComponent(seq);
      } catch {
        return seq;
      }
    });
    if (text !== raw) out.push({ kind: 'percent', text });
  }

  // A form-encoded query spells its spaces `+`: "q=ignore+all+previous+instructions".
  const plus = candidates(raw, PLUS_RUN).map((run) => run.replaceAll('+', ' '));
  if (plus.length > 0) out.push({ kind: 'form-encoded', text: plus.join('\n') });

  // Character references (&#105;&#103; &#x6e; &lt;) read as the characters they stand for.
  if ((raw.match(ENTITY) ?? []).length >= 4) {
    const text = raw.replace(ENTITY, (ref: string) => decodeEntity(ref) ?? ref);
    if (text !== raw) out.push({ kind: 'html-entities', text });
  }
  return out;
}

/** Four words at least joined by `+` (a form-encoded phrase), each word bounded. */
const PLUS_RUN = /(?<![\p{L}\p{N}+])\p{L}[\p{L}\p{N}'%-]{0,40}(?:\+[\p{L}\p{N}'%-]{1,40}){3,}/gu;
const ENTITY = /&(?:#\d{1,7}|#x[0-9a-f]{1,6}|[a-z]{2,8});/gi;
const NAMED_ENTITIES: Readonly<Record<string, string>> = {
  lt: '<',
  gt: '>',
  amp: '&',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  colon: ':',
  sol: '/',
  period: '.',
  comma: ',',
  lpar: '(',
  rpar: ')',
  excl: '!',
  quest: '?',
  equals: '=',
  num: '#',
  newline: '\n',
};

function decodeEntity(ref: string): string | null {
  const body = ref.slice(1, -1).toLowerCase();
  if (body.startsWith('#')) {
    const cp = body.startsWith('#x') ? Number.parseInt(body.slice(2), 16) : Number(body.slice(1));
    return Number.isInteger(cp) && cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : null;
  }
  return NAMED_ENTITIES[body] ?? null;
}

/**
 * The words of one identifier ("ignore_previous_instructions", "ignorePreviousInstructions"),
 * for keys and single-token values: `_` is a word character to the rules, so they never see
 * the words. Null when `raw` is not a joined identifier.
 */
export function identifierWords(raw: string): string | null {
  if (/\s/.test(raw) || !/[_.:-]|\p{Ll}\p{Lu}/u.test(raw)) return null;
  return raw
    .replace(/(\p{Ll}|\p{N})(\p{Lu})/gu, '$1 $2')
    .replace(/[_.:-]+/g, ' ')
    .trim();
}
