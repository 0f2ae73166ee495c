/**
 * @module An evidence file (`toolgate decisions export`) read back for `decisions verify --file`
 * (docs/architecture.md §6, "Passkeys bound to the decision"): parse, then check. A JSON value
 * that is no evidence document (`{}`, `[]`, an audit bundle's file, a keys file) is refused as
 * one, and each entry's fields are checked for their kind before anything is verified, so a
 * malformed entry is named by its JSON pointer (`/evidence/3/assertion/signature`) and never
 * reaches the verifier as a shape it would stumble on (attack round 27, G5). What the fields
 * say is the verifier's to judge (decision-proofs.ts); this only checks that they are there.
 */
import { joinPointer, type Problem, problem, ToolgateError } from '../../core/index.js';
import type { DecisionEvidence } from './decision-proofs.js';

/** The rule every problem of an evidence document names. */
const RULE = 'decisions.evidence';

/** Problems listed in one refusal: enough to find the mistake, bounded for a huge file. */
const MAX_PROBLEMS = 50;

type Kind = 'string' | 'string?' | 'number' | 'number?';

/** The stored assertion's columns (`decision_assertions`), as an export writes them. */
const ASSERTION: Readonly<Record<string, Kind>> = {
  id: 'string',
  kind: 'string',
  subject_id: 'string',
  approver_id: 'string',
  credential_id: 'string',
  public_key: 'string',
  commitment: 'string',
  challenge: 'string',
  authenticator_data: 'string',
  client_data_json: 'string',
  signature: 'string',
  user_handle: 'string?',
  rp_id: 'string',
  origin: 'string',
  at: 'string',
};

const APPROVAL: Readonly<Record<string, Kind>> = {
  id: 'string',
  tool_id: 'string',
  tool_version: 'string',
  args_hash: 'string',
  status: 'string',
  decided_by: 'string?',
};

const SCOPE: Readonly<Record<string, Kind>> = {
  calls: 'number',
  amount_cents: 'number?',
  until: 'string',
};

const CHANGE: Readonly<Record<string, Kind>> = {
  id: 'string',
  kind: 'string',
  agent_id: 'string?',
  capability: 'string?',
  tool_id: 'string?',
  tool_version: 'string?',
  required: 'number',
  requested_by: 'string',
  created_at: 'string',
  definition_hash: 'string?',
};

const REVIEW: Readonly<Record<string, Kind>> = {
  id: 'string',
  tool_id: 'string',
  version: 'string',
  definition_hash: 'string',
  status: 'string',
  reviewer: 'string?',
};

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function fits(value: unknown, kind: Kind): boolean {
  const base = kind.endsWith('?') ? kind.slice(0, -1) : kind;
  if (value === null) return kind.endsWith('?');
  return base === 'number'
    ? typeof value === 'number' && Number.isFinite(value)
    : typeof value === base;
}

function words(kind: Kind): string {
  const base = kind.endsWith('?') ? kind.slice(0, -1) : kind;
  return kind.endsWith('?') ? `must be a ${base} or null` : `must be a ${base}`;
}

/** The fields of one object against `shape`: a problem for each missing or of another kind. */
function checkFields(
  value: unknown,
  shape: Readonly<Record<string, Kind>>,
  at: string,
  problems: Problem[],
): void {
  if (!isObject(value)) {
    problems.push(problem(at, value === undefined ? 'missing' : 'must be an object', RULE));
    return;
  }
  for (const [field, kind] of Object.entries(shape)) {
    const v = value[field];
    if (v === undefined) problems.push(problem(joinPointer(at, field), 'missing', RULE));
    else if (!fits(v, kind)) problems.push(problem(joinPointer(at, field), words(kind), RULE));
  }
}

/** An audit record of the export: its action, details and (from this release on) actor and subject. */
function checkEvents(value: unknown, at: string, problems: Problem[]): void {
  if (!Array.isArray(value)) {
    problems.push(problem(at, value === undefined ? 'missing' : 'must be a list', RULE));
    return;
  }
  value.forEach((ev: unknown, i) => {
    const where = joinPointer(at, i);
    if (!isObject(ev)) {
      problems.push(problem(where, 'must be an object', RULE));
      return;
    }
    if (typeof ev.action !== 'string')
      problems.push(problem(joinPointer(where, 'action'), 'must be a string', RULE));
    // Absent in an export written before the record's actor and subject were checked: the
    // verifier then says the record names none (a failed check, not a malformed file).
    for (const field of ['actor', 'subject'] as const) {
      if (ev[field] !== undefined && typeof ev[field] !== 'string')
        problems.push(problem(joinPointer(where, field), 'must be a string', RULE));
    }
    if (ev.details !== null && !isObject(ev.details))
      problems.push(problem(joinPointer(where, 'details'), 'must be an object or null', RULE));
  });
}

function checkEntry(entry: unknown, at: string, problems: Problem[]): void {
  if (!isObject(entry)) {
    problems.push(problem(at, 'must be an object (an assertion with its decision)', RULE));
    return;
  }
  checkFields(entry.assertion, ASSERTION, joinPointer(at, 'assertion'), problems);
  if (entry.approval !== undefined) {
    const where = joinPointer(at, 'approval');
    checkFields(entry.approval, APPROVAL, where, problems);
    const scope = isObject(entry.approval) ? entry.approval.scope : undefined;
    if (scope !== undefined && scope !== null)
      checkFields(scope, SCOPE, joinPointer(where, 'scope'), problems);
  }
  if (entry.change !== undefined)
    checkFields(entry.change, CHANGE, joinPointer(at, 'change'), problems);
  if (entry.review !== undefined)
    checkFields(entry.review, REVIEW, joinPointer(at, 'review'), problems);
  checkEvents(entry.events, joinPointer(at, 'events'), problems);
}

/**
 * The entries of an evidence document (`{ "evidence": [ … ] }`, as `decisions export` writes it),
 * every field checked for its kind; throws INPUT_INVALID otherwise, naming `what` (the file) and
 * each problem by its pointer (rule `decisions.evidence`, at most 50). Never throws anything else.
 */
export function parseDecisionEvidence(doc: unknown, what: string): DecisionEvidence[] {
  const list = isObject(doc) ? doc.evidence : undefined;
  if (!Array.isArray(list)) {
    const why =
      'not an evidence document: it holds no "evidence" list (write one with `toolgate decisions export`)';
    throw new ToolgateError('INPUT_INVALID', `${what}: ${why}`, {
      problems: [problem('/evidence', why, RULE)],
    });
  }
  const problems: Problem[] = [];
  for (let i = 0; i < list.length && problems.length < MAX_PROBLEMS; i++)
    checkEntry(list[i], joinPointer('/evidence', i), problems);
  if (problems.length > 0) {
    const shown = problems.slice(0, MAX_PROBLEMS);
    const first = shown
      .slice(0, 3)
      .map((p) => `${p.pointer} ${p.message}`)
      .join('; ');
    throw new ToolgateError(
      'INPUT_INVALID',
      `${what}: ${shown.length === 1 ? 'an evidence entry is' : 'evidence entries are'} malformed: ${first}${shown.length > 3 ? `; and ${shown.length - 3} more` : ''}`,
      { problems: shown },
    );
  }
  return list as DecisionEvidence[];
}
