/**
 * @module Owner teams' notification channels (docs/architecture.md §8, C16): a webhook per team
 * (loopback or https, checked as the reviewer webhooks are), at most ten per team, added and
 * removed by an admin or an owner of that team, each change an audited event. A channel's URL is
 * used for delivery only: every view shows its origin, never the path (a Slack webhook URL is a
 * credential).
 */
import type { Kysely } from 'kysely';
import {
  type Actor,
  type Clock,
  type Outbound,
  OWNER_PATTERN,
  problem,
  systemClock,
  ToolgateError,
  timeOrderedId,
} from '../../core/index.js';
import { appendEvent, type Database, isUniqueViolation } from '../../records/store/index.js';

export const MAX_CHANNELS_PER_TEAM = 10;
const TEAM = new RegExp(OWNER_PATTERN);

/** A channel as operators see it: the URL's origin only. */
export interface OwnerChannelView {
  readonly id: string;
  readonly team: string;
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

/** Which teams a caller may touch: every team (null), or these (an owner who is not an admin). */
export type TeamScope = readonly string[] | null;

function invalid(pointer: string, message: string, rule: string): ToolgateError<'INPUT_INVALID'> {
  return new ToolgateError('INPUT_INVALID', message, {
    problems: [problem(pointer, message, rule)],
  });
}

function hint(url: string): string {
  try {
    return `${new URL(url).origin}/…`;
  } catch {
    return '(invalid)';
  }
}

function view(r: {
  id: string;
  team: string;
  url: string;
  created_at: string;
  created_by: string;
}): OwnerChannelView {
  return {
    id: r.id,
    team: r.team,
    kind: 'webhook',
    url_hint: hint(r.url),
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
  readonly #changed: (() => void)[] = [];

  readonly #outbound: Pick<Outbound, 'problem'>;

  constructor(
    db: Kysely<Database>,
    outbound: Pick<Outbound, 'problem'>,
    clock: Clock = systemClock,
  ) {
    this.#db = db;
    this.#outbound = outbound;
    this.#clock = clock;
  }

  /** Told after a channel is added or removed through this service (delivery caches drop). */
  onChange(listener: () => void): void {
    this.#changed.push(listener);
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
    if (typeof url !== 'string' || url.length > 2_000)
      throw invalid('/url', 'url must be a URL of at most 2000 characters', 'format');
    // The tool-egress rules: resolved now, public addresses only, loopback only where the
    // gateway's admin allowed it; delivery checks and dials again (owner-notices.ts).
    checkScope(scope, team);
    const p = await this.#outbound.problem(url);
    if (p) throw invalid('/url', `webhook URL ${p.message}`, p.rule);
    const now = this.#clock();
    const row = {
      id: timeOrderedId('ch_', now.getTime()),
      team,
      kind: 'webhook' as const,
      url,
      created_at: now.toISOString(),
      created_by: actor.id,
    };
    try {
      await this.#db.transaction().execute(async (trx) => {
        const { n } = await trx
          .selectFrom('owner_channels')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('team', '=', team)
          .executeTakeFirstOrThrow();
        if (Number(n) >= MAX_CHANNELS_PER_TEAM)
          throw invalid(
            '/team',
            `team ${team} has ${MAX_CHANNELS_PER_TEAM} channels already`,
            'channels.cap',
          );
        await trx.insertInto('owner_channels').values(row).execute();
        await appendEvent(trx, actor, now, {
          action: 'owner_channel.added',
          subject: `team:${team}`,
          details: { channel: row.id, kind: 'webhook', url_hint: hint(url) },
        });
      });
    } catch (err) {
      if (isUniqueViolation(err))
        throw invalid('/url', `team ${team} has a channel with this URL already`, 'unique');
      throw err;
    }
    this.#tell();
    return view(row);
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
    await this.#db.transaction().execute(async (trx) => {
      await trx.deleteFrom('owner_channels').where('id', '=', id).execute();
      await appendEvent(trx, actor, this.#clock(), {
        action: 'owner_channel.removed',
        subject: `team:${found.team}`,
        details: { channel: id, url_hint: hint(found.url) },
      });
    });
    this.#tell();
  }

  /** The delivery URLs of a team's channels (delivery only; never handed to a front). */
  async urlsOf(team: string): Promise<{ id: string; url: string }[]> {
    return this.#db
      .selectFrom('owner_channels')
      .select(['id', 'url'])
      .where('team', '=', team)
      .orderBy('id')
      .execute();
  }

  #tell(): void {
    for (const l of this.#changed) l();
  }
}
