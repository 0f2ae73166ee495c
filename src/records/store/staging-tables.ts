/**
 * @module The audit staging tables (migration `0045_audit_staging`, docs/architecture.md §5, "The
 * audit log across replicas"): records a process committed but the sequencer has not yet put in
 * the chain, and each writer stream's last integrated link.
 */
import type { Generated } from 'kysely';

/**
 * One staged audit record: `record` is the JSON of its columns (all but seq, prev_hash and hash);
 * (`stream`, `rseq`, `prev_hash`, `hash`) link it to the writer's previous staged record
 * (audit-chain/staged-hash.ts), so a staged record removed or altered is found at integration.
 */
export interface AuditStagedTable {
  id: Generated<number>;
  stream: string;
  rseq: number;
  prev_hash: string;
  hash: string;
  staged_at: string;
  record: string;
}

/** The last record of a writer stream the sequencer integrated: where its next one must link. */
export interface AuditStreamHeadTable {
  stream: string;
  rseq: number;
  hash: string;
  integrated_at: string;
}
