/**
 * @module Storage (DESIGN.md C17): SQLite by default, PostgreSQL for replicas, one schema.
 * Anything exported here is public API. Services query through `Store.db`; fronts only open and
 * close a store and hand it to services.
 */
export type {
  AgentRow,
  ApprovalRow,
  AuditRow,
  ChangeRequestRow,
  Database,
  EventRow,
  GrantRow,
  NewAuditRow,
  ProviderRow,
  ProviderToolRow,
  SecretRow,
  SessionRow,
  ToolVersionRow,
  UserRow,
} from './database.js';
export type { NewEvent } from './events.js';
export {
  appendEvent,
  bumpCatalogRevision,
  bumpIdentityRevision,
  lastTotpStep,
  listEvents,
  localIdentityChangeCount,
  readCatalogRevision,
  readRevisions,
} from './events.js';
export type { Dialect } from './migrations.js';
export { olderThan } from './newest-first.js';
export type { Store } from './open-store.js';
export { DEFAULT_DB_URL, openStore, parseDbUrl } from './open-store.js';
export { isStoreCorrupt, isStoreUnavailable, isUniqueViolation } from './store-errors.js';
