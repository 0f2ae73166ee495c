/**
 * @module PostgreSQL's counter charge (counter-charge.ts): one call of `toolgate_charge`, the
 * function migration 0048 creates. It locks the session's row and each counter's key (the same
 * advisory lock, class and hash as Store.lockKey), checks every sum, and only then writes; as one
 * statement outside a transaction it is its own transaction, so each lock is held for the
 * function's run and its commit, not for the round trips of a client that may wait for a core.
 */
import { type Kysely, sql } from 'kysely';
import type { ChargeCounters, ChargeRefusal } from '../counter-charge.js';
import { COUNTER_LOCK_CLASS } from '../counter-charge.js';
import type { Database } from '../database.js';

/** The function's text: created by migration 0048 (postgres/migration-sql.ts). */
export const CHARGE_FUNCTION = `
create or replace function toolgate_charge(lock_class integer, request jsonb) returns integer
language plpgsql as $fn$
declare
  c jsonb;
  i integer := 0;
  used bigint;
  spent bigint;
  s jsonb := request->'spend';
begin
  if s is not null then
    select spend_cents into spent from sessions where id = s->>'session_id' for update;
    if not found then return -1; end if;
    if s ? 'budget' and spent + (s->>'cents')::bigint > (s->>'budget')::bigint then
      return -1;
    end if;
  end if;
  for c in select value from jsonb_array_elements(request->'charges') loop
    perform pg_advisory_xact_lock(lock_class, hashtext(c->>'key'));
    select coalesce(sum(amount), 0) into used from ceiling_counters
      where key = c->>'key' and bucket >= (c->>'from')::bigint;
    if used + (c->>'amount')::bigint > (c->>'limit')::bigint then return i; end if;
    i := i + 1;
  end loop;
  if s is not null then
    update sessions set spend_cents = spend_cents + (s->>'cents')::bigint
      where id = s->>'session_id';
  end if;
  for c in select value from jsonb_array_elements(request->'charges') loop
    insert into ceiling_counters (key, bucket, amount, expires_at)
      values (c->>'key', (c->>'bucket')::bigint, (c->>'amount')::bigint, c->>'expires_at')
      on conflict (key, bucket) do update set amount = ceiling_counters.amount + excluded.amount;
  end loop;
  return null;
end
$fn$`;

export const chargeCounters: ChargeCounters = async (db: Kysely<Database>, spend, charges) => {
  const request = {
    ...(spend !== null
      ? {
          spend: {
            session_id: spend.sessionId,
            cents: spend.cents,
            ...(spend.budget !== undefined ? { budget: spend.budget } : {}),
          },
        }
      : {}),
    charges: charges.map((c) => ({
      key: c.key,
      bucket: c.bucket,
      from: c.from,
      expires_at: c.expiresAt,
      amount: c.amount,
      limit: c.limit,
    })),
  };
  const result = await sql<{ refused: number | null }>`
    select toolgate_charge(${COUNTER_LOCK_CLASS}, ${JSON.stringify(request)}::jsonb) as refused`.execute(
    db,
  );
  const refused = result.rows[0]?.refused ?? null;
  const outcome: ChargeRefusal = refused === null ? null : refused < 0 ? 'spend' : Number(refused);
  return outcome;
};
