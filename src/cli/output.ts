/** @module How the CLI prints: JSON with --json, short human text otherwise; errors the same way. */
import { type ErrorBody, internalErrorBody, isToolgateError } from '../core/index.js';

export interface Output {
  readonly json: boolean;
  result(value: unknown, human: () => string): void;
}

export function makeOutput(json: boolean): Output {
  return {
    json,
    result(value, human) {
      process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${human()}\n`);
    },
  };
}

/** Prints a refusal as `{ code, message, details }` (JSON) or readable lines; returns the exit code. */
export function reportError(err: unknown, json: boolean): number {
  let body: ErrorBody;
  if (isToolgateError(err)) body = err.toBody();
  else if (err instanceof TypeError || (err instanceof Error && err.name === 'CommanderError')) {
    body = { code: 'INPUT_INVALID', message: err.message, details: { problems: [] } };
  } else {
    process.stderr.write(
      `toolgate: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    body = internalErrorBody();
  }
  if (json) {
    process.stdout.write(`${JSON.stringify({ error: body }, null, 2)}\n`);
  } else {
    process.stderr.write(`error ${body.code}: ${body.message}\n`);
    const problems =
      (body.details as { problems?: { pointer: string; message: string }[] }).problems ?? [];
    for (const p of problems)
      process.stderr.write(`  ${p.pointer || '(document)'}: ${p.message}\n`);
  }
  return 1;
}

export function table(rows: readonly (readonly string[])[]): string {
  if (rows.length === 0) return '';
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows
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
