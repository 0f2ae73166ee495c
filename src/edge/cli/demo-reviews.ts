/**
 * @module The demo catalog's security reviews (`serve --demo`). The demo's restricted and
 * privileged tools would otherwise stay drafts until an approver reviews them, and a first look at
 * toolgate has no approver yet. Only drafts the demo seed itself registered are reviewed, by a
 * named seed operator whose notes say so; anything else waiting in the data folder stays waiting.
 */
import type { AdminApi } from '../../api/index.js';
import { DEMO_SEED_OPERATOR_ID, type Operator } from '../../domain/operators/index.js';

/** Actor id the demo catalog is registered as. */
export const DEMO_ACTOR_ID = 'system:demo';

/**
 * The reviewer of the demo catalog: nobody in particular, in no team. It holds no credential — it
 * exists only inside the serving process when `--demo` is given — and its reviews are recorded as
 * `operator:demo-seed` with notes naming the seed, so nobody mistakes them for a person's review.
 */
export const DEMO_REVIEWER: Operator = Object.freeze({
  id: DEMO_SEED_OPERATOR_ID,
  name: 'demo catalog seed (not a person)',
  roles: Object.freeze(['approver'] as const),
  teams: Object.freeze([] as string[]),
  authenticatedBy: 'personal-token',
});

/** Approves the pending reviews of what the demo seed registered; returns how many. */
export async function reviewDemoCatalog(
  admin: Pick<AdminApi, 'catalog' | 'reviews'>,
): Promise<number> {
  let reviewed = 0;
  let cursor: string | undefined;
  do {
    const page = await admin.reviews.page('pending', {
      limit: 500,
      ...(cursor !== undefined ? { cursor } : {}),
    });
    for (const r of page.items) {
      if (r.registered_by !== DEMO_ACTOR_ID) continue;
      await admin.catalog.review(
        r.tool_id,
        r.version,
        DEMO_REVIEWER,
        {
          definition_hash: r.definition_hash,
          decision: 'approved',
          notes: 'demo catalog: approved by the demo seed (serve --demo), not reviewed by a person',
        },
        { via: 'system' },
      );
      reviewed++;
    }
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return reviewed;
}
