/** @module Scans tool names, descriptions and schema texts for tool poisoning (C3). */

import { decodedTexts, identifierWords, letterSpacedText } from './derived-texts.js';
import type {
  CodePointRange,
  CodePointRule,
  DescriptionRule,
  PatternRule,
} from './description-rules.js';
import {
  CONFUSABLE_LETTERS,
  DESCRIPTION_RULES,
  EXCERPT_ESCAPE_RANGES,
  NORMALIZATION_STRIP_RANGES,
} from './description-rules.js';
import { scanReading } from './model-text-prefilter.js';
import { OwnNameCheck } from './scan-own-name.js';
import type { ModelTextKind } from './schema-model-texts.js';

export interface ScanFinding {
  readonly rule: string;
  readonly category: string;
  readonly field: string;
  readonly message: string;
  readonly excerpt: string;
}

/** A text beside the name and description; `kind` defaults to `text` (prose for the model). */
export interface ScanText {
  readonly field: string;
  readonly text: string;
  readonly kind?: ModelTextKind;
}

export interface ScanInput {
  readonly name: string;
  readonly description: string;
  /** Schema texts: schemaModelTexts gives every string and key an export sends to a model. */
  readonly extraTexts?: readonly ScanText[];
  /** Hosts the tool reaches anyway (egress hosts, its http runtime's or provider's host). */
  readonly ownHosts?: readonly string[];
  /** Documentation hosts the tool's owner declares (`doc_hosts`): links there may carry a query. */
  readonly docHosts?: readonly string[];
  /**
   * @deprecated Ignored. The verdict on a text never depends on what else is catalogued: other
   * tools are caught by the form of the reference (calling, preferring, replacing, avoiding one).
   */
  readonly otherToolNames?: readonly string[];
  /** @deprecated Ignored, like `otherToolNames`. */
  readonly toolNameIndexes?: readonly unknown[];
  /** @deprecated Ignored, like `otherToolNames`. */
  readonly selfNames?: readonly string[];
}

/** Any text a model will read: a description, a prompt, a resource, a tool result. */
export interface ModelTextInput {
  readonly text: string;
  /** JSON pointer (or label) the findings carry in `field`. */
  readonly field?: string;
  /** How the model meets the text: prose (default), a schema key, or a one-token value. */
  readonly kind?: ModelTextKind | 'name';
  /** The name of whatever speaks (a tool's own name is never a reference to another tool). */
  readonly speaker?: string;
  readonly ownHosts?: readonly string[];
  readonly docHosts?: readonly string[];
  /** Reduce a long text to what a rule could read first (default true; false for baselines). */
  readonly prefilter?: boolean;
}

const MAX_EXCERPT = 80;
const EXCERPT_LEAD = 20;
const MAX_QUOTED = 60;

// ---------------------------------------------------------------------------------------------
// Compiled rules

interface CompiledPattern {
  readonly rule: PatternRule;
  readonly index: number;
  readonly re: RegExp;
  readonly sentence: RegExp | undefined;
  readonly ignore: ReadonlySet<string>;
  readonly ignorePattern: RegExp | undefined;
}

interface CompiledCodePoints {
  readonly rule: CodePointRule;
  readonly index: number;
  readonly exemptions: readonly {
    readonly codePoints: ReadonlySet<number>;
    readonly before: RegExp;
    readonly after: RegExp;
  }[];
  readonly sequences: readonly RegExp[];
}

interface Compiled {
  readonly patterns: readonly CompiledPattern[];
  readonly codePoints: readonly CompiledCodePoints[];
  readonly confusable: { readonly rule: DescriptionRule; readonly index: number } | undefined;
}

let compiled: Compiled | undefined;

function compile(): Compiled {
  if (compiled) return compiled;
  const patterns: CompiledPattern[] = [];
  const codePoints: CompiledCodePoints[] = [];
  let confusable: Compiled['confusable'];
  for (const [index, rule] of DESCRIPTION_RULES.entries()) {
    switch (rule.kind) {
      case 'pattern': {
        const flags = (rule.flags ?? 'u').replace('g', '');
        patterns.push({
          rule,
          index,
          re: new RegExp(rule.pattern, `${flags}g`),
          sentence:
            rule.alsoInSentence === undefined ? undefined : new RegExp(rule.alsoInSentence, flags),
          ignore: new Set(rule.ignoreCaptures ?? []),
          ignorePattern:
            rule.ignoreCapturePattern === undefined
              ? undefined
              : new RegExp(rule.ignoreCapturePattern, 'u'),
        });
        break;
      }
      case 'codepoints':
        codePoints.push({
          rule,
          index,
          exemptions: (rule.exemptions ?? []).map((e) => ({
            codePoints: new Set(e.codePoints),
            before: new RegExp(`^(?:${e.before})$`, 'u'),
            after: new RegExp(`^(?:${e.after})$`, 'u'),
          })),
          sequences: (rule.exemptSequences ?? []).map((q) => new RegExp(q, 'gu')),
        });
        break;
      case 'confusable':
        confusable = { rule, index };
        break;
    }
  }
  compiled = { patterns, codePoints, confusable };
  return compiled;
}

function inRanges(cp: number, ranges: readonly CodePointRange[]): boolean {
  for (const [lo, hi] of ranges) if (cp >= lo && cp <= hi) return true;
  return false;
}

// ---------------------------------------------------------------------------------------------
// Normalization with an offset map back into the raw text, so excerpts show what was written.

interface Normalized {
  readonly text: string;
  /** For each UTF-16 unit of `text`, the raw span it came from. */
  readonly starts: readonly number[];
  readonly ends: readonly number[];
  /** Normalized spans of words whose look-alike letters were folded to Latin. */
  readonly folded: readonly { readonly start: number; readonly end: number }[];
}

const QUOTES: Readonly<Record<string, string>> = {
  '\u2018': "'",
  '\u2019': "'",
  '\u201a': "'",
  '\u201b': "'",
  '\u2032': "'",
  '\u02bc': "'",
  '\u201c': '"',
  '\u201d': '"',
  '\u201e': '"',
  '\u201f': '"',
  '\u2033': '"',
  '\u2010': '-',
  '\u2011': '-',
};

const MARK = /^\p{M}$/u;
const SPACE = /^\s$/u;
const LINE_BREAK = /^[\n\r\u2028\u2029\u0085]$/u;
const LATIN = /\p{Script=Latin}/u;
const WORD = /[\p{L}\p{M}]+/gu;
/** Any code point beyond ASCII (written as a range above it, so the pattern has no controls). */
const NON_ASCII = /[\u0080-\u{10FFFF}]/u;

function normalize(raw: string): Normalized {
  const out: string[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  let pending: { newline: boolean; start: number; end: number } | undefined;
  /** One unit of normalized text from raw [start, end): white space runs collapse to one. */
  const emit = (unit: string, start: number, end: number): void => {
    if (SPACE.test(unit)) {
      if (pending) {
        pending.newline ||= LINE_BREAK.test(unit);
        pending.end = end;
      } else {
        pending = { newline: LINE_BREAK.test(unit), start, end };
      }
      return;
    }
    if (pending && out.length > 0) {
      out.push(pending.newline ? '\n' : ' ');
      starts.push(pending.start);
      ends.push(pending.end);
    }
    pending = undefined;
    out.push(unit);
    starts.push(start);
    ends.push(end);
  };

  for (let i = 0; i < raw.length; ) {
    const unit = raw.charCodeAt(i);
    const following = raw.charCodeAt(i + 1);
    // Fast path: printable ASCII not followed by anything that could combine with it (marks and
    // invisibles all lie above U+02FF). NFKC leaves it alone; only case folds.
    if (unit >= 0x20 && unit < 0x7f && !(following >= 0x300)) {
      emit(String.fromCharCode(unit >= 0x41 && unit <= 0x5a ? unit + 32 : unit), i, i + 1);
      i++;
      continue;
    }
    if (unit === 0x09 || unit === 0x0a || unit === 0x0d) {
      emit(raw[i] ?? ' ', i, i + 1);
      i++;
      continue;
    }
    // Otherwise group the base character with its combining marks so NFKC can compose them;
    // invisible characters in between are dropped (so "ig\u200Bnore" reads as "ignore").
    const cp = raw.codePointAt(i) ?? 0;
    let next = i + (cp > 0xffff ? 2 : 1);
    if (inRanges(cp, NORMALIZATION_STRIP_RANGES)) {
      i = next;
      continue;
    }
    let text = String.fromCodePoint(cp);
    let end = next;
    for (let j = next; j < raw.length; ) {
      const cp2 = raw.codePointAt(j) ?? 0;
      const after = j + (cp2 > 0xffff ? 2 : 1);
      if (inRanges(cp2, NORMALIZATION_STRIP_RANGES)) {
        j = after;
        next = after;
        continue;
      }
      const ch2 = String.fromCodePoint(cp2);
      if (!MARK.test(ch2)) break;
      text += ch2;
      end = after;
      j = after;
      next = after;
    }
    const folded = text
      .normalize('NFKC')
      .replace(/[\u2018-\u201f\u2032\u2033\u02bc\u2010\u2011]/gu, (q) => QUOTES[q] ?? q)
      .toLowerCase();
    for (const piece of folded) {
      // A surrogate pair stays two units, both pointing at the same raw span.
      if (piece.length === 1) emit(piece, i, end);
      else for (let k = 0; k < piece.length; k++) emit(piece[k] ?? '', i, end);
    }
    i = next;
  }

  let text = out.join('');
  const foldedSpans: { start: number; end: number }[] = [];
  // Look-alike letters are never ASCII: an ASCII text has nothing to fold.
  if (!NON_ASCII.test(text)) return { text, starts, ends, folded: foldedSpans };
  text = text.replace(WORD, (word, offset: number) => {
    if (!LATIN.test(word)) return word;
    let changed = false;
    const mapped = Array.from(word, (c) => {
      const latin = CONFUSABLE_LETTERS[c];
      if (latin === undefined) return c;
      changed = true;
      return latin;
    }).join('');
    if (!changed || mapped.length !== word.length) return word;
    foldedSpans.push({ start: offset, end: offset + word.length });
    return mapped;
  });
  return { text, starts, ends, folded: foldedSpans };
}

function rawSpan(n: Normalized, start: number, end: number): [number, number] {
  const last = Math.max(start, end - 1);
  return [n.starts[start] ?? 0, n.ends[last] ?? n.starts[start] ?? 0];
}

// ---------------------------------------------------------------------------------------------
// Safe excerpts

function hex(cp: number): string {
  return `<U+${cp.toString(16).toUpperCase().padStart(4, '0')}>`;
}

function displayTokens(
  s: string,
  from: number,
  to: number,
  spellOut?: (cp: number) => boolean,
): string[] {
  const tokens: string[] = [];
  for (let i = from; i < to; ) {
    const cp = s.codePointAt(i) ?? 0;
    const ch = String.fromCodePoint(cp);
    i += ch.length;
    if (inRanges(cp, EXCERPT_ESCAPE_RANGES) || spellOut?.(cp)) tokens.push(hex(cp));
    else if (SPACE.test(ch)) {
      if (tokens.at(-1) !== ' ') tokens.push(' ');
    } else tokens.push(ch);
  }
  return tokens;
}

/** Start index of the code point containing `i` (never splits a surrogate pair). */
function codePointStart(s: string, i: number): number {
  const unit = s.charCodeAt(i);
  return i > 0 && unit >= 0xdc00 && unit <= 0xdfff ? i - 1 : i;
}

/** At most 80 characters around [start, end) of `s`, invisible characters spelled out. */
function excerptOf(
  s: string,
  start: number,
  end: number,
  spellOut?: (cp: number) => boolean,
  label = '',
): string {
  const from = codePointStart(s, Math.max(0, start - EXCERPT_LEAD));
  const at = codePointStart(s, start);
  const to = Math.min(s.length, end + MAX_EXCERPT);
  const pre = displayTokens(s, from, at, spellOut);
  const rest = displayTokens(s, at, to, spellOut);
  let preText = '';
  let preIdx = pre.length;
  while (preIdx > 0 && preText.length + (pre[preIdx - 1] ?? '').length <= EXCERPT_LEAD) {
    preIdx--;
    preText = (pre[preIdx] ?? '') + preText;
  }
  const lead = from > 0 || preIdx > 0 ? '…' : '';
  let budget = MAX_EXCERPT - label.length - lead.length - preText.length - 1;
  let body = '';
  let taken = 0;
  for (const token of rest) {
    if (token.length > budget) break;
    body += token;
    budget -= token.length;
    taken++;
  }
  const tail = taken < rest.length || to < s.length ? '…' : '';
  return `${label}${lead}${preText}${body}`.trim() + tail;
}

/** A quoted fragment for messages: short, single-line, invisible characters spelled out. */
function quoted(s: string): string {
  const tokens = displayTokens(s, 0, s.length);
  let out = '';
  for (const t of tokens) {
    if (out.length + t.length > MAX_QUOTED) return `"${out.trim()}…"`;
    out += t;
  }
  return `"${out.trim()}"`;
}

// ---------------------------------------------------------------------------------------------
// Hidden payloads: text smuggled in tag characters or variation selectors is decoded and scanned.

interface Payload {
  readonly kind: string;
  readonly text: string;
}

/** How findings name the reading they were found in. */
const PAYLOAD_LABELS: Readonly<Record<string, string>> = {
  'tag-character': 'hidden tag-character text',
  'variation-selector': 'hidden variation-selector text',
  'letter-spaced': 'letter-spaced text',
  base64: 'base64-decoded text',
  hex: 'hex-decoded text',
  percent: 'percent-decoded text',
  'form-encoded': 'form-decoded text',
  'html-entities': 'entity-decoded text',
  identifier: 'the words of an identifier',
};

/** Readings of `raw` a model makes that the rules would not see in the raw text. */
function derivedPayloads(raw: string, kind: ModelTextKind | 'name'): Payload[] {
  const out: Payload[] = [];
  const spaced = letterSpacedText(raw);
  if (spaced) out.push({ kind: 'letter-spaced', text: spaced });
  out.push(...decodedTexts(raw));
  // A tool's name is exported as an identifier, like a key; prose keeps its identifiers whole.
  if (kind !== 'text') {
    const words = identifierWords(raw);
    if (words) out.push({ kind: 'identifier', text: words });
  }
  return out;
}

/**
 * An https URL with nothing to fill in (no user, query or fragment) is a location, as data: the
 * value of a URL argument's `default` or `examples`. Whether a call may go there is the URL
 * policy's to decide. One with a query or fragment is the shape of a collector and stays flagged.
 */
function isPlainUrl(raw: string): boolean {
  if (/\s/.test(raw)) return false;
  try {
    const url = new URL(raw);
    return (
      url.protocol === 'https:' &&
      url.username === '' &&
      url.password === '' &&
      url.search === '' &&
      url.hash === '' &&
      !raw.includes('?') &&
      !raw.includes('#')
    );
  } catch {
    return false;
  }
}

function decodeTags(raw: string, skip: ReadonlySet<number>): string {
  let out = '';
  let inRun = false;
  for (let i = 0; i < raw.length; ) {
    const cp = raw.codePointAt(i) ?? 0;
    const isTag = cp >= 0xe0000 && cp <= 0xe007f && !skip.has(i);
    if (isTag && cp >= 0xe0020 && cp <= 0xe007e) {
      out += String.fromCharCode(cp - 0xe0000);
      inRun = true;
    } else if (inRun && !isTag) {
      out += ' ';
      inRun = false;
    }
    i += cp > 0xffff ? 2 : 1;
  }
  return out.trim();
}

const UTF8 = new TextDecoder('utf-8');

function decodeVariationSelectors(run: string): string {
  const bytes: number[] = [];
  for (const ch of run) {
    const cp = ch.codePointAt(0) ?? 0;
    if (cp >= 0xfe00 && cp <= 0xfe0f) bytes.push(cp - 0xfe00);
    else if (cp >= 0xe0100 && cp <= 0xe01ef) bytes.push(cp - 0xe0100 + 16);
  }
  // Only worth showing when the bytes form mostly printable text.
  const text = UTF8.decode(Uint8Array.from(bytes));
  const printable = Array.from(text).filter((c) => /[\p{L}\p{N}\p{P}\p{S}\s]/u.test(c)).length;
  return printable >= Math.max(2, Array.from(text).length * 0.8) ? text : '';
}

// ---------------------------------------------------------------------------------------------
// Links

/** Slots a model is meant to fill: `{conversation}`, `<api_key>`, `${HOME}`, `$TOKEN`, `%s`. */
const PLACEHOLDER = /\{[^{}\s]{0,40}\}|<[^<>\s]{1,40}>|\$\{?[a-z_][a-z0-9_]*|%s(?![0-9a-f])/u;
/** Query keys that name what they carry out: the shape of a collector, on any host. */
const DATA_QUERY_KEY =
  /[?&](?:data|payload|exfil|leak|dump|secrets?|tokens?|api_?keys?|passwords?|passwd|pwd|creds?|credentials|env|environ|cookies?|session|conversation|chat|history|transcript|context|prompt|memory)=/u;
/** Punctuation that ends the sentence, not the link (a closing brace is a slot's, so it stays). */
const TRAILING_PUNCTUATION = /[.,;:!?)\]'"]+$/u;

export interface LinkContext {
  readonly ownHosts: ReadonlySet<string>;
  readonly docHosts: ReadonlySet<string>;
}

function declaredHost(host: string, ctx: LinkContext): boolean {
  return ctx.ownHosts.has(host) || ctx.docHosts.has(host);
}

/**
 * Why a link is an exfiltration or smuggling shape, or null when it is a plain location. A plain
 * http(s) link (no credentials, no placeholder, no query) is a documentation link and not a
 * finding by itself, on any host; a query string with room for data (an empty, long or encoded
 * value, many parameters) is allowed only to a declared host, and never one that names the data
 * it carries or leaves a slot for the model to fill.
 */
function linkProblem(matched: string, ctx: LinkContext): string | null {
  const link = matched.replaceAll('\\', '').replace(TRAILING_PUNCTUATION, '');
  if (PLACEHOLDER.test(link)) return 'a link with a slot for the model to fill in';
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//.test(link) ? link : `https://${link}`);
  } catch {
    return 'a link that does not parse';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `a ${url.protocol} link`;
  if (url.username !== '' || url.password !== '') return 'a link with credentials in it';
  if (DATA_QUERY_KEY.test(url.search)) return 'a link whose query carries data out';
  if (url.search.length > 1 && !declaredHost(url.hostname, ctx) && carriesData(url)) {
    return 'a link whose query string has room for data, to a host the tool does not declare';
  }
  return null;
}

/** Longest query value that still reads as a plain setting (`page=2`, `lang=node`, `id=42`). */
const MAX_PLAIN_QUERY_VALUE = 24;
const MAX_PLAIN_QUERY_PARAMS = 3;

/**
 * Whether a query has the shape of a collector: a value left empty for the model to append to,
 * a long or encoded value, or many parameters. `?page=2` on any host is a location.
 */
function carriesData(url: URL): boolean {
  const params = [...url.searchParams.entries()];
  if (params.length === 0 || params.length > MAX_PLAIN_QUERY_PARAMS) return true;
  return params.some(
    ([, v]) => v === '' || v.length > MAX_PLAIN_QUERY_VALUE || /%[0-9a-f]{2}|[{}<>$[\]]/i.test(v),
  );
}

const FIRST_LINK = /\b[a-z][a-z0-9+.-]{1,15}:\/\/[^\s<>"'\x60]+|\bwww\d?\.[^\s<>"'\x60]+/u;

/** The host of the first link inside a match, or null (backslash escapes of a pattern dropped). */
function firstLinkHost(matched: string): string | null {
  const link = FIRST_LINK.exec(matched)?.[0];
  const plain = (link ?? matched).replaceAll('\\', '').replace(TRAILING_PUNCTUATION, '');
  try {
    const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//.test(plain) ? plain : `https://${plain}`);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.hostname : null;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// Scanning one text

interface Hit {
  readonly order: number;
  readonly position: number;
  readonly finding: ScanFinding;
}

interface FieldContext extends LinkContext {
  readonly field: string;
  readonly own: OwnNameCheck;
  /** The whole text is one plain https URL given as a value (a default or an example of one). */
  readonly urlValue: boolean;
  readonly hits: Hit[];
  readonly seen: Set<string>;
}

function push(
  ctx: FieldContext,
  order: number,
  position: number,
  key: string,
  f: ScanFinding,
): void {
  if (ctx.seen.has(key)) return;
  ctx.seen.add(key);
  ctx.hits.push({ order, position, finding: f });
}

function sentenceAround(text: string, start: number, end: number): string {
  const boundary = /[.!?;。！？；](?=\s)|[。！？；]|\n/g;
  let from = 0;
  let to = text.length;
  for (let m = boundary.exec(text); m !== null; m = boundary.exec(text)) {
    const after = m.index + m[0].length;
    if (after <= start) from = after;
    else if (m.index >= end) {
      to = m.index;
      break;
    }
  }
  return text.slice(from, to);
}

function firstCapture(m: RegExpExecArray): string | undefined {
  for (let i = 1; i < m.length; i++) if (m[i] !== undefined) return m[i];
  return undefined;
}

/** Runs the pattern rules for `target`; returns any hidden text the matches decode to. */
function scanPatterns(
  ctx: FieldContext,
  target: 'normalized' | 'raw',
  text: string,
  locate: (start: number, end: number) => string,
  note: string,
): Payload[] {
  const payloads: Payload[] = [];
  for (const p of compile().patterns) {
    if (p.rule.target !== target || ctx.seen.has(p.rule.id)) continue;
    const decoded: string[] = [];
    p.re.lastIndex = 0;
    for (let m = p.re.exec(text); m !== null; m = p.re.exec(text)) {
      if (m[0].length === 0) {
        p.re.lastIndex++;
        continue;
      }
      const capture = firstCapture(m);
      if (
        capture !== undefined &&
        (p.ignore.has(capture) || ctx.own.names(capture) || p.ignorePattern?.test(capture) === true)
      )
        continue;
      const end = m.index + m[0].length;
      if (p.sentence && !p.sentence.test(sentenceAround(text, m.index, end))) continue;
      let why = '';
      if (p.rule.link) {
        if (ctx.urlValue) continue;
        const problem = linkProblem(m[0], ctx);
        if (problem === null) continue;
        why = ` (${problem})`;
      }
      if (p.rule.exemptOwnHosts && (ctx.urlValue || declaredHost(firstLinkHost(m[0]) ?? '', ctx)))
        continue;
      if (p.rule.decode === 'variation-selectors') {
        // Every run may carry a different message; keep scanning to collect them all.
        const bytes = decodeVariationSelectors(m[0]);
        if (bytes) decoded.push(bytes);
        if (ctx.seen.has(p.rule.id)) continue;
      }
      let message = p.rule.description + why;
      if (capture !== undefined) message += `: ${quoted(capture)}`;
      push(ctx, p.index, m.index, p.rule.id, {
        rule: p.rule.id,
        category: p.rule.category,
        field: ctx.field,
        message: message + note,
        excerpt: locate(m.index, end),
      });
      if (p.rule.decode === undefined) break;
    }
    if (decoded.length > 0) {
      const joined = decoded.join(' ');
      const hit = ctx.hits.find((h) => h.finding.rule === p.rule.id);
      if (hit) {
        const finding = {
          ...hit.finding,
          message: `${hit.finding.message}; they decode to ${quoted(joined)}`,
        };
        ctx.hits[ctx.hits.indexOf(hit)] = { ...hit, finding };
      }
      payloads.push({ kind: 'variation-selector', text: joined });
    }
  }
  return payloads;
}

/** Any code point some code-point rule looks for: a text without one skips them all. */
let anyFlaggedCodePoint: RegExp | undefined;

function flaggedCodePointTest(): RegExp {
  if (anyFlaggedCodePoint) return anyFlaggedCodePoint;
  const hexCp = (cp: number): string => `\\u{${cp.toString(16)}}`;
  const ranges = compile().codePoints.flatMap((c) => c.rule.ranges);
  const cls = ranges.map(([lo, hi]) => (lo === hi ? hexCp(lo) : `${hexCp(lo)}-${hexCp(hi)}`));
  anyFlaggedCodePoint = new RegExp(`[${cls.join('')}]`, 'u');
  return anyFlaggedCodePoint;
}

function scanCodePoints(ctx: FieldContext, raw: string): Payload[] {
  const payloads: Payload[] = [];
  if (!flaggedCodePointTest().test(raw)) return payloads;
  for (const c of compile().codePoints) {
    const found: { cp: number; at: number }[] = [];
    // Code units inside exempt sequences (emoji flags) neither count nor decode.
    const skip = new Set<number>();
    for (const re of c.sequences) {
      for (const m of raw.matchAll(re)) {
        for (let k = m.index; k < m.index + m[0].length; k++) skip.add(k);
      }
    }
    let prev = '';
    for (let i = 0; i < raw.length; ) {
      const cp = raw.codePointAt(i) ?? 0;
      const ch = String.fromCodePoint(cp);
      const next = i + ch.length;
      if (inRanges(cp, c.rule.ranges) && !skip.has(i)) {
        const nextCp = raw.codePointAt(next);
        const after = nextCp === undefined ? '' : String.fromCodePoint(nextCp);
        const exempt = c.exemptions.some(
          (e) => e.codePoints.has(cp) && e.before.test(prev) && e.after.test(after),
        );
        if (!exempt) found.push({ cp, at: i });
      }
      prev = ch;
      i = next;
    }
    const first = found[0];
    if (!first) continue;
    const distinct = [...new Set(found.map((f) => f.cp))].sort((a, b) => a - b);
    const listed = distinct
      .slice(0, 6)
      .map((cp) => hex(cp).slice(1, -1))
      .join(', ');
    let message = `${c.rule.description} (${found.length}: ${listed}${distinct.length > 6 ? ', …' : ''})`;
    if (c.rule.decode === 'tags') {
      const decoded = decodeTags(raw, skip);
      if (decoded) {
        message += `; the hidden text reads ${quoted(decoded)}`;
        payloads.push({ kind: 'tag-character', text: decoded });
      }
    }
    push(ctx, c.index, first.at, c.rule.id, {
      rule: c.rule.id,
      category: c.rule.category,
      field: ctx.field,
      message,
      excerpt: excerptOf(raw, first.at, first.at + 1),
    });
  }
  return payloads;
}

/** Hidden readings are decoded at most this deep (base64 inside hex, …), never further. */
const MAX_DECODE_DEPTH = 2;

/** A field's findings, and how the speaker's name entered them. */
export interface FieldScan {
  readonly findings: ScanFinding[];
  readonly own: OwnNameCheck;
}

/** Scans one text of a speaker (its name `own`); the findings carry `field`. */
export function scanField(
  field: string,
  raw: string,
  own: string,
  kind: ModelTextKind | 'name',
  links: LinkContext,
): FieldScan {
  const rules = compile();
  const ctx: FieldContext = {
    ...links,
    field,
    own: new OwnNameCheck(own),
    urlValue: kind === 'value' && isPlainUrl(raw),
    hits: [],
    seen: new Set(),
  };

  const payloads = [
    ...scanCodePoints(ctx, raw),
    ...scanPatterns(ctx, 'raw', raw, (s, e) => excerptOf(raw, s, e), ''),
    ...derivedPayloads(raw, kind),
  ];

  const n = normalize(raw);
  const locate = (s: number, e: number): string => {
    const [rs, re] = rawSpan(n, s, e);
    return excerptOf(raw, rs, re);
  };
  if (rules.confusable && n.folded.length > 0) {
    const span = n.folded[0];
    if (span) {
      const [rs, re] = rawSpan(n, span.start, span.end);
      const isLookAlike = (cp: number): boolean =>
        CONFUSABLE_LETTERS[String.fromCodePoint(cp).toLowerCase()] !== undefined;
      push(ctx, rules.confusable.index, span.start, rules.confusable.rule.id, {
        rule: rules.confusable.rule.id,
        category: rules.confusable.rule.category,
        field,
        message: `${rules.confusable.rule.description}: ${quoted(raw.slice(rs, re))} reads as ${quoted(n.text.slice(span.start, span.end))}`,
        excerpt: excerptOf(raw, rs, re, isLookAlike),
      });
    }
  }
  scanPatterns(ctx, 'normalized', n.text, locate, '');

  // Each hidden reading is scanned like plain text; an encoded reading is decoded once more
  // (base64 of hex, percent-encoding of base64) and no deeper, so the work stays bounded.
  const queue = payloads.map((payload) => ({ payload, depth: 1, path: [] as string[] }));
  for (let q = queue.shift(); q !== undefined; q = queue.shift()) {
    const { payload, depth } = q;
    const hidden = normalize(payload.text);
    const whats = [...q.path, PAYLOAD_LABELS[payload.kind] ?? `hidden ${payload.kind} text`];
    const what = whats.join(' inside ');
    const note = ` (inside ${what})`;
    const label = `[${what}] `;
    const locateHidden = (s: number, e: number): string => {
      const [rs, re] = rawSpan(hidden, s, e);
      return excerptOf(payload.text, rs, re, undefined, label);
    };
    const before = ctx.hits.length;
    scanPatterns(ctx, 'normalized', hidden.text, locateHidden, note);
    // Within one rule, what was found in hidden text is listed after what was found in plain sight.
    for (let i = before; i < ctx.hits.length; i++) {
      const hit = ctx.hits[i];
      if (hit) ctx.hits[i] = { ...hit, position: Number.MAX_SAFE_INTEGER };
    }
    if (depth < MAX_DECODE_DEPTH && ENCODED_KINDS.has(payload.kind)) {
      for (const inner of decodedTexts(payload.text)) {
        queue.push({ payload: inner, depth: depth + 1, path: whats });
      }
    }
  }

  const findings = ctx.hits
    .sort((a, b) => a.order - b.order || a.position - b.position)
    .map((h) => h.finding);
  return { findings, own: ctx.own };
}

const ENCODED_KINDS: ReadonlySet<string> = new Set([
  'base64',
  'hex',
  'percent',
  'form-encoded',
  'html-entities',
]);

export function linkContext(
  ownHosts: readonly string[] | undefined,
  docHosts: readonly string[] | undefined,
): LinkContext {
  return {
    ownHosts: new Set((ownHosts ?? []).map((h) => h.toLowerCase())),
    docHosts: new Set((docHosts ?? []).map((h) => h.toLowerCase())),
  };
}

/**
 * Flags injection in any one text a model will read (a description, a prompt or resource text,
 * a tool result): the same rules, decoding and link judgement as `scanToolText`, and like it a
 * pure function of the text and the speaker's declared hosts. Excerpts of a long text quote the
 * reading that was scanned (its distinct strings or lines), not offsets into the original.
 */
export function scanModelText(input: ModelTextInput): ScanFinding[] {
  // A long result is first reduced to what a rule could read in it (model-text-prefilter.ts):
  // plain data costs almost nothing, prose is scanned as before.
  return scanField(
    input.field ?? '',
    input.prefilter === false ? input.text : scanReading(input.text),
    input.speaker ?? '',
    input.kind ?? 'text',
    linkContext(input.ownHosts, input.docHosts),
  ).findings;
}
