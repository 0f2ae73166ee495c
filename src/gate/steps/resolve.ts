/**
 * @module Step 2, resolve: the tool is looked up only within the session's own set, by exported
 * name or id, and compiled (validators, policy targets). Anything else is "not registered": the
 * caller learns nothing about tools outside its set. Step order: docs/architecture.md §3.
 */
import type { SessionTool } from '../../sessions/index.js';
import type { SessionRow } from '../../store/index.js';
import { type CallState, CONTINUE, type Refusal, type StepResult } from './step.js';

export const NOT_REGISTERED: Refusal = {
  kind: 'refuse',
  code: 'TOOL_NOT_REGISTERED',
  rule: 'resolve.not_registered',
  message: 'tool not registered',
};

export async function resolveStep(s: CallState): Promise<StepResult> {
  const entry = typeof s.toolRef === 'string' ? findTool(toolSetOf(s.session), s.toolRef) : null;
  if (!entry) return NOT_REGISTERED;
  const compiled = await s.deps.tools.compiled(entry.id, entry.version);
  if (!compiled) return NOT_REGISTERED;
  s.compiled = compiled;
  s.detail = compiled.detail;
  s.def = compiled.detail.definition;
  s.ref = { id: compiled.detail.id, version: compiled.detail.version };
  return CONTINUE;
}

function findTool(set: readonly SessionTool[], ref: string): SessionTool | null {
  for (const t of set) if (t.name === ref || t.id === ref) return t;
  return null;
}

/** Each stored session row's tool set, parsed once (rows are replaced, never changed, on update). */
const parsedToolSets = new WeakMap<SessionRow, SessionTool[]>();

export function toolSetOf(session: SessionRow): SessionTool[] {
  let set = parsedToolSets.get(session);
  if (!set) {
    set = JSON.parse(session.tool_set) as SessionTool[];
    parsedToolSets.set(session, set);
  }
  return set;
}
