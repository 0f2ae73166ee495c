/** @module What reports read: the catalog, identities and the audit log, and the period asked for. */
import type { Kysely } from 'kysely';
import type { CatalogService, HealthReader } from '../../domain/catalog/index.js';
import type { AgentService, UserService } from '../../domain/identity/index.js';
import type { Database } from '../../records/store/index.js';

export interface ReportSources {
  readonly db: Kysely<Database>;
  readonly catalog: CatalogService;
  readonly agents: AgentService;
  readonly users: UserService;
  /** Teams known to own tools (besides agent owners and users); see orphaned-tools. */
  readonly teams: readonly string[];
  /** A tool version's health state, once a health monitor judges tools (else `unchecked`). */
  readonly health?: (toolId: string, version: string) => string | null;
}

/** The `health` source, read from a health reader (the health monitor's state of the version). */
export function healthStates(reader: HealthReader): NonNullable<ReportSources['health']> {
  return (toolId, version) => reader.healthOf(toolId, version).state;
}

/** A half-open period [from, to) as ISO-8601 UTC text, comparable with the audit log's `at`. */
export interface Period {
  readonly from: string;
  readonly to: string;
}
