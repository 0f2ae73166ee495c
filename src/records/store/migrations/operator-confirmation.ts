/**
 * @module Migration 0037: whether an operator account counts as a person of its own in a decision
 * that needs two people (docs/security-model.md, "Four eyes: two people, not two accounts").
 * `set_up_by` is the actor who last handed the account credentials or a deciding role;
 * `confirmed_by` / `confirmed_at` the operator who confirmed it since (cleared by the next such
 * act). Accounts that exist at the upgrade are marked confirmed (`confirmed_by` = `upgrade`), so
 * a running install keeps its approvers. The `meta` key `four_eyes_genesis_closed` is set once two
 * confirmed deciders have existed (from then on nobody confirms an account they set up); it is set
 * here when the install already has two deciders, so such an install never counts as fresh.
 */
import { type Kysely, type Migration, sql } from 'kysely';

export const operatorConfirmation: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('operators').addColumn('set_up_by', 'text').execute();
    await db.schema.alterTable('operators').addColumn('confirmed_by', 'text').execute();
    await db.schema.alterTable('operators').addColumn('confirmed_at', 'text').execute();
    await sql`update operators set confirmed_by = 'upgrade', confirmed_at = updated_at`.execute(db);
    // The row every confirmation locks first (src/domain/operators/confirmation.ts).
    await sql`insert into meta (key, value) values ('four_eyes_confirmations', '0')`.execute(db);
    await sql`insert into meta (key, value)
      select 'four_eyes_genesis_closed', 'upgrade'
      where (select count(*) from operators
             where roles like '%"approver"%' or roles like '%"admin"%') >= 2`.execute(db);
  },
};
