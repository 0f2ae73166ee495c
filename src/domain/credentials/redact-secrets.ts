/**
 * @module Scrubbing a tool's own credentials from what it returns (C11): every string
 * (and object key, and number) in a result, stderr or log text is searched for the exact secret
 * values and their common encodings — JSON-escaped, URL-encoded, base64 (standard and URL-safe,
 * at any byte alignment) and hex — and each occurrence is replaced by a mask. The caller flags
 * the event when anything was redacted.
 */

export const SECRET_MASK = '[REDACTED]';

/** Encodings shorter than this are not searched: they would match ordinary text. */
const MIN_FORM_CHARS = 8;
const MAX_DEPTH = 256;
const MAX_PASSES = 8;

function jsonEscaped(s: string): string {
  return JSON.stringify(s).slice(1, -1);
}

/** JSON as serializers that escape everything outside ASCII write it. */
function jsonAsciiEscaped(s: string): string {
  return jsonEscaped(s).replace(
    /[^\x20-\x7e]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * The stretch of base64 that depends only on the secret's bytes when they start `offset` bytes
 * into a 3-byte group: it appears wherever the secret is embedded in a longer base64 payload.
 */
function base64Core(bytes: Buffer, offset: number): string {
  const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
  const start = Math.ceil((8 * offset) / 6);
  const end = Math.floor((8 * (offset + bytes.length)) / 6);
  return encoded.slice(start, end);
}

/** Every form of every secret to search for, longest first so a longer match wins. */
export function secretForms(secrets: readonly string[]): string[] {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (typeof secret !== 'string' || secret.length === 0) continue;
    forms.add(secret);
    const derived: string[] = [jsonEscaped(secret), jsonAsciiEscaped(secret)];
    try {
      const url = encodeURIComponent(secret);
      derived.push(
        url,
        url.replace(/%20/g, '+'),
        url.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
      );
      derived.push(encodeURI(secret));
    } catch {
      // A lone surrogate has no URL encoding; the other forms still apply.
    }
    const bytes = Buffer.from(secret, 'utf8');
    derived.push(bytes.toString('hex'), bytes.toString('hex').toUpperCase());
    for (const offset of [0, 1, 2]) {
      const core = base64Core(bytes, offset);
      derived.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
    }
    for (const form of derived) if (form.length >= MIN_FORM_CHARS) forms.add(form);
  }
  return [...forms].sort((a, b) => b.length - a.length);
}

function scrubString(text: string, forms: readonly string[]): string {
  let out = text;
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    let changed = false;
    for (const form of forms) {
      if (out.includes(form)) {
        out = out.split(form).join(SECRET_MASK);
        changed = true;
      }
    }
    // A mask next to leftover text can spell a secret again; go round until nothing matches.
    if (!changed) return out;
  }
  return forms.some((f) => out.includes(f)) ? SECRET_MASK : out;
}

/**
 * A copy of `value` with every occurrence of the secrets masked, and whether anything was.
 * Never mutates its input, never throws on any JSON value, and fails closed: a subtree too deep
 * to walk is masked whole.
 */
export function redactSecrets(
  value: unknown,
  secrets: readonly string[],
): { value: unknown; redacted: boolean } {
  const forms = secretForms(secrets);
  if (forms.length === 0) return { value, redacted: false };
  let redacted = false;
  const text = (s: string): string => {
    const out = scrubString(s, forms);
    if (out !== s) redacted = true;
    return out;
  };
  const walk = (v: unknown, depth: number): unknown => {
    if (depth > MAX_DEPTH) {
      redacted = true;
      return SECRET_MASK;
    }
    if (typeof v === 'string') return text(v);
    if (typeof v === 'number' || typeof v === 'bigint') {
      const s = String(v);
      return text(s) === s ? v : SECRET_MASK;
    }
    if (Array.isArray(v)) return v.map((item) => walk(item, depth + 1));
    if (typeof v === 'object' && v !== null) {
      const out: Record<string, unknown> = {};
      for (const [k, item] of Object.entries(v)) {
        let key = text(k);
        // Two keys masked alike must not overwrite each other's (scrubbed) values.
        for (let n = 2; Object.hasOwn(out, key); n++) key = `${text(k)}#${n}`;
        // defineProperty: a `__proto__` key from JSON.parse stays a key, not a prototype.
        Object.defineProperty(out, key, {
          value: walk(item, depth + 1),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
    return v;
  };
  const result = walk(value, 0);
  return { value: result, redacted };
}
