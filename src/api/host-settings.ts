/**
 * @module What the CLI's settings file (edge/cli/settings-file.ts) and a start need from below
 * without an open gateway: a document validator, the operator roles a role map may name, and the
 * start's own readers of the single sign-on, notification, health and tracing settings and of the
 * bootstrap admin token, so that `serve` and `toolgate config check` read each setting one way
 * (edge/cli/start-settings.ts; docs/architecture.md §2).
 */
import type { Problem } from '../core/index.js';
import { isToolgateError, problem } from '../core/index.js';
import { compileDocumentValidator } from '../domain/catalog/index.js';

export { checkAdminTokenStrength, readAdminToken } from '../domain/identity/index.js';
export { oidcConfigFromEnv } from '../domain/operators/oidc/index.js';
export { uidRangeFromEnv } from '../execution/sandbox/index.js';
export { healthConfigFromEnv } from '../operations/health/index.js';
export { notifyConfigFromEnv } from '../operations/notify/index.js';
export { tracingConfigFromEnv } from '../operations/tracing/index.js';

/** A JSON Schema (draft 2020-12) as a function listing every problem with its JSON pointer. */
export function settingsValidator(schema: Record<string, unknown>): (value: unknown) => Problem[] {
  return compileDocumentValidator(schema);
}

/**
 * A refusal as problems at `pointer` (a place in the settings file): one per problem the refusal
 * lists (those inside a file the setting names keep their own pointer in the message), else one.
 */
export function refusalProblems(pointer: string, err: unknown): Problem[] {
  const message = err instanceof Error ? err.message : String(err);
  const inner = isToolgateError(err)
    ? ((err.details as { problems?: Problem[] }).problems ?? [])
    : [];
  if (inner.length === 0) return [problem(pointer, message, 'settings.value')];
  return inner.map((p) =>
    problem(
      pointer,
      message.includes(p.message)
        ? message
        : `${message}: ${p.pointer ? `${p.pointer} ` : ''}${p.message}`,
      p.rule,
    ),
  );
}

/** A start's reader of one part of the settings, its refusal as problems at `pointer`. */
export function settingProblems(pointer: string, read: () => unknown): Problem[] {
  try {
    read();
    return [];
  } catch (err) {
    return refusalProblems(pointer, err);
  }
}
