/**
 * @module What the CLI's settings file (edge/cli/settings-file.ts) needs from below without an open
 * gateway: a document validator, the operator roles a role map may name, and the start's own
 * readers of the single sign-on, notification, health and tracing settings, so that `toolgate config check`
 * refuses exactly what a start would (docs/architecture.md §2).
 */
import type { Problem } from '../core/index.js';
import { problem } from '../core/index.js';
import { compileDocumentValidator } from '../domain/catalog/index.js';
import { oidcConfigFromEnv } from '../domain/operators/oidc/index.js';
import { healthConfigFromEnv } from '../operations/health/index.js';
import { notifyConfigFromEnv } from '../operations/notify/index.js';
import { tracingConfigFromEnv } from '../operations/tracing/index.js';

/** A JSON Schema (draft 2020-12) as a function listing every problem with its JSON pointer. */
export function settingsValidator(schema: Record<string, unknown>): (value: unknown) => Problem[] {
  return compileDocumentValidator(schema);
}

/** A start's reader of one part of the settings, its refusal as a problem at `pointer`. */
export function settingProblems(pointer: string, read: () => unknown): Problem[] {
  try {
    read();
    return [];
  } catch (err) {
    return [problem(pointer, err instanceof Error ? err.message : String(err), 'settings.value')];
  }
}

/** The problems a start would refuse with in single sign-on, notifications, health and tracing. */
export function startSettingsProblems(env: NodeJS.ProcessEnv, publicUrl: string): Problem[] {
  return [
    ...settingProblems('/oidc', () => oidcConfigFromEnv(env, publicUrl)),
    ...settingProblems('/notify', () => notifyConfigFromEnv(env, publicUrl)),
    ...settingProblems('/health', () => healthConfigFromEnv(env)),
    ...settingProblems('/tracing', () => tracingConfigFromEnv(env)),
  ];
}
