/** @module How the CLI prints: JSON with --json, short human text otherwise; errors the same way. */
import {
  type ErrorBody,
  internalErrorBody,
  isStoreCorrupt,
  isToolgateError,
  UNPRINTABLE_CLASS,
  visibleEscapes,
} from '../../core/index.js';
import { exitCodeForError } from './exit-codes.js';

export interface Output {
  readonly json: boolean;
  result(value: unknown, human: () => string): void;
}

/**
 * Every UNPRINTABLE_CLASS character (core/visible-text.ts) but the newlines of JSON's own layout:
 * JSON string escaping leaves DEL and C1 controls, format and default-ignorable characters and the
 * line and paragraph separators raw (attack rounds 16 and 17).
 */
const HIDDEN_IN_JSON = new RegExp(String.raw`(?!\n)[${UNPRINTABLE_CLASS}]`, 'gu');

/**
 * The one way the CLI writes JSON: indented, with every control, invisible or reordering character
 * as a `\uXXXX` escape (a surrogate pair beyond the first plane). Still valid JSON that parses to
 * the same value, but a terminal shows what the value holds instead of obeying it.
 */
export function jsonText(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(HIDDEN_IN_JSON, (c) => {
    let out = '';
    for (let i = 0; i < c.length; i++) {
      out += `\\u${c.charCodeAt(i).toString(16).toUpperCase().padStart(4, '0')}`;
    }
    return out;
  });
}

export function makeOutput(json: boolean): Output {
  return {
    json,
    result(value, human) {
      // Human text holds names and descriptions from agents and upstream servers: every control
      // or invisible character in it is escaped, so none can rewrite the operator's terminal.
      process.stdout.write(json ? `${jsonText(value)}\n` : `${visibleEscapes(human())}\n`);
    },
  };
}

/** What an operating-system error code means, in the words an operator reads. */
const ERRNO_WORDS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'is a directory',
  ENOTDIR: 'not a directory',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on device',
  EEXIST: 'already exists',
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  ETIMEDOUT: 'timed out',
};

/**
 * A failed system call of this command (a file it was told to read, a folder it must create) as
 * one line naming the path: an operator's mistake or the host's state, not a bug.
 */
function systemErrorBody(err: unknown): ErrorBody | null {
  const e = err as { code?: unknown; syscall?: unknown; path?: unknown } | null;
  if (typeof e !== 'object' || e === null) return null;
  if (typeof e.code !== 'string' || typeof e.syscall !== 'string') return null;
  const what = ERRNO_WORDS[e.code] ?? e.code;
  const path = typeof e.path === 'string' ? ` ${e.path}` : '';
  return {
    code: 'INPUT_INVALID',
    message: `cannot ${e.syscall}${path}: ${what}`,
    details: { problems: [] },
  };
}

/** The stack of a bug is printed only when asked for: TOOLGATE_DEBUG=1. */
function debugging(): boolean {
  return process.env.TOOLGATE_DEBUG === '1';
}

/**
 * A bug (anything that is not a refusal, a usage error, a failed system call or a damaged
 * database): one line on stderr naming it and saying how to see more; its stack only with
 * TOOLGATE_DEBUG=1. The printed body is the catalogue's INTERNAL, which never echoes the error.
 */
function reportBug(err: unknown): ErrorBody {
  const stack = debugging() && err instanceof Error ? err.stack : undefined;
  const line = err instanceof Error ? err.message.split('\n')[0] : String(err);
  process.stderr.write(
    stack !== undefined
      ? `toolgate: unexpected error: ${visibleEscapes(stack)}\n`
      : `toolgate: unexpected error: ${visibleEscapes(line ?? '')} (a bug: TOOLGATE_DEBUG=1 prints its stack; please report it)\n`,
  );
  return internalErrorBody();
}

/**
 * Prints a refusal as `{ error: { code, message, details } }` on stdout (--json) or readable lines
 * on stderr; returns the exit code of its class (exit-codes.ts). Never prints a stack trace: an
 * operational error (a missing file, a locked or unreachable database, a bad option) is one clear
 * line; a bug is one line too, its stack only with TOOLGATE_DEBUG=1.
 */
export function reportError(
  err: unknown,
  json: boolean,
  /** Where the JSON goes: stdout, unless stdout is a protocol's own (`toolgate mcp`). */
  jsonTo: NodeJS.WritableStream = process.stdout,
): number {
  let body: ErrorBody;
  const system = systemErrorBody(err);
  if (isToolgateError(err)) body = err.toBody();
  else if (err instanceof TypeError || (err instanceof Error && err.name === 'CommanderError')) {
    body = { code: 'INPUT_INVALID', message: err.message, details: { problems: [] } };
  } else if (system !== null) {
    body = system;
  } else if (isStoreCorrupt(err)) {
    // A file that is no database (a wrong --db) or a damaged one: the operator's to fix, not a bug.
    body = {
      code: 'STORE_UNAVAILABLE',
      message: `the database cannot be read: ${err.message} (${err.code}); check that --db names a toolgate database`,
      details: {},
    };
  } else {
    body = reportBug(err);
    if (!json) return exitCodeForError(body.code);
  }
  printErrorBody(body, json, jsonTo);
  return exitCodeForError(body.code);
}

/** Prints a refusal's body: JSON (on stdout by default) with --json, else its lines on stderr. */
export function printErrorBody(
  body: ErrorBody,
  json: boolean,
  jsonTo: NodeJS.WritableStream = process.stdout,
): void {
  if (json) {
    jsonTo.write(`${jsonText({ error: body })}\n`);
    return;
  }
  process.stderr.write(`error ${body.code}: ${visibleEscapes(body.message)}\n`);
  const problems =
    (body.details as { problems?: { pointer: string; message: string }[] }).problems ?? [];
  for (const p of problems)
    process.stderr.write(
      `  ${visibleEscapes(p.pointer || '(document)')}: ${visibleEscapes(p.message)}\n`,
    );
}

const CELL_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * A cell's text with newline, return and tab as `\n`, `\r`, `\t` and every other control, invisible or
 * reordering character as a visible escape (visibleEscapes: `\u202E`, `\u{E0041}`): a value
 * stored before its field was checked (a token name holding a newline) can neither break its row
 * into a forged one nor reorder what the row shows.
 */
function cellText(cell: string): string {
  return visibleEscapes(cell.replace(/[\n\r\t]/g, (c) => CELL_ESCAPES[c] ?? c));
}

/** Rows as aligned text; every cell through cellText, so one row is one line. */
export function table(rows: readonly (readonly string[])[]): string {
  if (rows.length === 0) return '';
  const cells = rows.map((r) => r.map(cellText));
  const widths = cells[0]?.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length))) ?? [];
  return cells
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** The human form of a page: its table, then how to get the next page when there is one. */
export function withNextCursor(text: string, next: string | null): string {
  return next === null ? text : `${text}\nmore: --cursor ${next}`;
}
