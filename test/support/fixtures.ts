/** @module Audit records to start from in tests (tool builders are in tools.ts). */
import type { AuditRecord } from '../../src/records/audit/index.js';

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
