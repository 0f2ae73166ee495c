/**
 * @module Audit records to start from in tests. The tool builders it once held live in tools.ts;
 * the re-export below serves the suites not yet moved to it.
 */
import type { AuditRecord } from '../../src/records/audit/index.js';

export { DEMO_TOOL_IDS, type Definition, validSendTool, validTool } from './tools.js';

/** A `call.denied` audit record of agent-a with `{ i }` as its arguments; `extra` overrides fields. */
export function deniedRecord(
  callId: string,
  i: number,
  extra: Partial<Mutable<AuditRecord>> = {},
): AuditRecord {
  return {
    kind: 'call.denied',
    at: new Date(),
    callId,
    sessionId: null,
    runId: null,
    agentId: 'agent-a',
    userId: null,
    toolId: null,
    toolVersion: null,
    argsHash: null,
    argsRedacted: { i },
    decision: 'deny',
    ...extra,
  };
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
