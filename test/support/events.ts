/** @module The administrative event record as the suites read it: a mark, then what came after. */
import type { AdminApi } from '../../src/api/index.js';

/** An administrative event with its details parsed (`raw` as stored). */
export interface Recorded {
  readonly action: string;
  readonly actor: string;
  readonly via: string;
  readonly subject: string;
  readonly details: Record<string, unknown>;
  readonly raw: string;
}

type Events = Pick<AdminApi, 'events'>;

/** The seq of the newest event: what a step wrote is what comes after it. */
export async function lastSeq(admin: Events): Promise<number> {
  return (await admin.events.list({ limit: 100_000 })).at(-1)?.seq ?? 0;
}

/** The events written after `seq`, oldest first. */
export async function eventsSince(admin: Events, seq: number): Promise<Recorded[]> {
  return (await admin.events.list({ afterSeq: seq, limit: 1000 })).map((e) => ({
    action: e.action,
    actor: e.actor,
    via: e.via,
    subject: e.subject,
    details: JSON.parse(e.details) as Record<string, unknown>,
    raw: e.details,
  }));
}
