/**
 * @module The spellings of a path argument that some layer between the caller and the file would
 * read differently from the gate: URL-encoding, shell expansion, `file:` URLs and look-alike
 * separators. Each is refused under its own rule rather than taken as a literal name (C6).
 */
import { excerpt } from './policy-verdict.js';

export interface PathFormRefusal {
  readonly rule:
    | 'path.encoded'
    | 'path.expansion'
    | 'path.file_url'
    | 'path.lookalike'
    | 'path.syntax';
  readonly message: string;
}

/**
 * Look-alikes of `.`, `/` and `\` that Unicode compatibility normalisation (NFKC) leaves alone:
 * they would not be caught by the NFKC test below, yet read as separators on a review screen.
 */
const CONFUSABLE_SEPARATORS = new Set([
  0x2044, // FRACTION SLASH
  0x2215, // DIVISION SLASH
  0x2216, // SET MINUS
  0x2571, // BOX DRAWINGS LIGHT DIAGONAL
  0x27cb, // MATHEMATICAL RISING DIAGONAL
  0x27cd, // MATHEMATICAL FALLING DIAGONAL
  0x29f5, // REVERSE SOLIDUS OPERATOR
  0x29f8, // BIG SOLIDUS
  0x29f9, // BIG REVERSE SOLIDUS
  0x3002, // IDEOGRAPHIC FULL STOP
  0x2e31, // WORD SEPARATOR MIDDLE DOT
  0x0701, // SYRIAC SUPRALINEAR FULL STOP
  0x0702, // SYRIAC SUBLINEAR FULL STOP
  0xa60e, // VAI FULL STOP
  0x1735, // PHILIPPINE SINGLE PUNCTUATION
]);

const SEPARATORS = new Set(['.', '/', '\\']);

function isAsciiAlnum(ch: string): boolean {
  return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

function isHexDigit(ch: string | undefined): boolean {
  return (
    ch !== undefined &&
    ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F'))
  );
}

/** `$` then a name, a brace or a parenthesis: what a shell (or `envsubst`) would expand. */
function isExpansionAt(raw: string, index: number): boolean {
  const next = raw[index + 1];
  return next !== undefined && (isAsciiAlnum(next) || next === '_' || next === '{' || next === '(');
}

/**
 * The first form problem of `raw`, or undefined. Checked in this order, so one rule answers for
 * a path that has several: `file:`, expansion, encoding, look-alikes, then backslashes and
 * control characters. Never touches the file system.
 */
export function pathFormProblem(raw: string): PathFormRefusal | undefined {
  // A `file:` URL names a path in another syntax (with its own decoding): refused, not parsed.
  if (raw.slice(0, 5).toLowerCase() === 'file:') {
    return {
      rule: 'path.file_url',
      message: `path ${excerpt(raw)} is a file: URL; give the path itself`,
    };
  }
  // A shell, or a tool that calls one, would expand `~`, `~user` and `~+` to a directory.
  if (raw.startsWith('~')) {
    return {
      rule: 'path.expansion',
      message: `path ${excerpt(raw)} starts with "~", which a shell expands to a home directory`,
    };
  }
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] === '$' && isExpansionAt(raw, i)) {
      return {
        rule: 'path.expansion',
        message: `path ${excerpt(raw)} holds a "$" expansion ($VAR, \${VAR} or $(…)); none is expanded, so none is allowed`,
      };
    }
  }
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] === '%' && isHexDigit(raw[i + 1]) && isHexDigit(raw[i + 2])) {
      return {
        rule: 'path.encoded',
        message: `path ${excerpt(raw)} holds a percent-encoded character; give the path unencoded`,
      };
    }
  }
  for (const ch of raw) {
    const cp = ch.codePointAt(0) ?? 0;
    if (cp < 0x80) continue;
    const compat = ch.normalize('NFKC');
    if (CONFUSABLE_SEPARATORS.has(cp) || [...compat].some((c) => SEPARATORS.has(c))) {
      return {
        rule: 'path.lookalike',
        message: `path ${excerpt(raw)} holds U+${cp.toString(16).toUpperCase().padStart(4, '0')}, which looks like a dot or a slash`,
      };
    }
  }
  // Backslashes are Windows separators to some tools and escapes to others; control characters
  // hide in logs and review screens. Both are refused rather than interpreted.
  for (const ch of raw) {
    const cp = ch.codePointAt(0) ?? 0;
    if (ch === '\\')
      return { rule: 'path.syntax', message: `path ${excerpt(raw)} contains a backslash` };
    if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) {
      return { rule: 'path.syntax', message: `path ${excerpt(raw)} contains a control character` };
    }
  }
  return undefined;
}
