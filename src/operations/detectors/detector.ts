/**
 * @module What a detector sees and what it raises (C13). Detectors are pure state
 * machines over committed audit records: no I/O in `observe`, bounded memory, baselines loaded
 * once from the store.
 */
import type { Kysely } from 'kysely';
import type { AuditRecord } from '../../records/audit/index.js';
import type { Database } from '../../records/store/index.js';

export type DetectorName =
  | 'new_destination'
  | 'read_then_egress'
  | 'egress_volume'
  | 'deny_rate'
  | 'off_hours'
  | 'read_only_write';

/** The catalog facts of the tool a record is about (resolved by the engine). */
export interface ToolFacts {
  readonly id: string;
  readonly actionClass: string;
  readonly dataAccess: string;
  readonly egress: string;
}

/** One committed record with what the engine could resolve about its tool and agent. */
export interface Observed {
  readonly record: AuditRecord;
  /** Null when the record names no tool the catalog knows. */
  readonly tool: ToolFacts | null;
  /** Whether every tool the agent's grants unlock is a read; null when unknown. */
  readonly agentReadOnly: boolean | null;
}

export interface Alert {
  readonly detector: DetectorName;
  readonly at: Date;
  readonly message: string;
  readonly sessionId: string | null;
  readonly runId: string | null;
  readonly agentId: string | null;
  readonly userId: string | null;
  readonly toolId: string | null;
  readonly toolVersion: string | null;
  /** Facts that explain the alert; never raw arguments. */
  readonly details: Readonly<Record<string, unknown>>;
}

export interface Detector {
  readonly name: DetectorName;
  /** Loads the baseline it needs from the audit log (once, at start). */
  load?(db: Kysely<Database>, now: Date): Promise<void>;
  observe(o: Observed): Alert[];
}

/** An alert about the record's own session, agent and tool. */
export function alertOf(
  detector: DetectorName,
  o: Observed,
  message: string,
  details: Readonly<Record<string, unknown>>,
): Alert {
  const r = o.record;
  return {
    detector,
    at: r.at,
    message,
    sessionId: r.sessionId,
    runId: r.runId,
    agentId: r.agentId,
    userId: r.userId,
    toolId: o.tool?.id ?? r.toolId,
    toolVersion: r.toolVersion,
    details,
  };
}

/** Records that are an attempt to call a tool (allowed, denied or waiting for approval). */
export function isAttempt(r: AuditRecord): boolean {
  return r.kind === 'call.pre' || r.kind === 'call.denied' || r.kind === 'call.pending_approval';
}

/** The destination hosts a call record names (the gate joins several with commas). */
export function hostsOf(r: AuditRecord): string[] {
  if (!r.egressHost) return [];
  return r.egressHost
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter((h) => h.length > 0);
}
