/**
 * @module A session's permitted set, parsed and indexed once per distinct stored set
 * (docs/architecture.md §3, step `resolve`, "Large sets"): the tool a call names is found in
 * constant time, by exported name or id, and the set's governed entries (resources, templates,
 * prompts) are listed apart, so no per-call step walks the whole set. Sessions that hold the same
 * set share one index: it is keyed by the agent and by the stored set's text itself — which holds
 * every tool, version, exported name and pinned major, exactly as the session-open rules (grants,
 * permissions, tier, catalog revision, toxic combinations) decided them — so two sessions share an
 * index only when they hold the very same set, and never across agents. Nothing here is read
 * beyond the stored set: live grants, tier and lifecycle stay the later steps' (grant, lifecycle).
 */
import type { SessionRow } from '../../records/store/index.js';
import type { SessionTool } from './session-tool.js';

/** The kind of upstream entry a catalog id names (its second part), or null for a tool. */
export function entryKindOf(id: string): 'resource' | 'template' | 'prompt' | null {
  const kind = id.split('.')[1];
  return kind === 'resource' || kind === 'template' || kind === 'prompt' ? kind : null;
}

/** One stored permitted set, parsed and indexed. Immutable: a changed set is a new index. */
export class SessionToolIndex {
  /** The set as stored, in its stored order. */
  readonly tools: readonly SessionTool[];
  /** The set's upstream entries (resources, templates, prompts), in stored order. */
  readonly entries: readonly SessionTool[];
  readonly #byRef: ReadonlyMap<string, SessionTool>;

  constructor(tools: readonly SessionTool[]) {
    this.tools = tools;
    const byRef = new Map<string, SessionTool>();
    const entries: SessionTool[] = [];
    // The first tool whose name or id is the reference wins, as a walk of the set in order would
    // find it (names are unique within a set, and a withheld clash never enters it).
    for (const t of tools) {
      if (!byRef.has(t.name)) byRef.set(t.name, t);
      if (!byRef.has(t.id)) byRef.set(t.id, t);
      if (entryKindOf(t.id) !== null) entries.push(t);
    }
    this.#byRef = byRef;
    this.entries = entries;
  }

  /** The tool a call names by its exported name or catalog id, or null: never a tool outside. */
  find(ref: string): SessionTool | null {
    return this.#byRef.get(ref) ?? null;
  }
}

/** Distinct sets kept, and tools across them; past either the least recently used is dropped. */
export const MAX_SHARED_SETS = 512;
export const MAX_SHARED_TOOLS = 250_000;

/**
 * Indexes shared between sessions, by agent and then by the stored set's text (least recently
 * used first). The text is the key, not a digest of it: equal keys are equal sets, byte for byte.
 */
const shared = new Map<string, Map<string, SessionToolIndex>>();
let sharedSets = 0;
let sharedTools = 0;
/** Each stored row's index, found again without a look-up by text (rows are replaced, never changed). */
const byRow = new WeakMap<SessionRow, SessionToolIndex>();

/** The index of this session row's permitted set: built once per distinct (agent, set). */
export function sessionToolIndex(
  session: Pick<SessionRow, 'agent_id' | 'tool_set'>,
): SessionToolIndex {
  const row = session as SessionRow;
  const known = byRow.get(row);
  if (known) return known;
  const index = sharedIndex(session.agent_id, session.tool_set);
  byRow.set(row, index);
  return index;
}

function sharedIndex(agentId: string, toolSet: string): SessionToolIndex {
  let sets = shared.get(agentId);
  const hit = sets?.get(toolSet);
  if (sets && hit) {
    // Most recently used last, for the agent and for its set.
    shared.delete(agentId);
    shared.set(agentId, sets);
    sets.delete(toolSet);
    sets.set(toolSet, hit);
    return hit;
  }
  const index = new SessionToolIndex(JSON.parse(toolSet) as SessionTool[]);
  // The agent moves last too, so the newest set is the last one eviction would reach.
  if (sets) shared.delete(agentId);
  else sets = new Map();
  shared.set(agentId, sets);
  sets.set(toolSet, index);
  sharedSets += 1;
  sharedTools += index.tools.length;
  evict();
  return index;
}

function evict(): void {
  for (const [agentId, sets] of shared) {
    if (sharedSets <= MAX_SHARED_SETS && sharedTools <= MAX_SHARED_TOOLS) return;
    for (const [text, index] of sets) {
      // The newest set stays even when it alone is over the bound: it is in use right now.
      if (sharedSets === 1) return;
      sets.delete(text);
      sharedSets -= 1;
      sharedTools -= index.tools.length;
      if (sharedSets <= MAX_SHARED_SETS && sharedTools <= MAX_SHARED_TOOLS) break;
    }
    if (sets.size === 0) shared.delete(agentId);
  }
}

/** How many sets and tools the shared indexes hold now (tests and metrics). */
export function sharedToolIndexSize(): { readonly sets: number; readonly tools: number } {
  return { sets: sharedSets, tools: sharedTools };
}
