/** @module Catalog queries over `tool_versions`, shared by both backends; rows ↔ views. */
import type { Kysely, Transaction } from 'kysely';
import semver from 'semver';
import type { Database, ToolVersionRow } from '../../records/store/index.js';
import type { ScanFinding } from './description-scan.js';
import { effectiveLifecycle } from './lifecycle.js';
import type { LifecycleState, ToolDefinition } from './tool-definition.js';

export type Executor = Kysely<Database> | Transaction<Database>;

/** What admins see of one version; `lifecycle` is the effective state at read time. */
export interface ToolVersionSummary {
  readonly id: string;
  readonly version: string;
  readonly name: string;
  readonly description: string;
  readonly owner: string;
  readonly tags: readonly string[];
  readonly action_class: string;
  readonly access_tier: string;
  readonly data_access: string;
  readonly egress: string;
  readonly provenance: string;
  readonly lifecycle: LifecycleState;
  readonly quarantined: boolean;
  readonly findings: readonly ScanFinding[];
  readonly definition_hash: string;
  readonly created_at: string;
  readonly created_by: string;
  readonly updated_at: string;
  readonly deprecated_at: string | null;
  readonly retire_at: string | null;
  readonly retired_at: string | null;
}

export interface ToolVersionDetail extends ToolVersionSummary {
  readonly definition: ToolDefinition;
}

export function toSummary(row: ToolVersionRow, now: Date): ToolVersionSummary {
  return {
    id: row.tool_id,
    version: row.version,
    name: row.name,
    description: row.description,
    owner: row.owner,
    tags: JSON.parse(row.tags) as string[],
    action_class: row.action_class,
    access_tier: row.access_tier,
    data_access: row.data_access,
    egress: row.egress_mode,
    provenance: row.provenance,
    lifecycle: effectiveLifecycle(row.lifecycle as LifecycleState, row.retire_at, now),
    quarantined: row.quarantined === 1,
    findings: JSON.parse(row.quarantine_findings) as ScanFinding[],
    definition_hash: row.definition_hash,
    created_at: row.created_at,
    created_by: row.created_by,
    updated_at: row.updated_at,
    deprecated_at: row.deprecated_at,
    retire_at: row.retire_at,
    retired_at: row.retired_at,
  };
}

export function toDetail(row: ToolVersionRow, now: Date): ToolVersionDetail {
  return { ...toSummary(row, now), definition: JSON.parse(row.definition) as ToolDefinition };
}

export async function findVersion(
  db: Executor,
  toolId: string,
  version: string,
): Promise<ToolVersionRow | undefined> {
  return db
    .selectFrom('tool_versions')
    .selectAll()
    .where('tool_id', '=', toolId)
    .where('version', '=', version)
    .executeTakeFirst();
}

/** All versions of one tool, oldest first by SemVer precedence. */
export async function findVersions(db: Executor, toolId: string): Promise<ToolVersionRow[]> {
  const rows = await db
    .selectFrom('tool_versions')
    .selectAll()
    .where('tool_id', '=', toolId)
    .execute();
  return rows.sort((a, b) => semver.compare(a.version, b.version));
}

export async function listRows(
  db: Executor,
  filter: { readonly owner?: string; readonly quarantined?: boolean },
): Promise<ToolVersionRow[]> {
  let q = db.selectFrom('tool_versions').selectAll().orderBy('tool_id').orderBy('version');
  if (filter.owner !== undefined) q = q.where('owner', '=', filter.owner);
  if (filter.quarantined !== undefined) q = q.where('quarantined', '=', filter.quarantined ? 1 : 0);
  return q.execute();
}

/**
 * Rows that may be offered: not quarantined, lifecycle active or deprecated (the window is
 * checked by the caller), optionally only of the given tools.
 */
export async function offerableRows(
  db: Executor,
  toolIds?: readonly string[],
): Promise<ToolVersionRow[]> {
  let q = db
    .selectFrom('tool_versions')
    .selectAll()
    .where('quarantined', '=', 0)
    .where('lifecycle', 'in', ['active', 'deprecated']);
  if (toolIds) q = q.where('tool_id', 'in', toolIds);
  return q.execute();
}
