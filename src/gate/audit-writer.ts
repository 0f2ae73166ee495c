/**
 * @module Appends call records to the audit log (DESIGN.md C12). The pre-execution record is
 * committed (synchronous=FULL on SQLite) before the tool runs; nothing here ever updates a record.
 * Chaining and Merkle checkpoints come with the audit issue (6).
 */
import type { Kysely } from 'kysely';
import type { Database, NewAuditRow } from '../store/index.js';

export type AuditKind = 'call.pre' | 'call.post' | 'call.denied' | 'call.pending_approval';

export interface AuditRecord {
  readonly kind: AuditKind;
  readonly at: Date;
  readonly callId: string;
  readonly sessionId: string | null;
  readonly runId: string | null;
  readonly agentId: string | null;
  readonly userId: string | null;
  readonly toolId: string | null;
  readonly toolVersion: string | null;
  readonly argsHash: string | null;
  readonly argsRedacted: unknown;
  readonly decision: 'allow' | 'deny' | 'pending_approval';
  readonly code?: string;
  readonly rule?: string;
  readonly message?: string;
  readonly approvalId?: string;
  readonly approver?: string;
  readonly egressHost?: string;
  readonly bytesOut?: number;
  readonly durationMs?: number;
  readonly outcome?: string;
  readonly model?: string;
  readonly details?: Readonly<Record<string, unknown>>;
}

function toRow(r: AuditRecord): NewAuditRow {
  return {
    at: r.at.toISOString(),
    kind: r.kind,
    call_id: r.callId,
    trace_id: r.callId,
    session_id: r.sessionId,
    run_id: r.runId,
    agent_id: r.agentId,
    user_id: r.userId,
    tool_id: r.toolId,
    tool_version: r.toolVersion,
    args_hash: r.argsHash,
    args_redacted: r.argsRedacted === undefined ? null : JSON.stringify(r.argsRedacted),
    decision: r.decision,
    code: r.code ?? null,
    rule: r.rule ?? null,
    message: r.message ?? null,
    approval_id: r.approvalId ?? null,
    approver: r.approver ?? null,
    egress_host: r.egressHost ?? null,
    bytes_out: r.bytesOut ?? null,
    duration_ms: r.durationMs ?? null,
    outcome: r.outcome ?? null,
    model: r.model ?? null,
    details: JSON.stringify(r.details ?? {}),
  };
}

/** Appends one record; the returned promise settles after the commit (durable). */
export async function appendAudit(
  db: Kysely<Database>,
  record: AuditRecord,
  rawArgs?: unknown,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('audit_log').values(toRow(record)).execute();
    if (rawArgs !== undefined) {
      await trx
        .insertInto('call_arguments')
        .values({
          call_id: record.callId,
          at: record.at.toISOString(),
          args: JSON.stringify(rawArgs),
        })
        .onConflict((oc) => oc.column('call_id').doNothing())
        .execute();
    }
  });
}
