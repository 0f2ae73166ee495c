/**
 * @module Storage (C17): SQLite by default, PostgreSQL for replicas, one schema. Anything exported
 * here is public API. Services query through `Store.db`; the audit log appends through
 * `Store.audit`; fronts only open and close a store and hand it to services. Driver errors never
 * leave the store: docs/architecture.md §5.
 */

export type { ApprovalScopeTable as ApprovalScopeRow } from './approval-scope-table.js';
export type {
  AuditAppend,
  AuditCommit,
  RangeChecker,
  RangePlan,
  RawArgumentsRow,
  UnchainedRow,
} from './audit-append.js';
export {
  addToCounter,
  type ChargeCounters,
  type ChargeRefusal,
  type CounterCharge,
  counterTotal,
  type SpendCharge,
} from './counter-charge.js';
export type {
  AgentRow,
  ApprovalRow,
  AuditCheckpointRow,
  AuditRow,
  ChangeRequestRow,
  Database,
  EventRow,
  GrantRow,
  NewAuditRow,
  ProviderEntryRow,
  ProviderRow,
  ProviderToolRow,
  SecretRow,
  SecurityReviewRow,
  SessionRow,
  ToolVersionRow,
  UserRow,
} from './database.js';
export type { RestoredDatabase, SavedDatabase } from './database-copy.js';
export {
  DEFAULT_DB_URL,
  dbLocation,
  dbUrlSecrets,
  parseDbUrl,
  refuseSecretsToolsCannotTake,
} from './db-url.js';
export type { NewEvent } from './events.js';
export {
  appendEvent,
  bumpCatalogRevision,
  bumpIdentityRevision,
  EventBatch,
  eventRecord,
  eventSink,
  lastTotpStep,
  listEvents,
  localIdentityChangeCount,
  readCatalogRevision,
  readRevisions,
} from './events.js';
export { FLEET_CHANNELS, type Fleet, type FleetChannel, notifyIn } from './fleet.js';
export { LOCK_CLASSES, type LockKey, lockKeyIn } from './key-lock.js';
export type { Dialect } from './migration-sql.js';
export { DIALECTS } from './migration-sql.js';
export { olderThan } from './newest-first.js';
export type { Store } from './open-store.js';
export { holdsDatabase, openStore } from './open-store.js';
export { restoreDatabase } from './restore-database.js';
export { knownMigrations, refuseNewerSchema } from './schema-version.js';
export { isUniqueViolation } from './store-errors.js';
