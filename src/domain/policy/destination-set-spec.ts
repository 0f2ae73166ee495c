/**
 * @module What a live destination set is (docs/policies.md "Live sets"): its spec and JSON Schema,
 * the checks every path that writes one shares (REST, the CLI, `apply -f`), how its members are
 * normalised, and how operators see it.
 */
import { type Problem, problem, ToolgateError } from '../../core/index.js';
import type { Database } from '../../records/store/index.js';
import {
  DESTINATION_KINDS,
  type DestinationRuleKind,
  normaliseDestination,
} from './destination-policy.js';

export const DESTINATION_SET_NAME_PATTERN = '^[a-z][a-z0-9_.-]{0,63}$';
const NAME_RE = new RegExp(DESTINATION_SET_NAME_PATTERN);
/** Most members one set holds; a directory answering more is refused (members unchanged). */
export const MAX_SET_MEMBERS = 10_000;
/** Most values one add or remove takes. */
export const MAX_VALUES_PER_CHANGE = 1_000;
export const DEFAULT_REFRESH_SECONDS = 300;
export const DEFAULT_MISS_SECONDS = 10;

/** A directory tool as a set's source: toolgate calls it with no arguments. */
export interface DirectorySource {
  readonly tool: string;
  readonly version: string;
  /** JSON pointer into the tool's output to an array of strings (the members). */
  readonly members: string;
  /** Refresh when the stored members are older than this; default 300. */
  readonly refresh_seconds?: number;
  /** On a miss, refresh at most once per this many seconds; default 10. */
  readonly miss_seconds?: number;
}

export interface DestinationSetSpec {
  readonly name: string;
  readonly kind: DestinationRuleKind;
  readonly description?: string;
  /** Members come from this directory tool; without it an admin manages them. */
  readonly directory?: DirectorySource;
}

export interface DestinationSetView {
  readonly name: string;
  readonly kind: DestinationRuleKind;
  readonly source: 'admin' | 'directory';
  readonly directory: DirectorySource | null;
  readonly description: string;
  readonly created_at: string;
  readonly created_by: string;
  readonly updated_at: string;
  readonly refreshed_at: string | null;
  readonly members: number;
}

export const destinationSetSpecSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'kind'],
  properties: {
    name: { type: 'string', pattern: DESTINATION_SET_NAME_PATTERN },
    kind: { enum: [...DESTINATION_KINDS] },
    description: { type: 'string', maxLength: 1024 },
    directory: {
      type: 'object',
      additionalProperties: false,
      required: ['tool', 'version', 'members'],
      properties: {
        tool: { type: 'string', minLength: 1, maxLength: 200 },
        version: { type: 'string', minLength: 1, maxLength: 64 },
        members: { type: 'string', pattern: '^(/[^/]*)*$', maxLength: 256 },
        refresh_seconds: { type: 'integer', minimum: 10, maximum: 86_400 },
        miss_seconds: { type: 'integer', minimum: 1, maximum: 3_600 },
      },
    },
  },
} as const;

/**
 * A set as a configuration document declares it (`kind: DestinationSet`): the spec, and for a set
 * admins manage optionally its whole member list. Without `members` the document leaves the
 * members to `destination-sets add/remove`; with it, they become exactly that list.
 */
export interface DestinationSetDocument extends DestinationSetSpec {
  readonly members?: readonly string[];
}

export const destinationSetDocumentSchema = {
  ...destinationSetSpecSchema,
  properties: {
    ...destinationSetSpecSchema.properties,
    members: {
      type: 'array',
      maxItems: MAX_SET_MEMBERS,
      items: { type: 'string', minLength: 1, maxLength: 512 },
      description:
        "The set's whole member list (admin sets only); each normalised for its kind. Omit it to leave the members to `destination-sets add/remove`.",
    },
  },
} as const;

type Row = Database['destination_sets'];

/**
 * What is wrong with a set's spec beyond its schema (the one check of REST, the CLI and `apply`);
 * empty when nothing is.
 */
export function destinationSetProblems(spec: DestinationSetSpec): Problem[] {
  const problems: Problem[] = [];
  if (typeof spec.name !== 'string' || !NAME_RE.test(spec.name)) {
    problems.push(
      problem('/name', `must match ${DESTINATION_SET_NAME_PATTERN}`, 'destination_set.name'),
    );
  }
  if (!(DESTINATION_KINDS as readonly string[]).includes(spec.kind)) {
    problems.push(
      problem('/kind', `must be one of ${DESTINATION_KINDS.join(', ')}`, 'destination_set.kind'),
    );
  }
  const d = spec.directory;
  if (d !== undefined) {
    if (typeof d.tool !== 'string' || d.tool.length === 0 || typeof d.version !== 'string') {
      problems.push(
        problem('/directory', 'must name the tool and its version', 'destination_set.directory'),
      );
    }
    if (typeof d.members !== 'string' || (d.members !== '' && !d.members.startsWith('/'))) {
      problems.push(
        problem('/directory/members', 'must be a JSON pointer', 'destination_set.directory'),
      );
    }
    for (const [key, min, max] of [
      ['refresh_seconds', 10, 86_400],
      ['miss_seconds', 1, 3_600],
    ] as const) {
      const v = d[key];
      if (v !== undefined && (!Number.isSafeInteger(v) || v < min || v > max)) {
        problems.push(
          problem(
            `/directory/${key}`,
            `must be an integer from ${min} to ${max}`,
            'destination_set.directory',
          ),
        );
      }
    }
  }
  return problems;
}

/**
 * Each value normalised for the kind (duplicates after normalising kept once), and a problem at
 * `pointer/i` for each value that is not a destination of the kind: never guessed at.
 */
export function normaliseMembers(
  kind: DestinationRuleKind,
  values: readonly unknown[],
  pointer = '/values',
): { values: string[]; problems: Problem[] } {
  const problems: Problem[] = [];
  const out = new Set<string>();
  values.forEach((v, i) => {
    const n = normaliseDestination(kind, v);
    if (n.ok) out.add(n.value);
    else problems.push(problem(`${pointer}/${i}`, n.message, 'destination.malformed'));
  });
  return { values: [...out], problems };
}

/** Normalises every value of one change, or refuses the whole change naming each bad one. */
export function normaliseAll(kind: DestinationRuleKind, values: readonly string[]): string[] {
  if (values.length === 0 || values.length > MAX_VALUES_PER_CHANGE) {
    throw new ToolgateError('INPUT_INVALID', `give 1 to ${MAX_VALUES_PER_CHANGE} values`, {
      problems: [
        problem(
          '/values',
          `must hold 1 to ${MAX_VALUES_PER_CHANGE} values`,
          'destination_set.values',
        ),
      ],
    });
  }
  const { values: out, problems } = normaliseMembers(kind, values);
  if (problems.length > 0) {
    throw new ToolgateError('INPUT_INVALID', `not ${kind} destinations`, { problems });
  }
  return out;
}

export function directoryOf(row: Row): DirectorySource | null {
  return row.directory === null ? null : (JSON.parse(row.directory) as DirectorySource);
}

export function setView(row: Row, members: number): DestinationSetView {
  return {
    name: row.name,
    kind: row.kind as DestinationRuleKind,
    source: row.source === 'directory' ? 'directory' : 'admin',
    directory: directoryOf(row),
    description: row.description,
    created_at: row.created_at,
    created_by: row.created_by,
    updated_at: row.updated_at,
    refreshed_at: row.refreshed_at,
    members,
  };
}
