/**
 * @module Migration 0038: the first admin's set-up as a one-way latch (docs/security-model.md,
 * "Four eyes: two people, not two accounts"; attack round 10, F3). The `meta` key
 * `first_admin_set_up` is written when an account holding `admin` gets a second factor and is
 * never removed: from then on the bootstrap admin token's fresh-install powers stay ended, whatever
 * later happens to the accounts. An install that already has an account holding `admin` with a
 * second factor (enabled or not) is set up: the key is written here.
 */
import { type Kysely, type Migration, sql } from 'kysely';

export const firstAdminSetUp: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`insert into meta (key, value)
      select 'first_admin_set_up', 'upgrade'
      where exists (select 1 from operators o
                    join operator_second_factors f on f.operator_id = o.id
                    where o.roles like '%"admin"%')`.execute(db);
  },
};
