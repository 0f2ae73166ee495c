/**
 * @module Live destination sets (docs/architecture.md §5, tables `destination_sets` and
 * `destination_set_members`): named allow-lists a tool's `destinations` rule may name. An admin
 * creates a set and adds or removes members; or the set names a registered directory tool, which
 * toolgate itself calls (never with an agent's credentials) on a refresh interval and on a miss
 * at most once per short interval, storing what it answers. Every change is an event and so an
 * audit record. Members are stored normalised for the set's kind, so a membership test is one
 * primary-key read of the value the policy step normalised the same way.
 */
import type { Kysely } from 'kysely';
import {
  type Actor,
  type Clock,
  type Problem,
  problem,
  systemActor,
  systemClock,
  ToolgateError,
} from '../../core/index.js';
import { appendEvent, type Database, isUniqueViolation } from '../../records/store/index.js';
import {
  DESTINATION_KINDS,
  type DestinationRuleKind,
  normaliseDestination,
  type SetMembership,
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

/** Calls a directory tool for toolgate itself; the set's refresh hands it the source. */
export type DirectoryReader = (source: DirectorySource) => Promise<unknown>;

type Row = Database['destination_sets'];

export class DestinationSets implements SetMembership {
  readonly #db: Kysely<Database>;
  readonly #clock: Clock;
  readonly #reader: DirectoryReader | undefined;
  /** When each directory set was last attempted by this process (single flight, miss interval). */
  readonly #attempted = new Map<string, number>();
  readonly #inFlight = new Map<string, Promise<void>>();

  constructor(
    db: Kysely<Database>,
    clock: Clock = systemClock,
    /** How directory tools are called: through the gate's runtimes, as toolgate itself. */
    reader?: DirectoryReader,
  ) {
    this.#db = db;
    this.#clock = clock;
    this.#reader = reader;
  }

  async create(spec: DestinationSetSpec, actor: Actor): Promise<DestinationSetView> {
    const problems = specProblems(spec);
    if (problems.length > 0)
      throw new ToolgateError('INPUT_INVALID', 'invalid destination set', { problems });
    const now = this.#clock().toISOString();
    try {
      await this.#db.transaction().execute(async (trx) => {
        await trx
          .insertInto('destination_sets')
          .values({
            name: spec.name,
            kind: spec.kind,
            source: spec.directory ? 'directory' : 'admin',
            directory: spec.directory ? JSON.stringify(spec.directory) : null,
            description: spec.description ?? '',
            created_at: now,
            created_by: actor.id,
            updated_at: now,
            refreshed_at: null,
          })
          .execute();
        await appendEvent(trx, actor, this.#clock(), {
          action: 'destination_set.created',
          subject: `destination_set:${spec.name}`,
          details: { kind: spec.kind, ...(spec.directory ? { directory: spec.directory } : {}) },
        });
      });
    } catch (err) {
      if (isUniqueViolation(err)) {
        throw new ToolgateError('DESTINATION_SET_EXISTS', `destination set ${spec.name} exists`, {
          set: spec.name,
        });
      }
      throw err;
    }
    return this.get(spec.name);
  }

  async list(): Promise<DestinationSetView[]> {
    const rows = await this.#db
      .selectFrom('destination_sets')
      .selectAll()
      .orderBy('name')
      .execute();
    const counts = await this.#db
      .selectFrom('destination_set_members')
      .select(['set_name', (eb) => eb.fn.countAll<string | number>().as('n')])
      .groupBy('set_name')
      .execute();
    const byName = new Map(counts.map((c) => [c.set_name, Number(c.n)]));
    return rows.map((r) => view(r, byName.get(r.name) ?? 0));
  }

  async get(name: string): Promise<DestinationSetView> {
    const row = await this.#row(name);
    const count = await this.#db
      .selectFrom('destination_set_members')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('set_name', '=', name)
      .executeTakeFirstOrThrow();
    return view(row, Number(count.n));
  }

  /** The members, in order. */
  async members(name: string): Promise<string[]> {
    await this.#row(name);
    const rows = await this.#db
      .selectFrom('destination_set_members')
      .select('value')
      .where('set_name', '=', name)
      .orderBy('value')
      .execute();
    return rows.map((r) => r.value);
  }

  /** Names among `names` that are not sets (registration refuses a rule naming one). */
  async missing(names: readonly string[]): Promise<string[]> {
    if (names.length === 0) return [];
    const rows = await this.#db
      .selectFrom('destination_sets')
      .select('name')
      .where('name', 'in', [...names])
      .execute();
    const found = new Set(rows.map((r) => r.name));
    return names.filter((n) => !found.has(n));
  }

  /** Adds members of an admin set (normalised; a bad value refuses the whole change). */
  async add(name: string, values: readonly string[], actor: Actor): Promise<{ added: string[] }> {
    return this.#change(name, values, actor, 'add');
  }

  async remove(
    name: string,
    values: readonly string[],
    actor: Actor,
  ): Promise<{ removed: string[] }> {
    const { added } = await this.#change(name, values, actor, 'remove');
    return { removed: added };
  }

  async #change(
    name: string,
    values: readonly string[],
    actor: Actor,
    op: 'add' | 'remove',
  ): Promise<{ added: string[] }> {
    const row = await this.#row(name);
    if (row.source !== 'admin') {
      throw new ToolgateError('INPUT_INVALID', 'members of a directory set come from its tool', {
        problems: [
          problem('/values', 'this set is supplied by a directory tool', 'destination_set.source'),
        ],
      });
    }
    const kind = row.kind as DestinationRuleKind;
    const normal = normaliseAll(kind, values);
    return this.#db.transaction().execute(async (trx) => {
      const now = this.#clock().toISOString();
      const existing = new Set(
        (
          await trx
            .selectFrom('destination_set_members')
            .select('value')
            .where('set_name', '=', name)
            .where('value', 'in', normal)
            .execute()
        ).map((r) => r.value),
      );
      const changed =
        op === 'add'
          ? normal.filter((v) => !existing.has(v))
          : normal.filter((v) => existing.has(v));
      if (changed.length === 0) return { added: [] };
      if (op === 'add') {
        const count = await trx
          .selectFrom('destination_set_members')
          .select((eb) => eb.fn.countAll<string | number>().as('n'))
          .where('set_name', '=', name)
          .executeTakeFirstOrThrow();
        if (Number(count.n) + changed.length > MAX_SET_MEMBERS) {
          throw new ToolgateError(
            'INPUT_INVALID',
            `a set holds at most ${MAX_SET_MEMBERS} members`,
            {
              problems: [
                problem(
                  '/values',
                  `would exceed ${MAX_SET_MEMBERS} members`,
                  'destination_set.size',
                ),
              ],
            },
          );
        }
        await trx
          .insertInto('destination_set_members')
          .values(
            changed.map((value) => ({ set_name: name, value, added_at: now, added_by: actor.id })),
          )
          .execute();
      } else {
        await trx
          .deleteFrom('destination_set_members')
          .where('set_name', '=', name)
          .where('value', 'in', changed)
          .execute();
      }
      await trx
        .updateTable('destination_sets')
        .set({ updated_at: now })
        .where('name', '=', name)
        .execute();
      await appendEvent(trx, actor, this.#clock(), {
        action: op === 'add' ? 'destination_set.members_added' : 'destination_set.members_removed',
        subject: `destination_set:${name}`,
        details: { values: changed },
      });
      return { added: changed };
    });
  }

  /**
   * Asks the directory tool now and stores its answer: members added and removed in one
   * transaction with one audit event naming them; an unchanged answer only marks the time. A
   * failure leaves the members as they were (`DESTINATION_SET_UNAVAILABLE`).
   */
  async refresh(
    name: string,
    actor: Actor = systemActor('destination-directory'),
  ): Promise<{
    added: string[];
    removed: string[];
  }> {
    const row = await this.#row(name);
    const source = directoryOf(row);
    if (source === null) {
      throw new ToolgateError('INPUT_INVALID', 'an admin set has no directory to refresh', {
        problems: [problem('/name', 'this set is managed by admins', 'destination_set.source')],
      });
    }
    this.#attempted.set(name, this.#clock().getTime());
    const unavailable = (reason: string) =>
      new ToolgateError('DESTINATION_SET_UNAVAILABLE', `directory of set ${name}: ${reason}`, {
        set: name,
        reason,
      });
    if (!this.#reader) throw unavailable('no directory reader on this gateway');
    let output: unknown;
    try {
      output = await this.#reader(source);
    } catch (err) {
      throw unavailable(err instanceof Error ? err.message : 'the directory tool failed');
    }
    const list = pointerValue(output, source.members);
    if (!Array.isArray(list)) throw unavailable(`no array at ${source.members} in its result`);
    if (list.length > MAX_SET_MEMBERS) throw unavailable(`more than ${MAX_SET_MEMBERS} members`);
    const kind = row.kind as DestinationRuleKind;
    // A member that is not a well-formed destination of the kind is left out, never guessed at.
    const fresh = new Set<string>();
    for (const item of list) {
      const n = normaliseDestination(kind, item);
      if (n.ok) fresh.add(n.value);
    }
    return this.#db.transaction().execute(async (trx) => {
      const now = this.#clock().toISOString();
      const stored = new Set(
        (
          await trx
            .selectFrom('destination_set_members')
            .select('value')
            .where('set_name', '=', name)
            .execute()
        ).map((r) => r.value),
      );
      const added = [...fresh].filter((v) => !stored.has(v)).sort();
      const removed = [...stored].filter((v) => !fresh.has(v)).sort();
      for (let i = 0; i < added.length; i += 500) {
        await trx
          .insertInto('destination_set_members')
          .values(
            added
              .slice(i, i + 500)
              .map((value) => ({ set_name: name, value, added_at: now, added_by: actor.id })),
          )
          .execute();
      }
      for (let i = 0; i < removed.length; i += 500) {
        await trx
          .deleteFrom('destination_set_members')
          .where('set_name', '=', name)
          .where('value', 'in', removed.slice(i, i + 500))
          .execute();
      }
      await trx
        .updateTable('destination_sets')
        .set({
          refreshed_at: now,
          ...(added.length + removed.length > 0 ? { updated_at: now } : {}),
        })
        .where('name', '=', name)
        .execute();
      if (added.length + removed.length > 0) {
        await appendEvent(trx, actor, this.#clock(), {
          action: 'destination_set.refreshed',
          subject: `destination_set:${name}`,
          details: { tool: source.tool, version: source.version, added, removed },
        });
      }
      return { added, removed };
    });
  }

  /**
   * The policy step's question (`value` already normalised for the rule's kind, which is the
   * set's). A directory set past its refresh interval is refreshed first; on a miss it is
   * refreshed at most once per its miss interval, then asked again. A refresh that fails keeps
   * the stored members (they were the directory's last answer).
   */
  async admits(name: string, value: string): Promise<'yes' | 'no' | 'missing'> {
    const row = await this.#db
      .selectFrom('destination_sets')
      .selectAll()
      .where('name', '=', name)
      .executeTakeFirst();
    if (!row) return 'missing';
    const source = directoryOf(row);
    if (source !== null) {
      const now = this.#clock().getTime();
      const refreshed = row.refreshed_at === null ? 0 : Date.parse(row.refreshed_at);
      const attempted = this.#attempted.get(name) ?? 0;
      // A directory that keeps failing is asked at most once per miss interval, not per call.
      if (
        now - refreshed >= (source.refresh_seconds ?? DEFAULT_REFRESH_SECONDS) * 1000 &&
        now - attempted >= (source.miss_seconds ?? DEFAULT_MISS_SECONDS) * 1000
      ) {
        await this.#refreshOnce(name);
      }
    }
    if (await this.#has(name, value)) return 'yes';
    if (source === null) return 'no';
    const last = this.#attempted.get(name) ?? 0;
    if (this.#clock().getTime() - last < (source.miss_seconds ?? DEFAULT_MISS_SECONDS) * 1000) {
      return 'no';
    }
    await this.#refreshOnce(name);
    return (await this.#has(name, value)) ? 'yes' : 'no';
  }

  /** One refresh per set at a time in this process; its failure is the stored members' answer. */
  async #refreshOnce(name: string): Promise<void> {
    let running = this.#inFlight.get(name);
    if (!running) {
      running = this.refresh(name)
        .then(
          () => undefined,
          () => undefined,
        )
        .finally(() => this.#inFlight.delete(name));
      this.#inFlight.set(name, running);
    }
    await running;
  }

  async #has(name: string, value: string): Promise<boolean> {
    const hit = await this.#db
      .selectFrom('destination_set_members')
      .select('value')
      .where('set_name', '=', name)
      .where('value', '=', value)
      .executeTakeFirst();
    return hit !== undefined;
  }

  async #row(name: string): Promise<Row> {
    const row = await this.#db
      .selectFrom('destination_sets')
      .selectAll()
      .where('name', '=', name)
      .executeTakeFirst();
    if (!row) {
      throw new ToolgateError('DESTINATION_SET_NOT_FOUND', `no destination set ${name}`, {
        set: name,
      });
    }
    return row;
  }
}

function specProblems(spec: DestinationSetSpec): Problem[] {
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

/** Normalises every value for the kind, or refuses the whole change naming each bad one. */
function normaliseAll(kind: DestinationRuleKind, values: readonly string[]): string[] {
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
  const problems: Problem[] = [];
  const out = new Set<string>();
  values.forEach((v, i) => {
    const n = normaliseDestination(kind, v);
    if (n.ok) out.add(n.value);
    else problems.push(problem(`/values/${i}`, n.message, 'destination.malformed'));
  });
  if (problems.length > 0) {
    throw new ToolgateError('INPUT_INVALID', `not ${kind} destinations`, { problems });
  }
  return [...out];
}

function directoryOf(row: Row): DirectorySource | null {
  return row.directory === null ? null : (JSON.parse(row.directory) as DirectorySource);
}

function view(row: Row, members: number): DestinationSetView {
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

/** The value at a JSON pointer (own members only), or undefined. */
function pointerValue(root: unknown, pointer: string): unknown {
  if (pointer === '') return root;
  let node: unknown = root;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, token)) return undefined;
    node = (node as Record<string, unknown>)[token];
  }
  return node;
}
