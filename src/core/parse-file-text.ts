/**
 * @module The text of a file a setting names (the settings file, the detectors' and the OAuth
 * configuration, a JWKS) as data. A mistake is reported by its kind, line and column only, never by
 * quoting the text: these files hold secrets (an alert webhook's token, a signing key), a file may
 * be named by mistake (a key file, /etc/shadow), and a start's error goes to a terminal or a journal.
 */
import { parseDocument } from 'yaml';
import { ToolgateError } from './errors.js';
import { problem } from './problem.js';

/**
 * YAML 1.2 (core schema, so JSON too): unique keys, no anchors or aliases, no merge keys, and every
 * warning (an unknown tag, …) refused like an error; or strict JSON (`json`). Throws INPUT_INVALID
 * (`WHAT: why`, and the why as one problem, rule `file.syntax`) naming the kind of mistake and
 * where it is. `what` names the file: the setting and its path.
 */
export function parseFileText(
  text: string,
  what: string,
  format: 'yaml' | 'json' = 'yaml',
): unknown {
  try {
    return format === 'json' ? parseJson(text) : parseYaml(text);
  } catch (err) {
    const why = err instanceof Malformed ? err.message : 'cannot be parsed';
    throw new ToolgateError('INPUT_INVALID', `${what}: ${why}`, {
      problems: [problem('', why, 'file.syntax')],
    });
  }
}

/** A mistake in words of our own, safe to show. */
class Malformed extends Error {}

function malformed(message: string): Malformed {
  return new Malformed(message);
}

function parseYaml(text: string): unknown {
  const doc = parseDocument(text, {
    schema: 'core',
    uniqueKeys: true,
    merge: false,
    strict: true,
    prettyErrors: false,
  });
  const first = doc.errors[0] ?? doc.warnings[0];
  if (first) throw malformed(`not valid YAML or JSON (${first.code}${where(text, first.pos[0])})`);
  try {
    return doc.toJS({ maxAliasCount: 0 }) ?? {};
  } catch {
    // An alias: never expanded (its expansion is how a small file becomes a huge value).
    throw malformed('not valid here: YAML anchors and aliases are refused');
  }
}

/** V8's JSON.parse messages quote the text around a mistake: only the position is kept. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const words = err instanceof Error ? err.message : '';
    const position = /at position (\d+)/.exec(words)?.[1];
    if (position === undefined)
      throw malformed(
        words.includes('end of JSON') ? 'not valid JSON (it ends early)' : 'not valid JSON',
      );
    throw malformed(`not valid JSON (${where(text, Number(position)).slice(1)})`);
  }
}

/** ` at line L, column C` of an offset into `text` (both from 1); nothing of the text itself. */
export function where(text: string, offset: number): string {
  const before = text.slice(0, offset).split('\n');
  return ` at line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1}`;
}
