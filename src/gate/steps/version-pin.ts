/**
 * @module Versions side by side (C2, docs/architecture.md §3 steps `resolve`–`lifecycle`): what a pinned major that
 * the session does not offer becomes, and which version succeeds a retired or deprecated one.
 * Both look past the session's set only for versions this caller could have been offered (tier
 * and live grants on that version's own definition), so neither says anything about a version
 * outside the caller's reach.
 */
import semver from 'semver';
import {
  effectiveLifecycleOf,
  isOfferable,
  type ToolVersionDetail,
} from '../../domain/catalog/index.js';
import type { SessionTool } from '../../domain/sessions/index.js';
import { liveCapabilities } from './grant.js';
import type { CallState } from './step.js';

/** What a caller is told to call instead of a retired or deprecated version. */
export interface Successor {
  readonly tool: string;
  readonly version: string;
}

const TIER_RANK: Readonly<Record<string, number>> = { public: 0, restricted: 1, privileged: 2 };

/** Whether this session's principal could be offered this version: tier and live grants. */
async function mayUse(s: CallState, detail: ToolVersionDetail): Promise<boolean> {
  const agent = await s.deps.identities.agent(s.ctx.principal.agentId);
  const tier = TIER_RANK[detail.access_tier];
  const held = TIER_RANK[agent.tier];
  if (tier === undefined || held === undefined || tier > held) return false;
  const caps = await liveCapabilities(s, agent);
  return detail.definition.required_capabilities.every((c) => caps.has(c));
}

/** The version of `major` the session holds for this tool, or null when it holds none. */
export function pinnedVersion(entry: SessionTool, major: number): string | null {
  if (semver.major(entry.version) === major) return entry.version;
  for (const pin of entry.pins ?? []) if (pin.major === major) return pin.version;
  return null;
}

/**
 * The newest version of `major` when every version of that major has retired and this caller
 * could have used it: a pin to it is refused as retired (naming the successor), not as unknown.
 * Null for a major that never existed, is only drafted or quarantined, or is beyond the caller.
 */
export async function retiredMajor(
  s: CallState,
  entry: SessionTool,
  major: number,
): Promise<ToolVersionDetail | null> {
  const inMajor = (await s.deps.tools.versions(entry.id)).filter(
    (v) => semver.major(v.version) === major,
  );
  const newest = inMajor.at(-1);
  if (!newest || newest.quarantined) return null;
  if (!inMajor.every((v) => effectiveLifecycleOf(v, s.now) === 'retired')) return null;
  return (await mayUse(s, newest)) ? newest : null;
}

/**
 * The version to move to from `detail`: the newest later version this caller may use, preferring
 * an active one; null when there is none. Read from the catalog now, so a version registered after
 * the session opened is named too (a new session offers it).
 */
export async function successorOf(
  s: CallState,
  detail: ToolVersionDetail,
  entry: SessionTool | null,
): Promise<Successor | null> {
  const later = (await s.deps.tools.versions(detail.id))
    .filter(
      (v) =>
        semver.gt(v.version, detail.version) &&
        !v.quarantined &&
        isOfferable(effectiveLifecycleOf(v, s.now)),
    )
    .reverse();
  const ordered = [
    ...later.filter((v) => effectiveLifecycleOf(v, s.now) === 'active'),
    ...later.filter((v) => effectiveLifecycleOf(v, s.now) !== 'active'),
  ];
  for (const v of ordered) {
    if (await mayUse(s, v)) return successorNamed(entry?.name ?? v.name, v.version);
  }
  return null;
}

/**
 * The successor the session itself holds for a deprecated version it called, no I/O: its default
 * version when that is later (the newest active one), else the newest later major it may pin.
 */
export function heldSuccessor(s: CallState, entry: SessionTool | null): Successor | null {
  if (!entry || s.ref === null) return null;
  const current = s.ref.version;
  if (semver.gt(entry.version, current)) return successorNamed(entry.name, entry.version);
  const later = (entry.pins ?? []).map((p) => p.version).filter((v) => semver.gt(v, current));
  const newest = later.sort(semver.rcompare)[0];
  return newest === undefined ? null : successorNamed(entry.name, newest);
}

function successorNamed(name: string, version: string): Successor {
  return { tool: `${name}@${semver.major(version)}`, version };
}
