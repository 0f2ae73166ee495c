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
import { findPersonalData } from '../content/index.js';
import { canonicalJson } from '../core/index.js';

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
/** An object key is kept only when it reads like a schema's property name. */
const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;
/** Argument values shorter than this are not looked for in messages (too likely by chance). */
const MIN_ECHO = 4;
/** A refusal quotes at most this many characters of a value (policy-verdict.ts excerpt). */
const ECHO_PREFIX = 100;
const MAX_DEPTH = 32;
/** Argument strings looked for in one message at most (the longest first). */
const MAX_ECHOES = 256;

/** The fields of an audit record (audit-writer.ts) that can carry what a caller supplied. */
export interface MaskableRecord {
  readonly argsRedacted: unknown;
  readonly message?: string;
  readonly details?: Readonly<Record<string, unknown>>;
  readonly egressHost?: string;
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

  /** The keyed hash of one JSON value (a string, a number); the same value, the same token. */
  token(value: unknown): string {
    let text: string;
    try {
      text = canonicalJson(value);
    } catch {
      text = String(value);
    }
    const mac = createHmac('sha256', this.#k).update(text).digest('hex');
    return `${PSEUDONYM_PREFIX}${mac.slice(0, 32)}`;
  }

  /**
   * The log's copy of (already secret-masked) arguments: the shape kept, every string, large
   * number and odd key hashed, booleans and null as they are. Never throws, never returns the input.
   */
  maskArguments(value: unknown, depth = 0): unknown {
    if (depth > MAX_DEPTH) return SECRET_MASK;
    if (typeof value === 'string') return value === SECRET_MASK ? value : this.token(value);
    if (typeof value === 'number') {
      return Number.isFinite(value) && Math.abs(value) < PLAIN_NUMBER_LIMIT
        ? value
        : this.token(value);
    }
    if (typeof value === 'boolean' || value === null) return value;
    if (Array.isArray(value)) return value.map((v) => this.maskArguments(v, depth + 1));
    if (typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) {
        out[this.#key_(k)] = this.maskArguments(v, depth + 1);
      }
      return out;
    }
    return null;
  }

  #key_(k: string): string {
    return PLAIN_KEY.test(k) && findPersonalData(k).length === 0 ? k : this.token(k);
  }

  /**
   * Free text with the given argument values (and their quoted prefix) and every piece of
   * personal data the detectors find replaced by their keyed hashes.
   */
  maskText(text: string, echoes: readonly string[] = []): string {
    let out = text;
    for (const echo of echoes) {
      if (out.includes(echo)) out = out.split(echo).join(this.token(echo));
    }
    const found = findPersonalData(out).sort((a, b) => a.start - b.start || b.end - a.end);
    if (found.length === 0) return out;
    let masked = '';
    let at = 0;
    for (const f of found) {
      if (f.start < at) continue; // overlaps a span already replaced
      masked += out.slice(at, f.start) + this.token(out.slice(f.start, f.end));
      at = f.end;
    }
    return masked + out.slice(at);
  }

  /** Every string inside `value` through maskText (personal data only); keys and shape kept. */
  maskDetails(value: unknown, depth = 0): unknown {
    if (typeof value === 'string') return this.maskText(value);
    if (depth > MAX_DEPTH || typeof value !== 'object' || value === null) return value;
    if (Array.isArray(value)) return value.map((v) => this.maskDetails(v, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = this.maskDetails(v, depth + 1);
    return out;
  }

  /**
   * The record as the log may keep it. `raw`: the call's arguments as sent, when the caller has
   * them; their strings are what a message may have echoed.
   */
  maskRecord<R extends MaskableRecord>(record: R, raw: unknown): R {
    const masked: { -readonly [K in keyof MaskableRecord]: MaskableRecord[K] } = { ...record };
    if (record.argsRedacted !== undefined) {
      masked.argsRedacted = this.maskArguments(record.argsRedacted);
    }
    if (record.message !== undefined) {
      masked.message = this.maskText(record.message, echoesOf(raw ?? record.argsRedacted));
    }
    if (record.details !== undefined) {
      masked.details = this.maskDetails(record.details) as Record<string, unknown>;
    }
    if (record.egressHost !== undefined) masked.egressHost = this.maskText(record.egressHost);
    return masked as R;
  }
}

/** The argument strings a message may quote, longest first, each also cut as a refusal quotes it. */
function echoesOf(args: unknown): string[] {
  const out = new Set<string>();
  const walk = (v: unknown, depth: number): void => {
    if (out.size >= MAX_ECHOES || depth > MAX_DEPTH) return;
    if (typeof v === 'string') {
      if (v.length >= MIN_ECHO && v !== SECRET_MASK) {
        out.add(v);
        if (v.length > ECHO_PREFIX) out.add(v.slice(0, ECHO_PREFIX));
      }
    } else if (Array.isArray(v)) {
      for (const x of v) walk(x, depth + 1);
    } else if (typeof v === 'object' && v !== null) {
      for (const [k, x] of Object.entries(v)) {
        // A property name is the schema's, and messages name it; an odd key is the caller's.
        if (!PLAIN_KEY.test(k)) walk(k, depth + 1);
        walk(x, depth + 1);
      }
    }
  };
  walk(args, 0);
  return [...out].sort((a, b) => b.length - a.length);
}
