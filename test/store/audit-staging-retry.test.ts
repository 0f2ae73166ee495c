/**
 * A staging whose database connection drops is retried on another, with the same rows (stream,
 * numbers, links): the records are in the chain once, not lost and not doubled (attack round 30,
 * F2: a call answered 200 lost its result record when a backend was terminated during its group
 * commit). Records given up after every retry are counted by kind on /metrics
 * (`toolgate_audit_records_failed_total`) and reported, never dropped in silence.
 * PostgreSQL only: SQLite's commit is in this process and never loses its answer.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { sql } from 'kysely';
import type { Store } from '../../src/records/store/index.js';
import { backends, freshStore } from '../support/backends.js';
import { auditRows } from '../support/store-rows.js';
import { inlineTool } from '../support/tools.js';
import { openWorld } from '../support/world.js';

const postgres = backends().find((b) => b.name === 'postgres');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A trap on the staging table, as a test's own DDL: while `staging_trap` holds a row whose mode
 * is `sleep`, an insert of a record matching its pattern waits there (so the test can terminate
 * that backend); with mode `fail`, it is refused.
 */
async function setTrap(store: Store): Promise<void> {
  await sql`create table staging_trap (mode text not null, pattern text not null)`.execute(
    store.db,
  );
  await sql
    .raw(`create function staging_trap() returns trigger language plpgsql as $$
    declare m text;
    begin
      select mode into m from staging_trap where new.record like pattern limit 1;
      if m = 'sleep' then perform pg_sleep(0.4); end if;
      if m = 'fail' then raise exception 'staging refused by the test'; end if;
      return new;
    end $$`)
    .execute(store.db);
  await sql`create trigger staging_trap before insert on audit_staged
    for each row execute function staging_trap()`.execute(store.db);
}

/** Terminates the first backend found sleeping in the trap; answers its pid. */
async function terminateSleeper(store: Store): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const r = await sql<{ pid: number }>`select pid from pg_stat_activity
      where wait_event = 'PgSleep' and query like '%audit_staged%' limit 1`.execute(store.db);
    const pid = r.rows[0]?.pid;
    if (pid !== undefined) {
      await sql`select pg_terminate_backend(${pid})`.execute(store.db);
      return pid;
    }
    await sleep(10);
  }
  assert.fail('no staging backend waited in the trap');
}

describe('staging retried after a dropped connection (PostgreSQL)', {
  skip: postgres ? false : 'TOOLGATE_TEST_PG_URL is not set',
}, () => {
  const closing: (() => Promise<void>)[] = [];
  after(async () => {
    for (const c of closing) await c();
  });

  test('a group whose backend is terminated mid-commit is staged again on another connection: in the chain once', async () => {
    assert.ok(postgres);
    const store = await freshStore(postgres);
    closing.push(() => store.close());
    await setTrap(store);
    // The benign neighbour: a slow commit that nobody interrupts simply lands.
    await sql`insert into staging_trap values ('sleep', '%call_slow_%')`.execute(store.db);
    await store.audit.commit(auditRows(2, 'slow'), [], false);
    // The attack: the connection drops while the group waits inside its insert.
    await sql`update staging_trap set pattern = '%call_cut_%'`.execute(store.db);
    const committing = store.audit.commit(auditRows(3, 'cut'), [], false);
    const killed = await terminateSleeper(store);
    assert.ok(killed > 0);
    await sql`delete from staging_trap`.execute(store.db);
    await committing;
    await store.audit.commit(auditRows(1, 'after'), [], false);
    await store.audit.integrate();
    const chain = await store.audit.page(0, 1000);
    assert.deepEqual(
      chain.map((r) => r.call_id),
      ['call_slow_0', 'call_slow_1', 'call_cut_0', 'call_cut_1', 'call_cut_2', 'call_after_0'],
      'every record once, in order, no alert',
    );
  });

  test('a record given up after every retry is counted by kind and reported; the next ones go on', async () => {
    assert.ok(postgres);
    const reported: string[] = [];
    const world = await openWorld({
      backend: postgres,
      tools: [
        inlineTool('retry_echo', { access_tier: 'public', required_capabilities: ['retry:use'] }),
      ],
      agents: [{ id: 'retry-bot', capabilities: ['retry:use'] }],
      inspector: true,
      options: {
        detectors: false,
        audit: { onError: (err) => reported.push((err as Error).message) },
      },
    });
    closing.push(() => world.close());
    const { tg, inspector: store } = world;
    assert.ok(store);
    await setTrap(store);
    const session = await tg.sessions.open('retry-bot');
    const ctx = { agentId: 'retry-bot', sessionId: session.id };
    // The benign neighbour: a call whose records stage normally.
    const first = await tg.gate.invoke(ctx, 'retry_echo', {});
    assert.equal(first.kind, 'allow', JSON.stringify(first));
    await tg.audit.writer.flush();
    // Every result record is refused from now on: the call runs, its result record is given up.
    await sql`insert into staging_trap values ('fail', '%"kind":"call.post"%')`.execute(store.db);
    const started = Date.now();
    const second = await tg.gate.invoke(ctx, 'retry_echo', {});
    assert.equal(second.kind, 'allow', JSON.stringify(second));
    const failed = async () => {
      const text = await tg.metrics.registry.metrics();
      return Number(
        text.match(/^toolgate_audit_records_failed_total\{kind="call\.post"\} (\d+)/m)?.[1] ?? 0,
      );
    };
    while ((await failed()) < 1 && Date.now() - started < 10_000) await sleep(50);
    assert.equal(await failed(), 1, 'the lost result record is counted');
    assert.ok(Date.now() - started >= 700, 'given up only after the retries (750 ms)');
    assert.ok(
      reported.some((m) => /1 audit record\(s\) could not be written \(call\.post\)/.test(m)),
      reported.join('\n'),
    );
    await sql`delete from staging_trap`.execute(store.db);
    const third = await tg.gate.invoke(ctx, 'retry_echo', {});
    assert.equal(third.kind, 'allow');
    await tg.audit.writer.flush();
    const ids = [first, second, third].map((d) => (d.kind === 'allow' ? d.callId : ''));
    const rows = await store.audit.page(0, 10_000);
    const kinds = (id: string) => rows.filter((r) => r.call_id === id).map((r) => r.kind);
    assert.deepEqual(kinds(ids[0] ?? ''), ['call.pre', 'call.post']);
    assert.deepEqual(
      kinds(ids[1] ?? ''),
      ['call.pre'],
      'the given-up record, and only it, is missing',
    );
    assert.deepEqual(kinds(ids[2] ?? ''), ['call.pre', 'call.post']);
  });
});
