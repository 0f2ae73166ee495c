/**
 * @module The untrusted sources a session remembers (migration 0025): which tools' results, which
 * may carry text written outside the organisation, entered it, and whether one held
 * instruction-like text (docs/architecture.md §3, steps `audit-post` and `approval`).
 */
import type { Kysely } from 'kysely';
import { ToolgateError } from '../../core/index.js';
import type { Database } from '../../records/store/index.js';
import { untrustedSourcesOf } from './session-row.js';

/** Sources a session keeps; past it the oldest are dropped (the flag stays, the list is a sample). */
export const MAX_UNTRUSTED_SOURCES = 64;

/**
 * Records that an untrusted source's result entered the session (and whether it held
 * instruction-like text); returns the session's sources as stored after. The list only grows:
 * a compare-and-set on the stored text, retried on a concurrent writer, so two calls of one
 * session on two replicas never lose each other's source.
 */
export async function addUntrustedSource(
  db: Kysely<Database>,
  sessionId: string,
  toolId: string,
  injection: boolean,
): Promise<{ readonly sources: readonly string[]; readonly injectionSeen: boolean }> {
  for (let attempt = 0; attempt < 8; attempt++) {
    const row = await db
      .selectFrom('sessions')
      .select(['untrusted_sources', 'injection_seen'])
      .where('id', '=', sessionId)
      .executeTakeFirst();
    if (!row) return { sources: [], injectionSeen: false };
    const sources = untrustedSourcesOf(row.untrusted_sources);
    const known = sources.includes(toolId);
    if (known && (!injection || row.injection_seen === 1)) {
      return { sources, injectionSeen: row.injection_seen === 1 };
    }
    const next = known ? sources : [...sources, toolId].slice(-MAX_UNTRUSTED_SOURCES);
    const nextText = JSON.stringify(next);
    let update = db
      .updateTable('sessions')
      .set({ untrusted_sources: nextText, injection_seen: injection ? 1 : row.injection_seen })
      .where('id', '=', sessionId);
    update =
      row.untrusted_sources === null
        ? update.where('untrusted_sources', 'is', null)
        : update.where('untrusted_sources', '=', row.untrusted_sources);
    const result = await update.executeTakeFirst();
    if (Number(result.numUpdatedRows) === 1) {
      return { sources: next, injectionSeen: injection || row.injection_seen === 1 };
    }
  }
  throw new ToolgateError('STORE_UNAVAILABLE', 'the session could not be updated', {});
}
