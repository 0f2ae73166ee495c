/**
 * @module Migration 0040: the set-up latch on an install where people have acted already
 * (docs/security-model.md, "Four eyes: two people, not two accounts"; attack round 11, F1). The
 * latch now also closes at a person's first sign-in or personal-token request; an install
 * upgraded from before that rule has people acting without the latch written, and the bootstrap
 * token would keep its fresh-install powers until the next such act. Any record an operator
 * account wrote as itself (`operator:<id>`: a console sign-in, a personal token's request) or a
 * console session shows a person acted: the latch is written here, with the value `upgrade`.
 */
import { type Kysely, type Migration, sql } from 'kysely';

export const personActedLatch: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`insert into meta (key, value)
      select 'first_admin_set_up', 'upgrade'
      where not exists (select 1 from meta where key = 'first_admin_set_up')
        and (exists (select 1 from events where actor like 'operator:%')
             or exists (select 1 from console_sessions))`.execute(db);
  },
};
