/**
 * @module Owner teams' notification channels (docs/architecture.md §8, C16): a webhook per team
 * (loopback or https, checked as the reviewer webhooks are), at most ten per team, added and
 * removed by an admin or an owner of that team, or declared by an applied file (`kind:
 * OwnerChannel`), each change an audited event. A channel's URL is a credential (a Slack webhook
 * URL is one): it is stored sealed (channel-url.ts), used for delivery only, and every view,
 * event, plan line and error shows its origin, never the path.
 */
import type { Kysely, Transaction } from 'kysely';
import {
  type Actor,
  type Clock,
  type Outbound,
  OWNER_PATTERN,
  type Problem,
  problem,
  systemClock,
  ToolgateError,
  timeOrderedId,
} from '../../core/index.js';
import type { MasterKey } from '../../domain/credentials/index.js';
import {
  appendEvent,
  type Database,
  isUniqueViolation,
  LOCK_CLASSES,
  lockKeyIn,
} from '../../records/store/index.js';
import {
  openUrlOrNull,
  sealLegacyIn,
  sealVersion,
  storedUrl,
  urlHint,
  urlKey,
} from './channel-url.js';
import { MAX_CHANNEL_URL_CHARS } from './owner-channel-spec.js';

export const MAX_CHANNELS_PER_TEAM = 10;
const TEAM = new RegExp(OWNER_PATTERN);

/** A channel as operators see it: the URL's origin only. */
export interface OwnerChannelView {
  readonly id: string;
  readonly team: string;
  /** The name an applied file gives it; null for one added by hand. */
  readonly name: string | null;
  readonly kind: 'webhook';
  readonly url_hint: string;
  readonly created_at: string;
  readonly created_by: string;
}

export interface NewOwnerChannel {
  readonly team: string;
  readonly kind?: string;
  readonly url: string;
}

/** A channel as an applied file declares it, its URL read already (owner-channel-spec.ts). */
export interface DeclaredChannel {
  readonly team: string;
  readonly name: string;
  readonly url: string;
}

/** Which teams a caller may touch: every team (null), or these (an owner who is not an admin). */
export type TeamScope = readonly string[] | null;

type Row = Database['owner_channels'];

function invalid(pointer: string, message: string, rule: string): ToolgateError<'INPUT_INVALID'> {
  return new ToolgateError('INPUT_INVALID', message, {
    problems: [problem(pointer, message, rule)],
  });
}

function view(r: Row): OwnerChannelView {
  return {
    id: r.id,
    team: r.team,
    name: r.name,
    kind: 'webhook',
    url_hint: r.url_hint ?? urlHint(r.url),
    created_at: r.created_at,
    created_by: r.created_by,
  };
}

function checkScope(scope: TeamScope, team: string): void {
  if (scope === null || scope.includes(team)) return;
  throw new ToolgateError(
    'FORBIDDEN',
    `the channels of team ${team} belong to its owners (yours: ${scope.join(', ') || 'none'})`,
    { roles: ['admin'] },
  );
}

export class OwnerChannels {
  readonly #db: Kysely<Database>;
  readonly #clock: Clock;
  readonly #masterKey: () => MasterKey;
  readonly #changed: (() => void)[] = [];

  readonly #outbound: Pick<Outbound, 'problem'>;

  constructor(
    db: Kysely<Database>,
    outbound: Pick<Outbound, 'problem'>,
    /** Seals and opens channel URLs; loaded on first use. */
    masterKey: () => MasterKey,
    clock: Clock = systemClock,
  ) {
    this.#db = db;
    this.#outbound = outbound;
    this.#masterKey = masterKey;
    this.#clock = clock;
  }

  /** Told after a channel is added or removed through this service (delivery caches drop). */
  onChange(listener: () => void): void {
    this.#changed.push(listener);
  }

  /**
   * Why `url` may not be a channel's URL (`pointer` locates it), or null: its length, then the
   * tool-egress rules (resolved now, public addresses only, loopback only where the gateway's
   * admin allowed it; delivery checks and dials again, owner-notices.ts). The problem names the
   * host at most, never the URL.
   */
  async urlProblem(url: string, pointer = '/url'): Promise<Problem | null> {
    if (url.length > MAX_CHANNEL_URL_CHARS) {
      return problem(
        pointer,
        `url must be a URL of at most ${MAX_CHANNEL_URL_CHARS} characters`,
        'format',
      );
    }
    const p = await this.#outbound.problem(url);
    return p ? problem(pointer, `webhook URL ${p.message}`, p.rule) : null;
  }

  async add(
    input: NewOwnerChannel,
    actor: Actor,
    scope: TeamScope = null,
  ): Promise<OwnerChannelView> {
    const { team, url } = input;
    const kind = input.kind ?? 'webhook';
    if (typeof team !== 'string' || !TEAM.test(team))
      throw invalid('/team', 'team must be an owner name (letters, digits, _ . @ -)', 'pattern');
    if (kind !== 'webhook') throw invalid('/kind', 'kind must be webhook', 'enum');
    if (typeof url !== 'string') throw invalid('/url', 'url must be a URL', 'format');
    checkScope(scope, team);
    const p = await this.urlProblem(url);
    if (p) throw new ToolgateError('INPUT_INVALID', p.message, { problems: [p] });
    const now = this.#clock();
    const id = timeOrderedId('ch_', now.getTime());
    const key = this.#masterKey();
    const row: Row = {
      id,
      team,
      kind: 'webhook',
      name: null,
      ...storedUrl(key, id, url),
      created_at: now.toISOString(),
      created_by: actor.id,
      updated_at: null,
    };
    await this.#db.transaction().execute(async (trx) => {
      await this.lockTeamsIn(trx, [team]);
      await sealLegacyIn(trx, key);
      await this.#insertIn(trx, row, actor, now);
    });
    this.#tell();
    return view(row);
  }

  /**
   * Takes each team's lock for the rest of `trx`, in one order (sorted), so that a team's count
   * and insert run alone on PostgreSQL too (attack round 22, Y15). Taken first in a transaction,
   * before an event takes the audit chain's lock: `add` does, and an apply takes its files'
   * teams' before it writes anything (docs/architecture.md §5).
   */
  async lockTeamsIn(trx: Transaction<Database>, teams: readonly string[]): Promise<void> {
    for (const team of [...new Set(teams)].sort()) {
      await lockKeyIn(trx, LOCK_CLASSES.ownerChannels, team);
    }
  }

  /**
   * Inserts a channel under the team's cap, the team's lock held (lockTeamsIn); a URL the team has
   * already is refused.
   */
  async #insertIn(trx: Transaction<Database>, row: Row, actor: Actor, now: Date): Promise<void> {
    const { n } = await trx
      .selectFrom('owner_channels')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('team', '=', row.team)
      .executeTakeFirstOrThrow();
    if (Number(n) >= MAX_CHANNELS_PER_TEAM)
      throw invalid(
        '/team',
        `team ${row.team} has ${MAX_CHANNELS_PER_TEAM} channels already`,
        'channels.cap',
      );
    const same = await trx
      .selectFrom('owner_channels')
      .select('id')
      .where('team', '=', row.team)
      .where('url_key', '=', row.url_key)
      .executeTakeFirst();
    if (same) throw duplicate(row.team, same.id);
    try {
      await trx.insertInto('owner_channels').values(row).execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicate(row.team);
      throw err;
    }
    await appendEvent(trx, actor, now, {
      action: 'owner_channel.added',
      subject: `team:${row.team}`,
      details: {
        channel: row.id,
        kind: 'webhook',
        url_hint: row.url_hint,
        ...(row.name !== null ? { name: row.name } : {}),
      },
    });
  }

  /**
   * Makes the team's channel `name` what an applied file declares, inside the apply's transaction:
   * created (the team's cap and one URL per team hold as for `add`), its URL replaced when it
   * differs (compared by keyed hash: the stored URL is not read for it), sealed again when the
   * hash matches but the stored seal does not open (`resealed`: it was tampered with or copied,
   * and delivery skips it), or unchanged. The URL was checked by `urlProblem` before the
   * transaction began. `scope` as for `add`.
   */
  async saveIn(
    trx: Transaction<Database>,
    declared: DeclaredChannel,
    actor: Actor,
    scope: TeamScope = null,
  ): Promise<{
    outcome: 'created' | 'updated' | 'unchanged';
    view: OwnerChannelView;
    resealed?: true;
  }> {
    checkScope(scope, declared.team);
    // Held already when the apply took its teams' locks first, as it does.
    await this.lockTeamsIn(trx, [declared.team]);
    const key = this.#masterKey();
    await sealLegacyIn(trx, key);
    const now = this.#clock();
    const found = await trx
      .selectFrom('owner_channels')
      .selectAll()
      .where('team', '=', declared.team)
      .where('name', '=', declared.name)
      .executeTakeFirst();
    if (!found) {
      const id = timeOrderedId('ch_', now.getTime());
      const row: Row = {
        id,
        team: declared.team,
        kind: 'webhook',
        name: declared.name,
        ...storedUrl(key, id, declared.url),
        created_at: now.toISOString(),
        created_by: actor.id,
        updated_at: null,
      };
      await this.#insertIn(trx, row, actor, now);
      return { outcome: 'created', view: view(row) };
    }
    const same = found.url_key === urlKey(key, declared.url);
    const resealed = same && openUrlOrNull(() => key, found) === null;
    if (same && !resealed) return { outcome: 'unchanged', view: view(found) };
    const stored = storedUrl(key, found.id, declared.url, sealVersion(found.url_sealed) + 1);
    const taken = await trx
      .selectFrom('owner_channels')
      .select('id')
      .where('team', '=', declared.team)
      .where('url_key', '=', stored.url_key)
      .where('id', '!=', found.id)
      .executeTakeFirst();
    if (taken) throw duplicate(declared.team, taken.id);
    await trx
      .updateTable('owner_channels')
      .set({ ...stored, updated_at: now.toISOString() })
      .where('id', '=', found.id)
      .execute();
    await appendEvent(trx, actor, now, {
      action: 'owner_channel.updated',
      subject: `team:${declared.team}`,
      details: {
        channel: found.id,
        name: declared.name,
        url_hint: stored.url_hint,
        ...(resealed ? { resealed: true } : {}),
      },
    });
    return {
      outcome: 'updated',
      view: view({ ...found, ...stored }),
      ...(resealed ? { resealed: true as const } : {}),
    };
  }

  async list(filter: { team?: string } = {}, scope: TeamScope = null): Promise<OwnerChannelView[]> {
    let q = this.#db.selectFrom('owner_channels').selectAll().orderBy('team').orderBy('id');
    if (filter.team !== undefined) q = q.where('team', '=', filter.team);
    if (scope !== null) {
      if (scope.length === 0) return [];
      q = q.where('team', 'in', [...scope]);
    }
    return (await q.execute()).map(view);
  }

  async remove(id: string, actor: Actor, scope: TeamScope = null): Promise<void> {
    const found = await this.#db
      .selectFrom('owner_channels')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    // Another team's channel is not found for an owner: they learn nothing about it.
    if (!found || (scope !== null && !scope.includes(found.team)))
      throw new ToolgateError('NOT_FOUND', `no channel ${id}`, {});
    await this.#db.transaction().execute((trx) => this.#deleteIn(trx, found, actor, {}));
    this.#tell();
  }

  /**
   * Removes the team's channel `name` inside the caller's transaction (`apply --prune`); false
   * when there is none.
   */
  async removeIn(
    trx: Transaction<Database>,
    team: string,
    name: string,
    actor: Actor,
    reason: string,
  ): Promise<boolean> {
    const found = await trx
      .selectFrom('owner_channels')
      .selectAll()
      .where('team', '=', team)
      .where('name', '=', name)
      .executeTakeFirst();
    if (!found) return false;
    await this.#deleteIn(trx, found, actor, { name, reason });
    return true;
  }

  async #deleteIn(
    trx: Transaction<Database>,
    found: Row,
    actor: Actor,
    more: Record<string, string>,
  ): Promise<void> {
    await trx.deleteFrom('owner_channels').where('id', '=', found.id).execute();
    await appendEvent(trx, actor, this.#clock(), {
      action: 'owner_channel.removed',
      subject: `team:${found.team}`,
      details: { channel: found.id, url_hint: view(found).url_hint, ...more },
    });
  }

  /**
   * Where a team's notices go (delivery only; never handed to a front): the URL of each channel
   * whose seal opens, and the ids of those whose seal does not (tampered with, or copied from
   * another channel: skipped, and reported by the caller).
   */
  async deliveryTargets(
    team: string,
  ): Promise<{ targets: { id: string; url: string }[]; unreadable: string[] }> {
    const rows = await this.#db
      .selectFrom('owner_channels')
      .select(['id', 'url', 'url_sealed'])
      .where('team', '=', team)
      .orderBy('id')
      .execute();
    const targets: { id: string; url: string }[] = [];
    const unreadable: string[] = [];
    for (const r of rows) {
      const url = openUrlOrNull(this.#masterKey, r);
      if (url === null) unreadable.push(r.id);
      else targets.push({ id: r.id, url });
    }
    return { targets, unreadable };
  }

  /** The delivery URLs of a team's channels whose seals open (`deliveryTargets`). */
  async urlsOf(team: string): Promise<{ id: string; url: string }[]> {
    return (await this.deliveryTargets(team)).targets;
  }

  #tell(): void {
    for (const l of this.#changed) l();
  }
}

function duplicate(team: string, id?: string): ToolgateError<'INPUT_INVALID'> {
  return invalid(
    '/url',
    `team ${team} has a channel with this URL already${id !== undefined ? ` (${id})` : ''}`,
    'unique',
  );
}
