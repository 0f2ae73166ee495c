/** @module The Kysely schema: one set of tables for SQLite and PostgreSQL. */
import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';

/** Set once at insert, never updated (also refused by triggers). */
type InsertOnly<T> = ColumnType<T, T, never>;

export interface ToolVersionTable {
  tool_id: string;
  version: string;
  name: string;
  description: string;
  owner: string;
  action_class: string;
  access_tier: string;
  data_access: string;
  egress_mode: string;
  provenance: string;
  /** JSON array of strings. */
  tags: string;
  /** The normalized definition as canonical JSON. */
  definition: string;
  definition_hash: string;
  lifecycle: string;
  /** 0 or 1: SQLite has no boolean and the same queries must run on both. */
  quarantined: number;
  /** JSON array of scan findings; `[]` when clean. */
  quarantine_findings: string;
  created_at: string;
  created_by: string;
  updated_at: string;
  deprecated_at: string | null;
  retire_at: string | null;
  retired_at: string | null;
  /** Catalog revision of the write that last changed this row (0 before migration 0002). */
  revision: number;
}

export interface AgentTable {
  id: string;
  display_name: string;
  description: string;
  owner: string;
  enabled: number;
  spec_hash: string;
  created_at: string;
  updated_at: string;
}

export interface GrantTable {
  agent_id: string;
  capability: string;
  created_at: string;
  created_by: string;
}

export interface EventTable {
  seq: Generated<number>;
  at: InsertOnly<string>;
  actor: InsertOnly<string>;
  via: InsertOnly<string>;
  action: InsertOnly<string>;
  subject: InsertOnly<string>;
  /** JSON object. */
  details: InsertOnly<string>;
}

export interface MetaTable {
  key: string;
  value: string;
}

export interface Database {
  tool_versions: ToolVersionTable;
  agents: AgentTable;
  grants: GrantTable;
  events: EventTable;
  meta: MetaTable;
}

export type ToolVersionRow = Selectable<ToolVersionTable>;
export type NewToolVersionRow = Insertable<ToolVersionTable>;
export type AgentRow = Selectable<AgentTable>;
export type GrantRow = Selectable<GrantTable>;
export type EventRow = Selectable<EventTable>;
