/**
 * @module Live destination sets (docs/architecture.md §5, tables `destination_sets` and
 * `destination_set_members`): named allow-lists a tool's `destinations` rule may name. An admin
 * creates a set and adds or removes members; or the set names a registered directory tool, which
 * toolgate itself calls (never with an agent's credentials) on a refresh interval and on a miss
 * at most once per short interval, storing what it answers. Every change is an event and so an
 * audit record. Members are stored normalised for the set's kind, so a membership test is one
 * primary-key read of the value the policy step normalised the same way.
 */
import type { Kysely, Transaction } from 'kysely';
import {
  type Actor,
  type Clock,
  problem,
  systemActor,
  systemClock,
  ToolgateError,
} from '../../core/index.js';
import { appendEvent, type Database, isUniqueViolation } from '../../records/store/index.js';
import {
  type DestinationRuleKind,
  normaliseDestination,
  type SetMembership,
} from './destination-policy.js';
import {
  DEFAULT_MISS_SECONDS,
  DEFAULT_REFRESH_SECONDS,
  type DestinationSetDocument,
  type DestinationSetSpec,
  type DestinationSetView,
  type DirectorySource,
  destinationSetProblems,
  directoryOf,
  MAX_SET_MEMBERS,
  normaliseAll,
  setView,
} from './destination-set-spec.js';
import {
  deleteSetIn,
  insertSetIn,
  lockSetsIn,
  type SetSaved,
  saveSetIn,
} from './destination-set-writes.js';

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
    const problems = destinationSetProblems(spec);
    if (problems.length > 0)
      throw new ToolgateError('INPUT_INVALID', 'invalid destination set', { problems });
    try {
      await this.#db.transaction().execute((trx) => insertSetIn(trx, spec, actor, this.#clock()));
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

  /**
   * Makes the set what an applied document declares, inside the apply's transaction
   * (destination-set-writes.ts): INPUT_INVALID with pointers relative to the spec when the
   * document cannot be applied.
   */
  saveIn(trx: Transaction<Database>, doc: DestinationSetDocument, actor: Actor): Promise<SetSaved> {
    return saveSetIn(trx, doc, actor, this.#clock());
  }

  /** Takes the sets' locks first in an apply's transaction (destination-set-writes.ts). */
  lockIn(trx: Transaction<Database>, names: readonly string[]): Promise<void> {
    return lockSetsIn(trx, names);
  }

  /** Deletes a set inside the caller's transaction (`apply --prune`); null when there is none. */
  deleteIn(
    trx: Transaction<Database>,
    name: string,
    actor: Actor,
    reason: string,
  ): Promise<{ kind: DestinationRuleKind; members: number } | null> {
    return deleteSetIn(trx, name, actor, reason, this.#clock());
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
    return rows.map((r) => setView(r, byName.get(r.name) ?? 0));
  }

  async get(name: string): Promise<DestinationSetView> {
    const row = await this.#row(name);
    const count = await this.#db
      .selectFrom('destination_set_members')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('set_name', '=', name)
      .executeTakeFirstOrThrow();
    return setView(row, Number(count.n));
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
      // Counted and changed under the set's lock: parallel adds cannot pass the cap (Y15).
      await lockSetsIn(trx, [name]);
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
      await lockSetsIn(trx, [name]);
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
