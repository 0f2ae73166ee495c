/**
 * @module PostgreSQL's audit slot (the interface: ../audit-append.ts): sequence, then integrate
 * (docs/architecture.md §5, "The audit log across replicas"), as Trillian and Tessera do. A group
 * commit stages its records in `audit_staged` in one statement, with no lock that another replica
 * waits on: PostgreSQL syncs at commit, so a staged record is durable when the commit returns, and
 * the pre-record of a call is durable before its tool runs. The fleet's elected sequencer
 * (audit-sequencer.ts) then gives staged records their `seq` and links them into the chain
 * (audit-integrate.ts) within a bounded delay.
 *
 * Each slot stages as one writer stream: its records numbered 1, 2, 3… and each linked to the one
 * before (audit-chain/staged-hash.ts), one staging at a time, so the sequencer finds a staged
 * record removed, changed or repeated. A staging whose outcome is unknown (a failed commit may
 * still have committed) ends the stream; the next records start a new one, never linking onto a
 * record that may not exist.
 *
 * `appendIn` (an event's record, in the change's own transaction) integrates at once under the
 * chain lock, as before: an administrative change and its record commit together and in the
 * events' order, they are rare, and no call waits for that lock.
 */
import { randomBytes } from 'node:crypto';
import { CompiledQuery, type Kysely, sql } from 'kysely';
import { chainRows, STREAM_GENESIS, type StreamHead, stagedHash } from '../../audit-chain/index.js';
import {
  type AuditAppend,
  type AuditCommit,
  insertChained,
  type RawArgumentsRow,
  readHead,
  type UnchainedRow,
} from '../audit-append.js';
import type { AuditRow, Database } from '../database.js';
import { FLEET_CHANNELS } from '../fleet.js';
import { type Integrated, integrateStaged, lockChain } from './audit-integrate.js';
import { AuditSequencer, DEFAULT_MAX_DELAY_MS } from './audit-sequencer.js';
import { notify } from './fleet.js';

export { CHAIN_LOCK_KEY } from './audit-integrate.js';

/** Rows per staging statement (6 parameters each; raw arguments 6 each). */
const STAGE_CHUNK = 500;
/** A replica tells the sequencer it staged at most this often; the sequencer also looks itself. */
const NOTICE_GAP_MS = 25;
/** How often a barrier looks whether the records it waits for are in the chain. */
const SETTLE_LOOK_MS = 5;
/**
 * Attempts at staging one group before its callers are told it failed: a connection that drops
 * (a failover, a reset, a terminated backend) is retried on another, 50 ms after the first
 * failure, doubling (750 ms in all); a result record whose tool already ran is not given up for
 * a blip (attack round 30, F2).
 */
const STAGE_ATTEMPTS = 5;
const STAGE_RETRY_MS = 50;

const STAGED_COLUMNS = '(stream, rseq, prev_hash, hash, staged_at, record)';
const RAW_COLUMNS = '(call_id, at, agent_id, user_id, tool_id, args)';

interface Stream {
  readonly id: string;
  head: StreamHead;
}

const newStream = (): Stream => ({ id: randomBytes(16).toString('hex'), head: STREAM_GENESIS });

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `(…),(…)` of `rows` tuples of `width` numbered placeholders from `$first`. */
function tuples(rows: number, width: number, first: number): string {
  const out: string[] = [];
  let n = first;
  for (let r = 0; r < rows; r++) {
    const one: string[] = [];
    for (let c = 0; c < width; c++) one.push(`$${n++}`);
    out.push(`(${one.join(',')})`);
  }
  return out.join(',');
}

/**
 * One statement that stages `staged` (and inserts `raw` beside, in the same statement, so both
 * commit together in one round trip). `again`: a retry of a group that may have landed, whose
 * rows already there are left as they are.
 */
function stageQuery(
  staged: readonly unknown[][],
  raw: readonly RawArgumentsRow[],
  again = false,
): CompiledQuery {
  const parameters: unknown[] = [];
  let text = '';
  if (raw.length > 0) {
    text = `with raw as (insert into call_arguments ${RAW_COLUMNS} values ${tuples(raw.length, 6, 1)} on conflict (call_id) do nothing) `;
    for (const r of raw) parameters.push(r.call_id, r.at, r.agent_id, r.user_id, r.tool_id, r.args);
  }
  if (staged.length > 0) {
    text += `insert into audit_staged ${STAGED_COLUMNS} values ${tuples(staged.length, 6, parameters.length + 1)}`;
    if (again) text += ' on conflict (stream, rseq) do nothing';
    for (const s of staged) parameters.push(...s);
  } else {
    text += 'select 1';
  }
  return CompiledQuery.raw(text, parameters);
}

/** A group of records linked as the next of their stream: its rows and the stream's new head. */
interface StagedGroup {
  readonly staged: readonly unknown[][];
  readonly head: StreamHead;
}

function linkGroup(stream: Stream, rows: readonly UnchainedRow[]): StagedGroup {
  const stamp = new Date().toISOString();
  let head = stream.head;
  const staged: unknown[][] = [];
  for (const row of rows) {
    const record = JSON.stringify(row);
    const rseq = head.rseq + 1;
    const hash = stagedHash(stream.id, rseq, head.hash, record);
    staged.push([stream.id, rseq, head.hash, hash, stamp, record]);
    head = { rseq, hash };
  }
  return { staged, head };
}

/** Stages `group` (and `raw` beside it), committed together. */
async function writeGroup(
  db: Kysely<Database>,
  { staged }: StagedGroup,
  raw: readonly RawArgumentsRow[],
  again: boolean,
): Promise<void> {
  if (staged.length <= STAGE_CHUNK && raw.length <= STAGE_CHUNK) {
    await db.executeQuery(stageQuery(staged, raw, again));
    return;
  }
  await db.transaction().execute(async (trx) => {
    for (let i = 0; i < staged.length; i += STAGE_CHUNK)
      await trx.executeQuery(stageQuery(staged.slice(i, i + STAGE_CHUNK), [], again));
    for (let i = 0; i < raw.length; i += STAGE_CHUNK)
      await trx.executeQuery(stageQuery([], raw.slice(i, i + STAGE_CHUNK)));
  });
}

/**
 * Whether a group whose commit failed is in the database all the same (its answer lost with the
 * connection): its last record staged, or already integrated. A group commits whole or not at
 * all, so its last record answers for it.
 */
async function landed(db: Kysely<Database>, stream: string, last: number): Promise<boolean> {
  const r = await sql<{ landed: boolean }>`select
      exists (select 1 from audit_staged where stream = ${stream} and rseq = ${last})
      or exists (select 1 from audit_stream_heads where stream = ${stream} and rseq >= ${last})
      as landed`.execute(db);
  return r.rows[0]?.landed === true;
}

/**
 * Stages `rows` as the next records of `stream` (and `raw` beside them), committed together;
 * answers the stream's new head. The caller moves the head only once this resolves. A failed
 * attempt is retried with the same rows (same stream, numbers and links): one that landed before
 * its answer was lost is found and not staged twice, so a record is neither lost nor doubled.
 */
async function stageRecords(
  db: Kysely<Database>,
  stream: Stream,
  rows: readonly UnchainedRow[],
  raw: readonly RawArgumentsRow[],
): Promise<StreamHead> {
  const group = linkGroup(stream, rows);
  let failure: unknown;
  for (let attempt = 0; attempt < STAGE_ATTEMPTS; attempt++) {
    try {
      if (attempt > 0) {
        await sleep(STAGE_RETRY_MS * 2 ** (attempt - 1));
        if (rows.length > 0 && (await landed(db, stream.id, group.head.rseq))) return group.head;
      }
      await writeGroup(db, group, raw, attempt > 0);
      return group.head;
    } catch (err) {
      failure = err;
    }
  }
  throw failure;
}

/**
 * Resolves once every record staged before the call is in the chain: waits up to twice the bound
 * for the sequencer (woken here when it runs in this process), then integrates them itself (none
 * runs, or one is taking over).
 */
async function untilIntegrated(
  db: Kysely<Database>,
  maxDelayMs: number,
  sequencer: AuditSequencer | null,
  integrateAll: () => Promise<number>,
): Promise<void> {
  const newest = await sql<{
    id: string | number | null;
  }>`select max(id) as id from audit_staged`.execute(db);
  const last = newest.rows[0]?.id;
  if (last === null || last === undefined) return;
  sequencer?.wake();
  const until = Date.now() + 2 * maxDelayMs;
  while (Date.now() < until) {
    const left = await db
      .selectFrom('audit_staged')
      .select('id')
      .where('id', '<=', Number(last))
      .limit(1)
      .executeTakeFirst();
    if (!left) return;
    await sleep(SETTLE_LOOK_MS);
  }
  await integrateAll();
}

export function auditAppend(db: Kysely<Database>): AuditAppend {
  let stream = newStream();
  /** The stream's stagings, one after the other: each links onto the one before. */
  let staging: Promise<unknown> = Promise.resolve();
  let sequencer: AuditSequencer | null = null;
  let lastNotice = 0;

  const integrateOnce = (): Promise<Integrated> =>
    db.transaction().execute((trx) => integrateStaged(trx, () => new Date()));

  const integrateAll = async (): Promise<number> => {
    let total = 0;
    for (;;) {
      const done = await integrateOnce();
      total += done.count;
      if (!done.more) return total;
    }
  };

  /** Tells the sequencer records are waiting: its own process at once, others by notification. */
  const announce = () => {
    if (sequencer?.leading) {
      sequencer.wake();
      return;
    }
    const now = Date.now();
    if (now - lastNotice < NOTICE_GAP_MS) return;
    lastNotice = now;
    // Its own statement after the commit, never inside it: a NOTIFY in the staging transaction
    // would take PostgreSQL's notification queue lock until that commit is flushed, which is
    // one lock across replicas again.
    void notify(db, FLEET_CHANNELS.staged, '').catch(() => {});
  };

  const stageNow = async (rows: UnchainedRow[], raw: readonly RawArgumentsRow[]) => {
    const s = stream;
    try {
      s.head = await stageRecords(db, s, rows, raw);
    } catch (err) {
      // Not staged after every attempt, or nobody can tell: the next records open a new stream.
      if (stream === s) stream = newStream();
      throw err;
    }
    if (rows.length > 0) announce();
  };

  return {
    commit(rows: UnchainedRow[], raw: readonly RawArgumentsRow[]): Promise<AuditCommit> {
      const run = staging.then(() => stageNow(rows, raw));
      staging = run.catch(() => {});
      return run.then(() => ({ rows: [], durable: null }));
    },

    async appendIn(trx, rows) {
      if (rows.length === 0) return [];
      await lockChain(trx);
      const chained = chainRows(await readHead(trx), rows);
      await insertChained(trx, chained, 'numbered');
      return chained;
    },

    page(after: number, limit: number): Promise<AuditRow[]> {
      return db
        .selectFrom('audit_log')
        .selectAll()
        .where('seq', '>', after)
        .orderBy('seq', 'asc')
        .limit(limit)
        .execute();
    },

    integrate: integrateAll,

    settled: () =>
      untilIntegrated(db, sequencer?.maxDelayMs ?? DEFAULT_MAX_DELAY_MS, sequencer, integrateAll),

    sequence(fleet, options = {}) {
      const mine = new AuditSequencer(integrateOnce, options);
      sequencer = mine;
      mine.start(fleet, options.campaign === true);
      return async () => {
        await mine.stop();
        if (sequencer === mine) sequencer = null;
      };
    },

    release() {},
  };
}
