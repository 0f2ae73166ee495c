/** @module The gate's audit writer lives in audit/ (the chained log); re-exported for the gate. */
export { type AuditKind, type AuditRecord, AuditWriter } from '../records/audit/audit-writer.js';
