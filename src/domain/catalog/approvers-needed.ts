/** @module How many approvers a tool's registration or grant needs (C1, C4). */
import type { ToolDefinition } from './tool-definition.js';

/** 2 for irreversible and permission-changing tools, 1 for other privileged ones, else 0. */
export function approversNeeded(def: Pick<ToolDefinition, 'action_class' | 'access_tier'>): number {
  if (def.action_class === 'irreversible' || def.action_class === 'permission_change') return 2;
  return def.access_tier === 'privileged' ? 1 : 0;
}
