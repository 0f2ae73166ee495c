/** @module Branded identifiers, so a tool id can never be passed where an agent id is expected. */
import { randomFillSync } from 'node:crypto';

declare const brand: unique symbol;
export type Brand<T, B extends string> = T & { readonly [brand]: B };

export type ToolId = Brand<string, 'ToolId'>;
export type AgentId = Brand<string, 'AgentId'>;
export type EventSeq = Brand<number, 'EventSeq'>;

/** Lower-case dotted identifier: `search_tickets`, `github.create_issue`. */
export const TOOL_ID_PATTERN = '^[a-z][a-z0-9_-]{0,62}(\\.[a-z][a-z0-9_-]{0,62}){0,3}$';
/** Agent ids share the shape of tool ids minus the dots. */
export const AGENT_ID_PATTERN = '^[a-z][a-z0-9_-]{0,62}$';
/** Capabilities are namespaced words: `tickets:read`, `email.send`. */
export const CAPABILITY_PATTERN = '^[a-z][a-z0-9_-]*([:.][a-z][a-z0-9_-]*)*$';

const toolIdRe = new RegExp(TOOL_ID_PATTERN);
const agentIdRe = new RegExp(AGENT_ID_PATTERN);

export function isToolId(value: string): value is ToolId {
  return toolIdRe.test(value) && value.length <= 200;
}

export function isAgentId(value: string): value is AgentId {
  return agentIdRe.test(value);
}

/** Casts after the caller has validated; never use on untrusted input without a check. */
export function asToolId(value: string): ToolId {
  return value as ToolId;
}

export function asAgentId(value: string): AgentId {
  return value as AgentId;
}

/** A team that owns tools or agents: `support-team`, `payments@acme`. */
export const OWNER_PATTERN = '^[a-zA-Z0-9][a-zA-Z0-9_.@-]{0,99}$';

/**
 * A unique id whose text sorts by creation time: `prefix` + 12 hex digits of Unix milliseconds +
 * 16 base64url characters of randomness (96 bits). Stored ids that grow in order land at the
 * right edge of their B-tree index: one page per group commit instead of one per row.
 */
export function timeOrderedId(prefix: string, nowMs: number = Date.now()): string {
  const time = Math.max(0, Math.floor(nowMs)).toString(16).padStart(12, '0');
  return `${prefix}${time}${randomChunk().toString('base64url')}`;
}

/** Random bytes drawn 12 at a time from a pool filled by the CSPRNG 4 KiB at a time. */
const POOL = Buffer.alloc(12 * 341);
let poolAt = POOL.length;

function randomChunk(): Buffer {
  if (poolAt + 12 > POOL.length) {
    randomFillSync(POOL);
    poolAt = 0;
  }
  poolAt += 12;
  return POOL.subarray(poolAt - 12, poolAt);
}
