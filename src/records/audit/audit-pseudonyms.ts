/**
 * @module What the append-only audit log keeps of values a caller supplied (invariant 16): no
 * personal data it could not forget. Every string of a call's arguments becomes a keyed hash
 * (`hmac:` and 32 hex digits of HMAC-SHA256 under a key derived from the master key, which never
 * enters the database), so an investigator holding a raw value from the classified store (or the
 * value itself) can find the records that carried it, and nobody holding only the log can test
 * guesses — an e-mail address or an IBAN is a small space for an unkeyed hash. Free text the log
 * must keep (a refusal's message, details, the egress host) has the call's own argument values and
 * any personal data the content detectors find (e-mail, phone, card, IBAN) replaced by their keyed
 * hashes. The raw arguments go to the classified store (classified-arguments.ts), which has a
 * retention period and an erasure path; the chain never covers them. docs/security-model.md,
 * "Personal data and the audit log".
 */
import { createHmac, randomBytes } from 'node:crypto';
import { canonicalJson, findPersonalData, memberCount } from '../../core/index.js';

/** The HKDF label the pseudonym key is derived from the master key under. */
export const PSEUDONYM_KEY_LABEL = 'toolgate audit pseudonyms v1';
export const PSEUDONYM_PREFIX = 'hmac:';
/** What the gate's redaction writes for a secret; kept as it is (no hash of a secret at all). */
const SECRET_MASK = '[REDACTED]';
/**
 * Numbers smaller than this keep their value (amounts, counts, limits); larger ones could be an
 * identifier written as a number (a phone or account number, a date of birth) and are hashed.
 */
const PLAIN_NUMBER_LIMIT = 1_000_000;
/** An object key can be kept only when it reads like a schema's property name. */
const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;
/** Argument values and their tokens shorter than this are not looked for in messages. */
const MIN_ECHO = 4;
/** A refusal quotes at most this many characters of a value (policy-verdict.ts excerpt). */
const ECHO_PREFIX = 100;
/** The tokens of an argument string: its words (letters, digits, _) and its blank-separated runs. */
const WORD = /[\p{L}\p{N}_]+/gu;
const RUN = /\S+/gu;
/** A quoted segment of a message: "…", or '…' not inside a word (so "the tool's" is no quote). */
const QUOTED = /"([^"\n]*)"|(?<![\p{L}\p{N}])'([^'\n]*)'(?![\p{L}\p{N}])/gu;
const WORD_CHAR = /[\p{L}\p{N}_]/u;
/**
 * `details` fields that are a caller's value as a whole (a probe's attempted tool name): hashed
 * outright, as an argument string is, whatever the detectors say.
 */
const CALLER_FIELDS: ReadonlySet<string> = new Set(['attempted']);
const MAX_DEPTH = 32;
/**
 * Most members (object entries) and elements (array items), counted over the whole value, that a
 * record keeps one by one; arguments with more are kept as a summary (truncatedArguments), so a
 * call's record stays small whatever the call sends. docs/audit.md, "Arguments in the audit log".
 */
export const MAX_RECORDED_MEMBERS = 256;
/** Members and elements a summary keeps of the arguments' beginning. */
export const PREFIX_MEMBERS = 32;
/** The one key of a summary (a key with brackets is never a caller's readable key). */
export const TRUNCATED_KEY = '[truncated]';
/** Argument strings looked for in one message at most (the longest first). */
const MAX_ECHOES = 4096;

/**
 * The one form a string is hashed in, wherever it is found (an argument, a quote in a message, a
 * detector's find): NFKC-normalised and lower-cased, so `Jane@Example.org` in an argument and
 * `jane@example.org` in a refusal give one hash.
 */
export function canonicalForm(text: string): string {
  return text.normalize('NFKC').toLowerCase();
}

/** The fields of an audit record (audit-writer.ts) that can carry what a caller supplied. */
export interface MaskableRecord {
  readonly argsRedacted: unknown;
  readonly message?: string;
  readonly details?: Readonly<Record<string, unknown>>;
  readonly egressHost?: string;
  /** The model behind the agent, as the agent reports it: the caller's own free text. */
  readonly model?: string;
  readonly sessionId?: string | null;
  /** The run the agent named when it opened the session (free text), or the session's own id. */
  readonly runId?: string | null;
}

export class AuditPseudonyms {
  readonly #source: Buffer | (() => Buffer);
  #key: Buffer | null = null;

  /** `key`: 32 bytes, or a function called on first use (the master key is loaded lazily). */
  constructor(key: Buffer | (() => Buffer)) {
    this.#source = key;
  }

  /** A per-process key: hashes match within this process only (no master key configured). */
  static ephemeral(): AuditPseudonyms {
    return new AuditPseudonyms(randomBytes(32));
  }

  get #k(): Buffer {
    this.#key ??= typeof this.#source === 'function' ? this.#source() : this.#source;
    return this.#key;
  }

  /**
   * The keyed hash of one JSON value (a string, a number); the same value, the same token. A
   * string is hashed in its canonical form (canonicalForm).
   */
  token(value: unknown): string {
    let text: string;
    try {
      text = canonicalJson(typeof value === 'string' ? canonicalForm(value) : value);
    } catch {
      text = String(value);
    }
    return this.#mac(text);
  }

  #mac(text: string): string {
    const mac = createHmac('sha256', this.#k).update(text).digest('hex');
    return `${PSEUDONYM_PREFIX}${mac.slice(0, 32)}`;
  }

  /**
   * The keyed hash of a whole value, as token() gives it; a value canonical JSON refuses (a lone
   * surrogate in a string) is hashed as its JSON text, so it never collapses into one hash with
   * every other such value.
   */
  #wholeToken(value: unknown): string {
    let text: string;
    try {
      text = canonicalJson(value);
    } catch {
      try {
        text = `json:${JSON.stringify(value) ?? 'null'}`;
      } catch {
        text = 'unserializable';
      }
    }
    return this.#mac(text);
  }

  /**
   * The log's copy of (already secret-masked) arguments: the shape kept, every string and large
   * number hashed, booleans and null as they are; an object key kept only when it is a property
   * name the tool's input schema declares (`declared`; none when the schema is not at hand), and
   * hashed otherwise. Arguments with more than MAX_RECORDED_MEMBERS members and elements in all
   * are kept as a summary instead (truncatedArguments): whatever the caller sends, the copy is
   * bounded. Never throws, never returns the input.
   */
  maskArguments(value: unknown, declared: ReadonlySet<string> | null = null): unknown {
    const members = memberCount(value, Number.POSITIVE_INFINITY, MAX_DEPTH + 1);
    if (members <= MAX_RECORDED_MEMBERS) return this.#mask(value, declared, 0, null);
    return this.truncatedArguments(value, declared, members);
  }

  /**
   * The summary of arguments too large to keep member by member: the keyed hash of the whole
   * (`hash`, the token of its canonical JSON, so an auditor holding the arguments can match it),
   * how many members and elements it has (`members`) and how many of them the summary leaves out
   * (`omitted`), and the masked copy of its first PREFIX_MEMBERS members in document order
   * (`prefix`, cut containers simply end early). The one key `[truncated]` cannot be a caller's:
   * a key with brackets is never kept readable (PLAIN_KEY).
   */
  truncatedArguments(
    value: unknown,
    declared: ReadonlySet<string> | null,
    members: number,
  ): Record<string, unknown> {
    const budget = { left: PREFIX_MEMBERS };
    const prefix = this.#mask(value, declared, 0, budget);
    return {
      [TRUNCATED_KEY]: {
        hash: this.#wholeToken(value),
        members,
        omitted: members - (PREFIX_MEMBERS - budget.left),
        prefix,
      },
    };
  }

  /** maskArguments member by member; with a `budget`, only as many members as it has left. */
  #mask(
    value: unknown,
    declared: ReadonlySet<string> | null,
    depth: number,
    budget: { left: number } | null,
  ): unknown {
    if (depth > MAX_DEPTH) return SECRET_MASK;
    if (typeof value === 'string') return value === SECRET_MASK ? value : this.token(value);
    if (typeof value === 'number') {
      return Number.isFinite(value) && Math.abs(value) < PLAIN_NUMBER_LIMIT
        ? value
        : this.token(value);
    }
    if (typeof value === 'boolean' || value === null) return value;
    if (Array.isArray(value)) {
      const out: unknown[] = [];
      for (const v of value) {
        if (spent(budget)) break;
        out.push(this.#mask(v, declared, depth + 1, budget));
      }
      return out;
    }
    if (typeof value === 'object') {
      const out: Record<string, unknown> = {};
      const from = value as Record<string, unknown>;
      for (const k of Object.keys(from)) {
        if (spent(budget)) break;
        out[keptKey(k, declared) ? k : this.token(k)] = this.#mask(
          from[k],
          declared,
          depth + 1,
          budget,
        );
      }
      return out;
    }
    return null;
  }

  /**
   * Free text with every quoted segment ("…", '…'), every given argument value or token of one
   * (`echoes`, found whatever their case) and every piece of personal data the detectors find
   * replaced by its keyed hash. Spans are found in the text as given and overlapping ones merged,
   * so no part of a caller's value survives beside a hash, and no hash is searched again.
   */
  maskText(text: string, echoes: readonly string[] = [], quotes = true): string {
    const spans: [number, number][] = [];
    const quoted = new Set<string>();
    if (quotes) {
      for (const m of text.matchAll(QUOTED)) {
        const inner = m[1] ?? m[2] ?? '';
        if (inner.length === 0 || isToken(inner)) continue;
        const start = (m.index ?? 0) + 1;
        spans.push([start, start + inner.length]);
        quoted.add(`${start}:${start + inner.length}`);
      }
    }
    const { lower, from, to } = lowered(text);
    for (const echo of echoes) {
      const needle = echo.toLowerCase();
      if (!lower.includes(needle)) continue;
      const bounded = WORD_CHAR.test(needle.at(0) ?? '') && WORD_CHAR.test(needle.at(-1) ?? '');
      for (let at = lower.indexOf(needle); at >= 0; at = lower.indexOf(needle, at + 1)) {
        const end = at + needle.length;
        // A token is the caller's where it stands as a word, not inside a longer one.
        if (bounded && (WORD_CHAR.test(lower[at - 1] ?? '') || WORD_CHAR.test(lower[end] ?? ''))) {
          continue;
        }
        // Back to the text's own positions: lower-casing may lengthen a character (İ → i̇).
        spans.push([from[at] ?? 0, to[end - 1] ?? text.length]);
      }
    }
    for (const f of findPersonalData(text)) spans.push([f.start, f.end]);
    if (spans.length === 0) return text;
    spans.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
    let masked = '';
    let at = 0;
    let open: [number, number] | null = null;
    const close = (span: [number, number]): void => {
      const found = text.slice(span[0], span[1]);
      // A quote exactly as a refusal wrote it (policy-verdict.ts `excerpt`, which spells what is
      // not printable ASCII, `"` and `\` as `\u{…}`) is hashed as the value it quotes, so it
      // gives the argument's own hash.
      const value = quoted.has(`${span[0]}:${span[1]}`) ? unescapeExcerpt(found) : found;
      masked += text.slice(at, span[0]) + this.token(value);
      at = span[1];
    };
    for (const span of spans) {
      if (open && span[0] < open[1]) {
        open[1] = Math.max(open[1], span[1]);
        continue;
      }
      if (open) close(open);
      open = [span[0], span[1]];
    }
    if (open) close(open);
    return masked + text.slice(at);
  }

  /**
   * Every string inside `value` through maskText (argument values and tokens, quoted segments,
   * personal data), a caller's own field (CALLER_FIELDS) hashed whole; keys and shape kept.
   */
  maskDetails(value: unknown, echoes: readonly string[] = [], depth = 0): unknown {
    if (typeof value === 'string') return this.maskText(value, echoes);
    // Deeper than the walk goes, nothing is kept as it is (it was never looked at).
    if (depth > MAX_DEPTH) return SECRET_MASK;
    if (typeof value !== 'object' || value === null) return value;
    if (Array.isArray(value)) return value.map((v) => this.maskDetails(v, echoes, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] =
        CALLER_FIELDS.has(k) && typeof v === 'string' && v !== SECRET_MASK
          ? this.token(v)
          : this.maskDetails(v, echoes, depth + 1);
    }
    return out;
  }

  /**
   * The record as the log may keep it. `raw`: the call's arguments as sent, when the caller has
   * them; their strings (and tokens, and keys the schema does not declare) are what a message or
   * a detail may have echoed. `declared`: the property names of the tool's input schema, null
   * when no tool was resolved (every key is then hashed). `hosts`: the egress hosts the tool's
   * definition names, the only ones `egressHost` keeps readable.
   */
  maskRecord<R extends MaskableRecord>(
    record: R,
    raw: unknown,
    declared: ReadonlySet<string> | null = null,
    hosts: readonly string[] = [],
  ): R {
    const masked: { -readonly [K in keyof MaskableRecord]: MaskableRecord[K] } = { ...record };
    if (record.argsRedacted !== undefined) {
      masked.argsRedacted = this.maskArguments(record.argsRedacted, declared);
    }
    const echoes =
      record.message !== undefined || record.details !== undefined
        ? echoesOf(raw ?? record.argsRedacted, declared)
        : [];
    if (record.message !== undefined) masked.message = this.maskText(record.message, echoes);
    if (record.details !== undefined) {
      masked.details = this.maskDetails(record.details, echoes) as Record<string, unknown>;
    }
    if (record.egressHost !== undefined) {
      masked.egressHost = this.maskHosts(record.egressHost, hosts);
    }
    // Nobody declares it and the caller may write anything there: hashed whole, like an argument.
    if (record.model !== undefined) masked.model = this.token(record.model);
    if (typeof record.runId === 'string')
      masked.runId = this.maskRunId(record.runId, record.sessionId);
    return masked as R;
  }

  /**
   * A record's run id: the one an agent chose when it opened the session is its free text (an
   * IBAN or a name fits the pattern), so its keyed hash — the same in every record of the run, and
   * the hash the classified store's search gives for the run id. The default run id, the session's
   * own id, is the gateway's and stays readable, as does a run id that is already one keyed hash
   * (an alert copies the masked record's; 32 hex digits carry nothing of anyone).
   */
  maskRunId(runId: string, sessionId: string | null | undefined): string {
    return runId === sessionId || isToken(runId) ? runId : this.token(runId);
  }

  /**
   * An egress host list (`host` or `host=address`, comma-separated): a host the tool's definition
   * names (`hosts`, its constrained egress) stays as it is — the tool's vocabulary; any other was
   * chosen by the caller (a URL argument of a tool with unconstrained egress) and is replaced by
   * its keyed hash, its address too. The list's shape is kept, so one host is one token wherever
   * it appears (the new-destination detector compares them).
   */
  maskHosts(list: string, hosts: readonly string[] = []): string {
    const named = new Set(hosts.map((h) => h.toLowerCase()));
    return list
      .split(',')
      .map((item) => {
        const at = item.indexOf('=');
        const host = at < 0 ? item : item.slice(0, at);
        if (named.has(host.trim().toLowerCase())) return this.maskText(item, [], false);
        return at < 0 ? this.token(host) : `${this.token(host)}=${this.token(item.slice(at + 1))}`;
      })
      .join(',');
  }
}

/**
 * `text` lower-cased, with, for each UTF-16 unit of the result, where the character it came from
 * starts (`from`) and ends (`to`) in `text`: lower-casing may change a character's length (`İ`
 * becomes `i` and a combining dot), and a span found in the lower-cased copy must be cut from the
 * text at the same characters, not at shifted offsets.
 */
function lowered(text: string): { lower: string; from: number[]; to: number[] } {
  let lower = '';
  const from: number[] = [];
  const to: number[] = [];
  let at = 0;
  for (const ch of text) {
    const l = ch.toLowerCase();
    lower += l;
    for (let i = 0; i < l.length; i++) {
      from.push(at);
      to.push(at + ch.length);
    }
    at += ch.length;
  }
  return { lower, from, to };
}

/** Takes one member from a budget; true when none is left (no budget: never). */
function spent(budget: { left: number } | null): boolean {
  if (budget === null) return false;
  if (budget.left <= 0) return true;
  budget.left--;
  return false;
}

/** Whether an object key is the tool's vocabulary (declared by its schema), kept as it is. */
function keptKey(k: string, declared: ReadonlySet<string> | null): boolean {
  return declared?.has(k) === true && PLAIN_KEY.test(k) && findPersonalData(k).length === 0;
}

/** The text an excerpt quoted: each `\u{hex}` back to its character (excerpt escapes `\` too). */
function unescapeExcerpt(text: string): string {
  return text.replace(/\\u\{([0-9a-f]{1,6})\}/g, (whole, hex: string) => {
    const cp = Number.parseInt(hex, 16);
    return cp <= 0x10ffff ? String.fromCodePoint(cp) : whole;
  });
}

/** Whether a quoted segment is already one keyed hash. */
function isToken(text: string): boolean {
  return /^hmac:[0-9a-f]{32}$/.test(text);
}

/**
 * What a message or a detail may have echoed of the arguments, longest first: every string value
 * (and its first 100 characters, as a refusal quotes it), every token of one (words and
 * blank-separated runs) and every key the schema does not declare, each at least 4 long.
 */
function echoesOf(args: unknown, declared: ReadonlySet<string> | null): string[] {
  const out = new Set<string>();
  const add = (v: string): void => {
    if (v.length < MIN_ECHO || v === SECRET_MASK || out.size >= MAX_ECHOES) return;
    out.add(v);
    if (v.length > ECHO_PREFIX) out.add(v.slice(0, ECHO_PREFIX));
    for (const m of v.matchAll(RUN)) if (m[0].length >= MIN_ECHO && m[0] !== v) out.add(m[0]);
    for (const m of v.matchAll(WORD)) if (m[0].length >= MIN_ECHO && m[0] !== v) out.add(m[0]);
  };
  const walk = (v: unknown, depth: number): void => {
    if (out.size >= MAX_ECHOES || depth > MAX_DEPTH) return;
    if (typeof v === 'string') {
      add(v);
    } else if (typeof v === 'number' && Math.abs(v) >= PLAIN_NUMBER_LIMIT) {
      add(String(v));
    } else if (Array.isArray(v)) {
      for (const x of v) {
        if (out.size >= MAX_ECHOES) return;
        walk(x, depth + 1);
      }
    } else if (typeof v === 'object' && v !== null) {
      for (const [k, x] of Object.entries(v)) {
        // Full: the rest of a large object is not looked at (each key costs a detector run).
        if (out.size >= MAX_ECHOES) return;
        // A declared property name is the schema's, and messages name it; any other is the
        // caller's, also as a JSON pointer in a refusal spells it (`~` as `~0`, `/` as `~1`).
        if (!keptKey(k, declared)) {
          add(k);
          add(k.replaceAll('~', '~0').replaceAll('/', '~1'));
        }
        walk(x, depth + 1);
      }
    }
  };
  walk(args, 0);
  return [...out].sort((a, b) => b.length - a.length);
}

/**
 * The property names a JSON Schema declares anywhere in it (`properties` of every nested object
 * schema, under items, combinators and definitions alike): the keys a record may keep readable.
 */
export function declaredPropertyNames(schema: unknown): ReadonlySet<string> {
  const cached = typeof schema === 'object' && schema !== null ? DECLARED.get(schema) : undefined;
  if (cached) return cached;
  const names = new Set<string>();
  const walk = (v: unknown, depth: number): void => {
    if (depth > MAX_DEPTH || typeof v !== 'object' || v === null) return;
    if (Array.isArray(v)) {
      for (const x of v) walk(x, depth + 1);
      return;
    }
    for (const [k, x] of Object.entries(v)) {
      if (k === 'properties' && typeof x === 'object' && x !== null && !Array.isArray(x)) {
        for (const name of Object.keys(x)) names.add(name);
      }
      walk(x, depth + 1);
    }
  };
  walk(schema, 0);
  if (typeof schema === 'object' && schema !== null) DECLARED.set(schema, names);
  return names;
}

const DECLARED = new WeakMap<object, ReadonlySet<string>>();
