/**
 * @module The `resolve` step for an MCP `resources/read` or `prompts/get` (an EntryRef): the one
 * governed entry the URI or the listed name names within the session's own offered entries
 * (classified, reviewed, not quarantined, granted, within tier). A URI is resolved over every
 * provider's resources and templates (docs/security-model.md "Resources and templates: one URI,
 * one governed thing"), a template's variables bound here, once: they become the call's
 * arguments, and the `policy` step does not match the URI again. Anything else — unknown, not
 * offered, quarantined, not reviewed, a URI two different templates match — is
 * RESOURCE_NOT_FOUND or PROMPT_NOT_FOUND, never saying whether the upstream has it. Step order:
 * docs/architecture.md §3.
 */
import {
  entryKindOf,
  governedEntryOf,
  type OfferedEntry,
  offerable,
  promptNames,
  type SessionTool,
  type SessionToolIndex,
} from '../../domain/sessions/index.js';
import type { EntryRef } from '../call-context.js';
import type { CompiledTool } from '../tool-cache.js';
import type { CallState, Refusal } from './step.js';

/** One answer for every miss, whatever the reason: the caller learns nothing beyond "not offered". */
function notFound(ref: EntryRef): Refusal {
  return ref.entry === 'resource'
    ? {
        kind: 'refuse',
        code: 'RESOURCE_NOT_FOUND',
        rule: 'resolve.resource_not_found',
        message: 'no resource with this URI is offered',
        details: { uri: ref.uri },
        anonymous: true,
      }
    : {
        kind: 'refuse',
        code: 'PROMPT_NOT_FOUND',
        rule: 'resolve.prompt_not_found',
        message: 'no prompt with this name is offered',
        details: { name: ref.name },
        anonymous: true,
      };
}

interface Offered extends OfferedEntry {
  readonly tool: SessionTool;
  readonly compiled: CompiledTool;
}

/**
 * The session's offered entries of one kind, in catalog id order (the order the lists use), each
 * compiled once through the gate's cache: only the set's entries are read (listed apart by its
 * index), never its tools, so a set of 10,000 tools costs a read nothing.
 */
async function offeredEntries(
  s: CallState,
  set: SessionToolIndex,
  kinds: ReadonlySet<string>,
): Promise<Offered[]> {
  const out: Offered[] = [];
  for (const tool of set.entries) {
    const kind = entryKindOf(tool.id);
    if (kind === null || !kinds.has(kind)) continue;
    const compiled =
      s.deps.tools.cached(tool.id, tool.version) ??
      (await s.deps.tools.compiled(tool.id, tool.version));
    if (!compiled || !offerable(compiled.detail)) continue;
    const runtime = compiled.detail.definition.runtime;
    if (runtime.kind !== 'mcp' || runtime.entry === undefined) continue;
    out.push({ id: tool.id, entry: runtime.entry, tool, compiled });
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

const RESOURCES = new Set(['resource', 'template']);
const PROMPTS = new Set(['prompt']);

/** The entry an EntryRef names: its session tool, compiled, and the arguments of its call. */
export interface ResolvedEntry {
  readonly kind: 'entry';
  readonly tool: SessionTool;
  readonly compiled: CompiledTool;
  readonly args: unknown;
}

/**
 * The entry `ref` names within the session's `set`, or the refusal. For a resource the arguments
 * are the template's bound variables (none for a static); for a prompt, the caller's `args`.
 */
export async function resolveEntryRef(
  s: CallState,
  ref: EntryRef,
  set: SessionToolIndex,
): Promise<ResolvedEntry | Refusal> {
  if (ref.entry === 'prompt') {
    const offered = await offeredEntries(s, set, PROMPTS);
    const names = promptNames(offered);
    const hit = offered.find((o) => names.get(o.id) === ref.name);
    if (!hit) return notFound(ref);
    return { kind: 'entry', tool: hit.tool, compiled: hit.compiled, args: s.args };
  }
  const governed = s.deps.governedUris;
  if (governed === undefined) return notFound(ref);
  const offered = await offeredEntries(s, set, RESOURCES);
  const own = offered.flatMap((o) => governedEntryOf(o.id, o.entry) ?? []);
  const named = await governed.resolve(ref.uri, own);
  const hit = named && offered.find((o) => o.id === named.id);
  if (!named || !hit) return notFound(ref);
  const args = named.kind === 'resource_template' ? named.args : {};
  return { kind: 'entry', tool: hit.tool, compiled: hit.compiled, args };
}
