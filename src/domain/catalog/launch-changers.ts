/**
 * @module Who made the program behind a provider's tool what it is, unseen by any reviewer since
 * (attack round 27, G7; docs/architecture.md §8, C1 and C3). A version classified from an upstream
 * MCP provider carries the provider's launch (`runtime.launch`: transport, argv or URL, isolation,
 * binds, workspace, variables). Whoever set that launch — the provider's registration, or an
 * update recorded as `provider.updated` with `launch_changed: true` — chose the program; four eyes
 * mean that someone else reviews it, so such an operator may not be the reviewer
 * (`checkReviewer`, rule `review.launch_changer`). The launch changes counted are those since the
 * provider last ran a launch an approved review had seen: walking the provider's launch events
 * back from the one that set the version's launch, up to an event whose launch a version of this
 * provider's tools was approved under afterwards. An update that left the launch alone counts
 * for nobody. Reads only; the same answer on every front.
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../../records/store/index.js';
import type { ToolDefinition } from './tool-definition.js';

type Db = Kysely<Database> | Transaction<Database>;

/** One registration or update of the provider, oldest first. */
interface LaunchEvent {
  readonly seq: number;
  readonly actor: string;
  /** The launch hash it set; null for a record written before launches were recorded. */
  readonly launch: string | null;
  /** Whether it set another program than ran before (a registration always does). */
  readonly changed: boolean;
}

function detailsOf(text: string): Record<string, unknown> {
  try {
    const parsed = JSON.parse(text) as unknown;
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

async function launchEvents(db: Db, provider: string): Promise<LaunchEvent[]> {
  const rows = await db
    .selectFrom('events')
    .select(['seq', 'actor', 'action', 'details'])
    .where('subject', '=', `provider:${provider}`)
    .where('action', 'in', ['provider.registered', 'provider.updated'])
    .orderBy('seq')
    .execute();
  return rows.map((r) => {
    const d = detailsOf(r.details);
    return {
      seq: Number(r.seq),
      actor: r.actor,
      launch: typeof d.launch === 'string' ? d.launch : null,
      // An update recorded before `launch_changed` existed may have changed it: counted (fail closed).
      changed: r.action === 'provider.registered' || d.launch_changed !== false,
    };
  });
}

/**
 * For each launch of `provider` an approved review has covered, the last `seq` of such a review's
 * record (`tool.reviewed`, decision approved): the versions of the provider's imported tools and
 * entries approved, read with the launch their stored definition carries.
 */
async function reviewedLaunches(db: Db, provider: string): Promise<Map<string, number>> {
  const ofProvider = (table: 'provider_tools' | 'provider_entries') =>
    db.selectFrom(table).select('tool_id').where('provider', '=', provider);
  const rows = await db
    .selectFrom('security_reviews as r')
    .innerJoin('tool_versions as t', (j) =>
      j.onRef('t.tool_id', '=', 'r.tool_id').onRef('t.version', '=', 'r.version'),
    )
    .innerJoin('events as e', (j) =>
      j
        .on('e.subject', '=', sql<string>`'tool:' || r.tool_id || '@' || r.version`)
        .on('e.action', '=', 'tool.reviewed'),
    )
    .select(['r.id', 't.definition', 'e.seq', 'e.details'])
    .where('r.status', '=', 'approved')
    .where((eb) =>
      eb.or([
        eb('r.tool_id', 'in', ofProvider('provider_tools')),
        eb('r.tool_id', 'in', ofProvider('provider_entries')),
      ]),
    )
    .execute();
  const seen = new Map<string, number>();
  for (const row of rows) {
    const d = detailsOf(row.details);
    if (d.review !== row.id || d.decision !== 'approved') continue;
    const runtime = (JSON.parse(row.definition) as ToolDefinition).runtime;
    if (runtime.kind !== 'mcp' || runtime.provider !== provider || !runtime.launch) continue;
    seen.set(runtime.launch, Math.max(seen.get(runtime.launch) ?? 0, Number(row.seq)));
  }
  return seen;
}

/**
 * The actor ids (`operator:<id>`, `admin-token`, …) who set the launch `definition` runs and no
 * approved review has seen since, oldest first; empty for a tool no provider runs.
 */
export async function unreviewedLaunchChangers(
  db: Db,
  definition: ToolDefinition,
): Promise<string[]> {
  const runtime = definition.runtime;
  if (runtime.kind !== 'mcp') return [];
  const events = await launchEvents(db, runtime.provider);
  if (events.length === 0) return [];
  const reviewed = await reviewedLaunches(db, runtime.provider);
  // From the event that set this version's launch (the newest, when none names it) backwards.
  let from = events.length - 1;
  if (runtime.launch !== undefined) {
    const set = events.findLastIndex((e) => e.launch === runtime.launch);
    if (set >= 0) from = set;
  }
  const changers: string[] = [];
  for (let i = from; i >= 0; i--) {
    const e = events[i] as LaunchEvent;
    // A launch approved in a review recorded after it was set: what came before was seen.
    if (e.launch !== null && (reviewed.get(e.launch) ?? 0) > e.seq) break;
    if (e.changed && !changers.includes(e.actor)) changers.unshift(e.actor);
  }
  return changers;
}
