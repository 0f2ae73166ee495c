/**
 * @module What a row of the settings file's table is (settings-file.ts, settings-tracing.ts), and
 * the schemas its rows share.
 */
type Json = Record<string, unknown>;

/** One setting: where it sits in the file, its variable, its schema and what it means. */
export interface Setting {
  /** Dotted path in the file, e.g. `server.port`. */
  readonly path: string;
  readonly env: string;
  readonly schema: Json;
  readonly description: string;
  /**
   * The variable's text for a value (lists are comma-separated; booleans as the reader wants);
   * null: the value sets nothing (it is the default).
   */
  readonly text?: (value: unknown) => string | null;
}

export const list = (value: unknown): string => (value as string[]).join(',');
export const str = { type: 'string', minLength: 1, maxLength: 4096 };
export const path = { type: 'string', minLength: 1, maxLength: 4096 };
export const url = { type: 'string', minLength: 1, maxLength: 2048, pattern: '^https?://' };
export const strings = (max: number) => ({
  type: 'array',
  maxItems: max,
  items: { type: 'string', minLength: 1, maxLength: 2048 },
});
export const int = (minimum: number, maximum: number) => ({ type: 'integer', minimum, maximum });
