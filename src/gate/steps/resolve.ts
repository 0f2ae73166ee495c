/**
 * @module Step 2, resolve: the tool is looked up only within the session's own set, by exported
 * name or id, and compiled (validators, policy targets). Anything else is "not registered": the
 * caller learns nothing about tools outside its set. Step order: docs/architecture.md §3.
 */
import type { SessionTool } from '../../sessions/index.js';
import type { SessionRow } from '../../store/index.js';
import type { CompiledTool } from '../tool-cache.js';
import { type CallState, CONTINUE, type Refusal, refuse, type StepResult } from './step.js';

export const NOT_REGISTERED: Refusal = {
  kind: 'refuse',
  code: 'TOOL_NOT_REGISTERED',
  rule: 'resolve.not_registered',
  message: 'tool not registered',
};

export function resolveStep(s: CallState): StepResult | Promise<StepResult> {
  const entry = typeof s.toolRef === 'string' ? findTool(toolSetOf(s.session), s.toolRef) : null;
  if (!entry) return NOT_REGISTERED;
  const hit = s.deps.tools.cached(entry.id, entry.version);
  return hit ? resolved(s, hit) : compile(s, entry);
}

async function compile(s: CallState, entry: SessionTool): Promise<StepResult> {
  const compiled = await s.deps.tools.compiled(entry.id, entry.version);
  return compiled ? resolved(s, compiled) : NOT_REGISTERED;
}

function resolved(s: CallState, compiled: CompiledTool): StepResult {
  s.compiled = compiled;
  s.detail = compiled.detail;
  s.def = compiled.detail.definition;
  s.ref = { id: compiled.detail.id, version: compiled.detail.version };
  // C14: a tool of the caller's set that its health monitor marks unavailable fails fast, before
  // anything is checked, spent or run (state read from memory, docs/architecture.md §3).
  const unavailable = s.deps.health.admit(s.ref.id, s.ref.version);
  return unavailable ? refuse('TOOL_UNAVAILABLE', unavailable.rule, unavailable.message) : CONTINUE;
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
