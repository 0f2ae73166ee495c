/** @module Version lifecycle (C2): the allowed transitions and the effective state at a time. */
import type { LifecycleState } from './tool-definition.js';

export const DEFAULT_MIGRATION_WINDOW_DAYS = 30;
export const MAX_MIGRATION_WINDOW_DAYS = 3650;

/**
 * Retired is terminal. Active → retired directly is the kill switch for a tool found unsafe;
 * deprecated → active undoes a deprecation before its window ends.
 */
const ALLOWED: Readonly<Record<LifecycleState, readonly LifecycleState[]>> = {
  draft: ['active', 'retired'],
  active: ['deprecated', 'retired'],
  deprecated: ['active', 'retired'],
  retired: [],
};

export function canTransition(from: LifecycleState, to: LifecycleState): boolean {
  return ALLOWED[from].includes(to);
}

/** A deprecated version whose window has ended is retired, whether or not the sweep has run yet. */
export function effectiveLifecycle(
  stored: LifecycleState,
  retireAt: string | null,
  now: Date,
): LifecycleState {
  if (stored === 'deprecated' && retireAt !== null && Date.parse(retireAt) <= now.getTime()) {
    return 'retired';
  }
  return stored;
}

/** Only these states are ever offered to agents (deprecated ones with a warning). */
export function isOfferable(state: LifecycleState): boolean {
  return state === 'active' || state === 'deprecated';
}

/** The effective state of a version read earlier (and cached) at a later time. */
export function effectiveLifecycleOf(
  version: { readonly lifecycle: LifecycleState; readonly retire_at: string | null },
  now: Date,
): LifecycleState {
  return effectiveLifecycle(version.lifecycle, version.retire_at, now);
}
