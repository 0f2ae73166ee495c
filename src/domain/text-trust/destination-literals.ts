/**
 * @module Destination-like literals in text: e-mail addresses, URLs and hosts, IBANs and account
 * numbers, phone numbers, chat handles and channel ids — the values an attacker's text would like
 * a model to send, pay or post to. Each is normalised (lower-case e-mails, hosts and handles,
 * compact upper-case IBANs, digits-only phones and accounts, WHATWG-serialised URLs) so that the
 * same destination spelled differently is one value, and is kept only as the SHA-256 of
 * `kind:value`: the values are personal data, the hash is enough to recognise them again.
 *
 * Results (untrusted ones, docs/architecture.md §3, step `audit-post`) are read with `destinationLiteralsOf`;
 * a later call's arguments with `argumentLiteralsOf`, which also takes each whole string as a
 * candidate of every kind its shape allows (an IBAN typed in lower case, a channel without `#`).
 * Every pattern is linear; matches are checked by code (the IBAN's mod-97 via findPersonalData).
 *
 * Both sides read a string through the same `canonicalText` (NFKC, ideographic full stops as
 * `.`, format characters removed, every run of Unicode spaces, tabs and line breaks one ASCII
 * space, every script's digits ASCII); when it carries percent-escapes, its decoded form too
 * (a `mailto:evil%40host` is the address); and when it spells separators out (`&#64;`,
 * `\u0040`, `(at)`, `ben at customer dot example`), that reading too. Object keys are read
 * exactly like values. A phone is
 * recorded as its digits and, when longer, its last ten (the national number without the country
 * code or trunk prefix), so `+1 (415) 555-0199`, `(415) 555-0199` and `+14155550199` meet.
 */
import { createHash } from 'node:crypto';
import { findPersonalData, ibanChecks } from '../../core/personal-data.js';

export type DestinationKind =
  | 'email'
  | 'url'
  | 'host'
  | 'iban'
  | 'account'
  | 'phone'
  | 'handle'
  | 'channel';

export interface DestinationLiteral {
  readonly kind: DestinationKind;
  /** SHA-256 (hex) of `kind:normalised value`; the value itself is never kept. */
  readonly hash: string;
  /** JSON pointer of the string it was found in. */
  readonly pointer: string;
}

/**
 * Most literals recorded from one result, and most looked up for one call's arguments. Going over
 * either is never silent (`LiteralScan.complete` false): the gate escalates instead (provenance.ts).
 */
export const MAX_LITERALS_PER_RESULT = 1000;
export const MAX_LITERALS_PER_ARGUMENTS = 200;

/** What one scan found, and whether that is all there was (false: it stopped at its bound). */
export interface LiteralScan {
  readonly literals: readonly DestinationLiteral[];
  readonly complete: boolean;
}
/** Strings longer than this are not read whole as one candidate (they still are scanned). */
const MAX_WHOLE_CHARS = 256;
/** Deepest nesting read; anything deeper makes the scan incomplete (fail closed). */
const MAX_DEPTH = 32;

/**
 * Unicode format characters (zero-width, bidi controls, soft hyphen) and the other default
 * ignorables (U+034F, variation selectors; UTS #46 maps them to nothing): never part of a value.
 */
const FORMAT_RE = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/gu;
/** Runs of Unicode space separators, line breaks and tabs: read as one ASCII space. */
const SPACE_RE = /[\p{Zs}\t\n\v\f\r\u0085\u2028\u2029]+/gu;
/**
 * Full stops that IDNA (UTS #46) and the WHATWG URL parser read as a label separator: the
 * ideographic U+3002 (NFKC maps the halfwidth U+FF61 to it, and the fullwidth U+FF0E to `.`).
 */
const LABEL_DOT_RE = /[\u3002\uff61]/g;
/** Decimal digits of any script that NFKC leaves alone (Arabic-Indic, Devanagari, …). */
const OTHER_DIGIT_RE = /(?![0-9])\p{Nd}/gu;
const PERCENT_RE = /%[0-9a-f]{2}/i;
/** International phones once brackets are spaces: `+`, then 7 to 15 digits, single separators. */
const PHONE_LOOSE_RE = /\+[1-9](?:[ ./-]?\d){6,14}\b/g;
/** IBAN-shaped once `.`, `-` and `/` between characters are spaces (mod-97 checked by code). */
const IBAN_LOOSE_RE = /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b/g;
/** North American phones once `_`, `,` and `/` between digits are `-` (`415_555_0199`). */
const PHONE_NANP_LOOSE_RE = /(?<!\d)\d{3}[.-]\d{3}[.-]\d{4}(?!\d)/g;
/**
 * Between two digits (or IBAN characters), a run of group separators, spaces around them allowed:
 * any dash or hyphen (`\p{Pd}`: en dash, U+2011, minus U+2212 too), `_ , . / | :`, doubled or not.
 */
const GROUP_SEPARATOR_RE = /(?<=[A-Za-z0-9]) ?(?:[-_,./|:\p{Pd}\u2212] ?){1,3}(?=[A-Za-z0-9])/gu;
/**
 * The international prefix `00` written for `+` (`00 1 415 …`, `0044 20 …`), never after another
 * digit group (the `0044` inside `DE89 3704 0044 …`).
 */
const DOUBLE_ZERO_PREFIX_RE = /(?<![\d.,+](?: ?- ?| )?)\b00 ?(?=[1-9])/g;
/**
 * A national phone regrouped by spaces or hyphens (`4155 550 199`, `415-555-01-99`,
 * `(415) 555 0199`): 3 to 5 groups of 2 to 4 digits, the whole digit run (checked by code: 10 or
 * 11 digits, and not thousands grouping such as `4 155 550 199`).
 */
const PHONE_REGROUPED_RE =
  /(?<!\d(?: ?- ?| )?)\d{2,4}(?:(?: ?- ?| )\d{2,4}){2,4}(?!(?: ?- ?| )?\d)/g;
/** A phone's national part: this many trailing digits. */
const NATIONAL_DIGITS = 10;

const URL_RE = /\b(?:https?|wss?|ftp):\/\/[^\s<>"'`\\)\]}]{1,2048}/gi;
const HOST_RE = /\b(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.){1,8}[a-z]{2,24}\b/gi;
const HANDLE_RE = /(?<![A-Za-z0-9_.+\-@])@[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,62}[A-Za-z0-9_])?/g;
const CHANNEL_RE = /(?<![A-Za-z0-9_&#])#[A-Za-z0-9][A-Za-z0-9_-]{0,79}/g;
/** Slack-style ids: C…/G…/D… conversations, U…/W… members; upper case with a digit. */
const SLACK_ID_RE = /\b[CGDUW][A-Z0-9]{8,11}\b/g;
const ACCOUNT_RE =
  /\b(?:account|acct|a\/c|konto|kontonummer|compte|cuenta|conto|rekening)\b[^\d\n]{0,24}(\d(?:[ -]?\d){5,19})\b/gi;
/** Bare names ending like a file, not a host ("report.pdf", "node.js"). */
const FILE_SUFFIXES = new Set(
  'txt pdf json md js mjs cjs ts tsx jsx py rb go rs java c h cpp cs sh csv tsv png jpg jpeg gif svg webp html htm xml yaml yml toml ini cfg conf log zip gz tgz tar bz2 xz exe dll so bin doc docx xls xlsx ppt pptx odt env lock css scss map wasm sql db sqlite bak tmp'.split(
    ' ',
  ),
);

export function literalHash(kind: DestinationKind, value: string): string {
  return createHash('sha256').update(`${kind}:${value}`).digest('hex');
}

/**
 * A string as both sides compare it: Unicode NFKC (fullwidth digits and `＠` become ASCII), the
 * ideographic full stops a URL parser reads as dots made `.`, format characters removed, every run of spaces, tabs and line breaks one ASCII space, and every
 * script's decimal digits ASCII.
 */
export function canonicalText(text: string): string {
  return text
    .normalize('NFKC')
    .replace(LABEL_DOT_RE, '.')
    .replace(FORMAT_RE, '')
    .replace(SPACE_RE, ' ')
    .replace(OTHER_DIGIT_RE, (d) => asciiDigit(d.codePointAt(0) ?? 0));
}

let digitZeros: readonly number[] | null = null;

/**
 * The ASCII digit of a decimal digit of any script: Unicode keeps each script's digits as runs of
 * ten from its zero, so the value is the distance from the start of its run, modulo ten (the
 * mathematical digits are five runs back to back). The runs' starts are found once, on first use.
 */
function asciiDigit(cp: number): string {
  if (digitZeros === null) {
    const zeros: number[] = [];
    const digit = /\p{Nd}/u;
    let runStart = -1;
    for (let c = 0; c <= 0x1ffff; c++) {
      if (digit.test(String.fromCodePoint(c))) {
        if (runStart < 0) runStart = c;
      } else if (runStart >= 0) {
        zeros.push(runStart);
        runStart = -1;
      }
    }
    digitZeros = zeros;
  }
  let start = 0;
  for (const z of digitZeros) {
    if (z > cp) break;
    start = z;
  }
  return String((cp - start) % 10);
}

function decodeOnce(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    // A stray `%` elsewhere: decode the ASCII escapes alone.
    return text.replace(/%([0-7][0-9a-f])/gi, (_, hex: string) =>
      String.fromCharCode(Number.parseInt(hex, 16)),
    );
  }
}

/** The percent-decoded form of a string carrying escapes (up to three layers), else null. */
function percentDecoded(text: string): string | null {
  if (!PERCENT_RE.test(text)) return null;
  let t = text;
  for (let i = 0; i < 3 && PERCENT_RE.test(t); i++) {
    const next = decodeOnce(t);
    if (next === t) break;
    t = next;
  }
  return t === text ? null : canonicalText(t);
}

/** A host as compared: lower case, no trailing dot. */
function hostOf(host: string): string {
  const h = host.toLowerCase();
  return h.endsWith('.') ? h.slice(0, -1) : h;
}

/** The WHATWG serialisation of a URL without its fragment, and its host; null if it is none. */
function parsedUrl(raw: string): { url: string; host: string } | null {
  const trimmed = raw.replace(/[.,;:!?]+$/, '');
  let u: URL;
  try {
    u = new URL(trimmed);
  } catch {
    return null;
  }
  u.hash = '';
  const host = hostOf(u.hostname);
  return host === '' ? null : { url: u.href, host };
}

/**
 * Named character references an address is spelled with (`&commat;`, `&period;`); numeric ones
 * (`&#64;`, `&#x40;`) are decoded whatever the character. A named one needs its `;`, as in HTML.
 */
const NAMED_REFERENCES: ReadonlyMap<string, string> = new Map([
  ['commat', '@'],
  ['period', '.'],
  ['plus', '+'],
  ['num', '#'],
  ['colon', ':'],
  ['sol', '/'],
  ['lowbar', '_'],
  ['percnt', '%'],
  ['amp', '&'],
  ['nbsp', ' '],
]);
const ESCAPE_HINT_RE = /&#|&[a-z]{2,8};|\\[ux0-3@.]|%u[0-9a-f]{4}|=40|=2e/i;
const CHARACTER_REFERENCE_RE = /&(?:#(\d{1,7});?|#x([0-9a-f]{1,6});?|([a-z]{2,8});)/gi;
/** JavaScript, JSON, Python and C escapes written out as text: `\u0040`, `\u{40}`, `\x40`. */
const BACKSLASH_ESCAPE_RE = /\\(?:u\{([0-9a-f]{1,6})\}|u([0-9a-f]{4})|x([0-9a-f]{2}))/gi;
/**
 * The separators in other escapes: `\@` and `\.`, octal `\100` and `\056`, JavaScript's
 * `unescape` form `%u0040`, quoted-printable `=40` and `=2E`.
 */
const SEPARATOR_ESCAPE_RE = /\\([@.])|\\(100|056)|%u(0040|002e)|=(40|2e)/gi;
/** `(at)`, `[at]`, `{at}`, `<at>`, `[@]` and the same for `dot` and `.`, spaces around them. */
const BRACKET_AT_RE = / ?[([{<] ?(?:at|@) ?[)\]}>] ?/gi;
const BRACKET_DOT_RE = / ?[([{<] ?(?:dot|\.) ?[)\]}>] ?/gi;
/**
 * A local part, then ` at ` or `@`, then a domain whose labels ` dot ` or `.` separate: the word
 * forms count only in this shape, between a local part and a domain with a top-level label.
 */
const WORD_AT_RE =
  /(?<![A-Za-z0-9._%+-])([A-Za-z0-9._%+-]{1,64})( at | ?@ ?)((?:[A-Za-z0-9-]{1,63}(?: ?\. ?| dot )){1,8}[A-Za-z]{2,24})(?![A-Za-z0-9-])/gi;
/** A quoted local part that is a plain one (`"ben"@`): the same mailbox (RFC 5321 §4.1.2). */
const QUOTED_LOCAL_RE = /"([A-Za-z0-9._%+-]{1,64})"(?= ?@)/g;

/** The character a numeric reference or escape names, or the text itself when it names none. */
function codePointText(hex: string | undefined, decimal: string | undefined, text: string): string {
  const cp = hex !== undefined ? Number.parseInt(hex, 16) : Number(decimal);
  if (!Number.isInteger(cp) || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return text;
  return String.fromCodePoint(cp);
}

/** Character references and backslash escapes decoded once; unknown ones are left as they are. */
function unescapeCharacters(text: string): string {
  return text
    .replace(CHARACTER_REFERENCE_RE, (m, dec?: string, hex?: string, name?: string) =>
      name !== undefined
        ? (NAMED_REFERENCES.get(name.toLowerCase()) ?? m)
        : codePointText(hex, dec, m),
    )
    .replace(BACKSLASH_ESCAPE_RE, (m, braced?: string, u?: string, x?: string) =>
      codePointText(braced ?? u ?? x, undefined, m),
    )
    .replace(SEPARATOR_ESCAPE_RE, (_, plain?: string, octal?: string, u?: string) => {
      if (plain !== undefined) return plain;
      return octal === '100' || u === '0040' || _.endsWith('40') ? '@' : '.';
    });
}

/** `(at)`, `[dot]` and the word forms between a local part and a domain made `@` and `.`. */
function spelledSeparators(text: string): string {
  return text
    .replace(QUOTED_LOCAL_RE, '$1')
    .replace(BRACKET_AT_RE, '@')
    .replace(BRACKET_DOT_RE, '.')
    .replace(WORD_AT_RE, (m, local: string, at: string, domain: string) => {
      if (at === '@' && !/ /.test(domain)) return m;
      // Spaces around a dot count after an `@` only: "Ben at Customer. Example" is prose.
      if (at === ' at ' && / \.|\. /.test(domain)) return m;
      const host = domain.replace(/ dot | ?\. ?/gi, '.').toLowerCase();
      // "look at report.pdf" names a file, not an address.
      if (FILE_SUFFIXES.has(host.slice(host.lastIndexOf('.') + 1))) return m;
      return `${local}@${host}`;
    });
}

/**
 * The reading of a canonical string with its spelled-out separators taken as what they stand for:
 * character references and backslash escapes decoded (with percent-escapes, up to three rounds),
 * then `(at)`/`[dot]` forms and ` at `/` dot ` between a local part and a domain. Null when that
 * changes nothing. Read beside the plain form, never instead of it.
 */
function deobfuscated(text: string): string | null {
  let t = text;
  for (let i = 0; i < 3 && ESCAPE_HINT_RE.test(t); i++) {
    const next = canonicalText(unescapeCharacters(t));
    const decoded = percentDecoded(next) ?? next;
    if (decoded === t) break;
    t = decoded;
  }
  const out = spelledSeparators(t);
  return out === text ? null : out;
}

class Collector {
  readonly out: DestinationLiteral[] = [];
  readonly #seen = new Set<string>();
  /** Set when a distinct literal came after the bound: the scan is then not the whole input. */
  overflowed = false;

  constructor(readonly max: number) {}

  get full(): boolean {
    return this.overflowed;
  }

  add(kind: DestinationKind, value: string, pointer: string): void {
    if (this.overflowed || value === '') return;
    // Repeats are common (a page of one address): compared as text, hashed once.
    const key = `${kind}:${value}`;
    if (this.#seen.has(key)) return;
    if (this.out.length >= this.max) {
      this.overflowed = true;
      return;
    }
    this.#seen.add(key);
    this.out.push({ kind, hash: literalHash(kind, value), pointer });
  }
}

function each(re: RegExp, text: string, visit: (m: RegExpExecArray) => void): void {
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) visit(m);
}

/** A phone's digits, and its national part when it has a longer prefix. */
function addPhone(digits: string, pointer: string, c: Collector): void {
  c.add('phone', digits, pointer);
  if (digits.length > NATIONAL_DIGITS) c.add('phone', digits.slice(-NATIONAL_DIGITS), pointer);
}

/** The literals inside one string. */
function scanText(text: string, pointer: string, c: Collector, regroup = true): void {
  const taken: [number, number][] = [];
  // Hosts are visited in order: a sweep over the spans sorted by start answers each in turn
  // (a page of thousands of addresses stays linear).
  let next = -1;
  let reach = -1;
  const inside = (at: number) => {
    if (next < 0) {
      taken.sort((x, y) => x[0] - y[0]);
      next = 0;
    }
    for (; next < taken.length && (taken[next]?.[0] ?? 0) <= at; next++) {
      reach = Math.max(reach, taken[next]?.[1] ?? 0);
    }
    return at < reach;
  };
  for (const f of findPersonalData(text)) {
    const raw = text.slice(f.start, f.end);
    if (f.rule === 'pii.email') {
      const address = raw.toLowerCase();
      c.add('email', address, pointer);
      // A sub-address (`ben+x@`) is delivered to the mailbox without its tag (`ben@`).
      const plus = address.indexOf('+');
      const at = address.lastIndexOf('@');
      if (plus > 0 && plus < at)
        c.add('email', address.slice(0, plus) + address.slice(at), pointer);
      taken.push([f.start, f.end]);
    } else if (f.rule === 'pii.iban') {
      c.add('iban', raw.replace(/ /g, '').toUpperCase(), pointer);
      taken.push([f.start, f.end]);
    } else if (f.rule === 'pii.phone') {
      addPhone(raw.replace(/\D/g, ''), pointer, c);
    }
  }
  // Brackets around a phone's groups are spaces (`+1 (415) 555-0199`); any run of separators
  // between groups is one `-` (`415–555–0199`, `415 . 555 . 0199`, `415|555|0199`); `00` is `+`.
  const spaced = text
    .replace(/[()]/g, ' ')
    .replace(/ {2,}/g, ' ')
    .replace(/[\p{Pd}\u2212]/gu, '-');
  const grouped = spaced.replace(GROUP_SEPARATOR_RE, '-').replace(DOUBLE_ZERO_PREFIX_RE, '+');
  each(PHONE_LOOSE_RE, grouped, (m) => addPhone(m[0].replace(/\D/g, ''), pointer, c));
  each(PHONE_NANP_LOOSE_RE, grouped, (m) => addPhone(m[0].replace(/\D/g, ''), pointer, c));
  if (regroup) {
    each(PHONE_REGROUPED_RE, spaced, (m) => {
      const groups = m[0].split(/ ?- ?| /);
      const digits = groups.join('');
      const thousands =
        (groups[0]?.length ?? 0) <= 3 && groups.slice(1).every((g) => g.length === 3);
      if ((digits.length === 10 || digits.length === 11) && !thousands)
        addPhone(digits, pointer, c);
    });
  }
  each(IBAN_LOOSE_RE, text.replace(GROUP_SEPARATOR_RE, ' ').toUpperCase(), (m) => {
    if (ibanChecks(m[0])) c.add('iban', m[0].replace(/ /g, ''), pointer);
  });
  each(URL_RE, text, (m) => {
    taken.push([m.index, m.index + m[0].length]);
    const u = parsedUrl(m[0]);
    if (u === null) return;
    c.add('url', u.url, pointer);
    c.add('host', u.host, pointer);
  });
  each(HOST_RE, text, (m) => {
    if (inside(m.index) || text[m.index - 1] === '@') return;
    const host = hostOf(m[0]);
    const tld = host.slice(host.lastIndexOf('.') + 1);
    if (FILE_SUFFIXES.has(tld) || /^\d/.test(tld)) return;
    c.add('host', host, pointer);
  });
  each(HANDLE_RE, text, (m) => c.add('handle', m[0].toLowerCase(), pointer));
  each(CHANNEL_RE, text, (m) => {
    // "#123" is an issue or order number, not a channel.
    if (/[A-Za-z]/.test(m[0])) c.add('channel', m[0].toLowerCase(), pointer);
  });
  each(SLACK_ID_RE, text, (m) => {
    if (/\d/.test(m[0])) c.add(/^[UW]/.test(m[0]) ? 'handle' : 'channel', m[0], pointer);
  });
  each(ACCOUNT_RE, text, (m) => c.add('account', (m[1] ?? '').replace(/\D/g, ''), pointer));
}

/**
 * A whole argument string as a destination of each kind its shape allows, beyond what scanText
 * finds in it: tools take a bare account number, a lower-case IBAN, a channel name without `#`.
 */
function wholeString(text: string, pointer: string, c: Collector): void {
  const t = text.trim();
  if (t.length === 0 || t.length > MAX_WHOLE_CHARS) return;
  if (/^[\d\s().+-]+$/.test(t)) {
    const digits = t.replace(/\D/g, '');
    if (digits.length >= 6 && digits.length <= 34) {
      c.add('account', digits, pointer);
      addPhone(digits, pointer, c);
    }
    return;
  }
  const compact = t.replace(/[\s./-]/g, '').toUpperCase();
  if (/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(compact)) c.add('iban', compact, pointer);
  const lower = t.toLowerCase();
  if (/^[#@]?[a-z0-9][a-z0-9_.-]{0,79}$/.test(lower)) {
    const name = lower.replace(/^[#@]/, '');
    c.add('handle', `@${name}`, pointer);
    c.add('channel', `#${name}`, pointer);
    if (name.includes('.')) c.add('host', hostOf(name), pointer);
  }
  if (/^[CGDUW][A-Z0-9]{8,11}$/.test(t) && /\d/.test(t)) {
    c.add(/^[UW]/.test(t) ? 'handle' : 'channel', t, pointer);
  }
}

function walk(v: unknown, pointer: string, depth: number, c: Collector, whole: boolean): void {
  if (c.full) return;
  if (typeof v === 'string') {
    scanString(v, pointer, c, whole);
    return;
  }
  if (typeof v !== 'object' || v === null) return;
  if (depth >= MAX_DEPTH) {
    // Not read is not clean: a value nested this deep makes the scan incomplete.
    c.overflowed = true;
    return;
  }
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length && !c.full; i++)
      walk(v[i], `${pointer}/${i}`, depth + 1, c, whole);
    return;
  }
  const record = v as Record<string, unknown>;
  // An MCP image's or blob's base64 is not text anyone reads (as in the result scan).
  const binary = typeof record.mimeType === 'string';
  for (const [key, item] of Object.entries(record)) {
    if (c.full) return;
    if (binary && (key === 'data' || key === 'blob')) continue;
    const at = `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    // A key is text the model reads like any value (`{ "evil@host": 1 }`): read it the same way.
    scanString(key, at, c, whole);
    if (c.full) return;
    walk(item, at, depth + 1, c, whole);
  }
}

/**
 * One string (a value or a key) in its canonical form; if it has percent-escapes, decoded too;
 * and if it spells separators out (`&#64;`, `\u0040`, `(at)`, ` at `), with them read.
 */
function scanString(
  raw: string,
  pointer: string,
  c: Collector,
  whole: boolean,
  joined = false,
): void {
  const text = canonicalText(raw);
  const decoded = percentDecoded(text);
  const plain = deobfuscated(decoded ?? text);
  for (const reading of [text, decoded, plain]) {
    if (reading === null || c.full) continue;
    // Strings joined by a space are not regrouped into a phone: `Order 415` beside `555 0199
    // items` is two numbers, not one (a `+`, `00` or 3-3-4 spelling is still read).
    scanText(reading, pointer, c, !joined);
    if (whole) wholeString(reading, pointer, c);
  }
}

/** The destination-like literals in a tool's result (every string in it), first `max` distinct. */
export function destinationLiteralsOf(
  output: unknown,
  max: number = MAX_LITERALS_PER_RESULT,
): DestinationLiteral[] {
  return [...scanResultLiterals(output, max).literals];
}

/** As destinationLiteralsOf, saying whether the bound cut the scan short. */
export function scanResultLiterals(
  output: unknown,
  max: number = MAX_LITERALS_PER_RESULT,
): LiteralScan {
  const c = new Collector(max);
  walk(output, '', 0, c, false);
  return { literals: c.out, complete: !c.overflowed };
}

/** The literals a call's arguments carry, each whole string also read as one candidate. */
export function argumentLiteralsOf(
  args: unknown,
  max: number = MAX_LITERALS_PER_ARGUMENTS,
): DestinationLiteral[] {
  return [...scanArgumentLiterals(args, [], max).literals];
}

/**
 * As argumentLiteralsOf, the destination arguments first: `first` lists the values the tool's
 * destination and URL rules name (concrete pointers), read before anything else, so that padding
 * the other arguments cannot push the real recipient past the bound. Says whether the bound cut
 * the scan short (the caller then fails closed).
 */
export function scanArgumentLiterals(
  args: unknown,
  first: readonly { readonly pointer: string; readonly value: unknown }[],
  max: number = MAX_LITERALS_PER_ARGUMENTS,
): LiteralScan {
  const c = new Collector(max);
  for (const at of first) walk(at.value, at.pointer, 0, c, true);
  walk(args, '', 0, c, true);
  // A destination split across strings (`DE8937040044` in one argument, `0532013000` in the
  // next; `boss@` and `evil.example`) is read from the strings joined in order, as the model that
  // wrote them would join them: with nothing between them, and with a space.
  const parts: string[] = [];
  collectStrings(args, 0, parts);
  if (parts.length > 1 && !c.full) {
    for (const glue of ['', ' ']) scanString(parts.join(glue), '', c, false, true);
  }
  return { literals: c.out, complete: !c.overflowed };
}

/** The string values of a value in document order, as deep as `walk` reads. */
function collectStrings(v: unknown, depth: number, out: string[]): void {
  if (typeof v === 'string') {
    out.push(v);
    return;
  }
  if (typeof v !== 'object' || v === null || depth >= MAX_DEPTH) return;
  for (const item of Array.isArray(v) ? v : Object.values(v)) collectStrings(item, depth + 1, out);
}
