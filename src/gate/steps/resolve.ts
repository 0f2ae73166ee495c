/**
 * @module The `resolve` step: the tool is looked up only within the session's own set, by exported
 * name or id, and compiled (validators, policy targets). A caller may pin a major (`name@1`, or
 * the call's `version` option): the session's version of that major, which passed the same rules
 * as the default one. Anything else is "not registered": the caller learns nothing about tools
 * outside its set; a pinned major whose versions have all retired is refused as retired, naming
 * the successor. A resource read or prompt get (an EntryRef) is resolved here too, within the
 * session's offered entries (resolve-entry.ts): the front looks nothing up. Step order and
 * versions: docs/architecture.md §3.
 */
import { parseMajor, parseToolRef } from '../../domain/catalog/index.js';
import { type SessionTool, sessionToolIndex } from '../../domain/sessions/index.js';
import { type EntryRef, isEntryRef } from '../call-context.js';
import type { CompiledTool } from '../tool-cache.js';
import { resolveEntryRef } from './resolve-entry.js';
import {
  type CallState,
  CONTINUE,
  healthCaller,
  type Refusal,
  refuse,
  type StepResult,
} from './step.js';
import { pinnedVersion, retiredMajor, successorOf } from './version-pin.js';

export const NOT_REGISTERED: Refusal = {
  kind: 'refuse',
  code: 'TOOL_NOT_REGISTERED',
  rule: 'resolve.not_registered',
  message: 'tool not registered',
};

/** A pin that is not a major (`tool@1.2.0`, `"v1"`), or two pins that disagree. */
const BAD_PIN: Refusal = {
  kind: 'refuse',
  code: 'INPUT_INVALID',
  rule: 'resolve.version_pin',
  message: 'a version pin is a major version number: name@1, or the version option 1',
  details: {
    problems: [
      {
        pointer: '/tool',
        message: 'must be a tool name, optionally followed by @ and a major version (name@1)',
        rule: 'version.pin',
      },
    ],
  },
  anonymous: true,
};

export function resolveStep(s: CallState): StepResult | Promise<StepResult> {
  if (isEntryRef(s.toolRef)) return resolveEntry(s, s.toolRef);
  if (typeof s.toolRef !== 'string') return NOT_REGISTERED;
  const ref = parseToolRef(s.toolRef);
  if (ref === null) return BAD_PIN;
  let major = ref.major;
  if (s.options.version !== undefined) {
    const option = parseMajor(s.options.version);
    if (option === null || (major !== null && major !== option)) return BAD_PIN;
    major = option;
  }
  // One look-up in the set's index, built once per distinct set and shared by the sessions of
  // this agent that hold the same set (session-tool-index.ts): constant time at any set size.
  const entry = sessionToolIndex(s.session).find(ref.name);
  if (!entry) return NOT_REGISTERED;
  s.entry = entry;
  s.pinnedMajor = major;
  const version = major === null ? entry.version : pinnedVersion(entry, major);
  if (version === null) return unheldMajor(s, entry, major as number);
  const hit = s.deps.tools.cached(entry.id, version);
  return hit ? resolved(s, hit) : compile(s, entry.id, version);
}

/**
 * A resource read or prompt get: the entry it names becomes the call's tool, and a resource's
 * bound template variables its arguments (matched once: the policy step does not match again).
 */
async function resolveEntry(s: CallState, ref: EntryRef): Promise<StepResult> {
  const found = await resolveEntryRef(s, ref, sessionToolIndex(s.session));
  if (found.kind === 'refuse') return found;
  s.args = found.args;
  s.readUri = ref.entry === 'resource' ? ref.uri : null;
  s.entry = found.tool;
  s.pinnedMajor = null;
  return resolved(s, found.compiled);
}

async function compile(s: CallState, id: string, version: string): Promise<StepResult> {
  const compiled = await s.deps.tools.compiled(id, version);
  return compiled ? resolved(s, compiled) : NOT_REGISTERED;
}

/** A pinned major the session does not hold: retired (and once usable by this caller), or unknown. */
async function unheldMajor(s: CallState, entry: SessionTool, major: number): Promise<StepResult> {
  const retired = await retiredMajor(s, entry, major);
  if (!retired) return NOT_REGISTERED;
  s.ref = { id: retired.id, version: retired.version };
  return refuse(
    'TOOL_RETIRED',
    'lifecycle.retired',
    `${entry.name}@${major} is retired and can no longer be called`,
    { successor: await successorOf(s, retired, entry) },
  );
}

function resolved(s: CallState, compiled: CompiledTool): StepResult {
  s.compiled = compiled;
  s.detail = compiled.detail;
  s.def = compiled.detail.definition;
  s.ref = { id: compiled.detail.id, version: compiled.detail.version };
  // C14: a tool of the caller's set that its health monitor marks unavailable fails fast, before
  // anything is checked, spent or run (state read from memory, docs/architecture.md §3).
  const unavailable = s.deps.health.admit(s.ref.id, s.ref.version, healthCaller(s));
  return unavailable ? refuse('TOOL_UNAVAILABLE', unavailable.rule, unavailable.message) : CONTINUE;
}
