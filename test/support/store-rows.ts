/** @module Unchained audit rows for store tests: every column, the way the audit writer fills them. */
import type { UnchainedRow } from '../../src/records/store/index.js';

export function auditRows(n: number, tag: string): UnchainedRow[] {
  return Array.from({ length: n }, (_, i) => ({
    at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    kind: 'call.denied',
    call_id: `call_${tag}_${i}`,
    trace_id: `call_${tag}_${i}`,
    session_id: `ses_${tag}`,
    run_id: null,
    agent_id: 'agent_conformance',
    user_id: null,
    tool_id: 'weather_lookup',
    tool_version: '1.0.0',
    args_hash: null,
    args_redacted: JSON.stringify({ city: 'Oslo' }),
    decision: 'deny',
    code: 'POLICY_DENIED',
    rule: 'conformance',
    message: `refused ${i}`,
    approval_id: null,
    approver: null,
    egress_host: null,
    bytes_out: i,
    duration_ms: i / 3,
    outcome: null,
    model: null,
    details: JSON.stringify({ i, tag }),
  }));
}
