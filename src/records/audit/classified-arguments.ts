/**
 * @module The classified store: the raw arguments of calls, kept apart from the chained audit log
 * (which holds keyed hashes of them only, audit-pseudonyms.ts) so that they can be forgotten.
 * Only admins and auditors reach it, and every read and search is itself an audit record (an
 * event naming the operator, never the values); rows older than the retention period are swept,
 * and an erasure removes every row of a user, of a call, or carrying a value (an e-mail address,
 * an IBAN) — recorded without the erased value. Nothing here touches the chain, so
 * `toolgate audit verify` passes before and after. docs/security-model.md, "Personal data and the
 * audit log".
 */
import { type SqlBool, sql } from 'kysely';
import {
  type Actor,
  type Clock,
  problem,
  systemActor,
  systemClock,
  ToolgateError,
} from '../../core/index.js';
import { appendEvent, type Store } from '../store/index.js';
import type { AuditPseudonyms } from './audit-pseudonyms.js';

/** How long raw arguments are kept when nothing else is configured. */
export const DEFAULT_CLASSIFIED_RETENTION_DAYS = 30;
/**
 * Fewest non-space characters a value an erasure or search takes: a shorter one (or one of
 * blanks, which matches any indented code) would match nearly anything.
 */
export const MIN_VALUE_LENGTH = 4;
/** Rows read per batch while looking for a value. */
const BATCH = 500;
/** Most rows one search answers; more are counted and said to be left out. */
const MAX_SEARCH_RESULTS = 200;
/** Most call ids an erasure's audit record names (it always gives the count). */
const MAX_NAMED_CALLS = 100;

export interface ClassifiedRecord {
  readonly call_id: string;
  readonly at: string;
  readonly agent_id: string | null;
  readonly user_id: string | null;
  readonly tool_id: string | null;
  /** The arguments as the agent sent them. */
  readonly args: unknown;
  /** The same arguments as the audit log's copy shows them (keyed hashes), to match records. */
  readonly masked: unknown;
}

/** What to find or erase: every row carrying a value, every row of a user, or one call's row. */
export type ClassifiedSelector =
  | { readonly value: string }
  | { readonly user: string }
  | { readonly call_id: string };

export interface ClassifiedSearch {
  /** For a search by value: its keyed hash, as records of the audit log show it. */
  readonly token: string | null;
  readonly items: ClassifiedRecord[];
  /** Matching rows left out of `items` (past MAX_SEARCH_RESULTS). */
  readonly omitted: number;
}

export interface ClassifiedOptions {
  /** Days raw arguments are kept (default DEFAULT_CLASSIFIED_RETENTION_DAYS). */
  readonly retentionDays?: number;
  readonly clock?: Clock;
  /**
   * The property names a tool's input schema declares (every version it has), so that the masked
   * copy keeps the keys the log kept; without it, or for a call with no tool, every key is hashed.
   */
  readonly declaredKeys?: (toolId: string) => Promise<ReadonlySet<string> | null>;
}

interface Row {
  call_id: string;
  at: string;
  agent_id: string | null;
  user_id: string | null;
  tool_id: string | null;
  args: string;
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** ASCII letters folded only: the same folding SQL's lower() gives every dialect's ASCII. */
function fold(text: string): string {
  return text.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/** Whether any string or key of `value` contains `needle` (folded), or a number spells it. */
function carries(value: unknown, needle: string, depth = 0): boolean {
  if (depth > 64) return false;
  if (typeof value === 'string') return fold(value).includes(needle);
  if (typeof value === 'number') return String(value) === needle;
  if (Array.isArray(value)) return value.some((v) => carries(v, needle, depth + 1));
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).some(
      ([k, v]) => fold(k).includes(needle) || carries(v, needle, depth + 1),
    );
  }
  return false;
}

function invalid(pointer: string, message: string): ToolgateError<'INPUT_INVALID'> {
  return new ToolgateError('INPUT_INVALID', message, {
    problems: [problem(pointer, message, 'classified.selector')],
  });
}

/**
 * Exactly one of value, user, call_id, each a string not blank after trimming; a value with at
 * least MIN_VALUE_LENGTH characters other than white space.
 */
export function checkSelector(selector: Partial<Record<string, unknown>>): ClassifiedSelector {
  const given = (['value', 'user', 'call_id'] as const).filter((k) => selector[k] !== undefined);
  if (given.length !== 1) {
    throw invalid('/', 'name exactly one of value, user or call_id');
  }
  const key = given[0] as 'value' | 'user' | 'call_id';
  const v = selector[key];
  if (typeof v !== 'string' || v.trim().length === 0) {
    throw invalid(`/${key}`, `${key} must be a string that is not blank`);
  }
  if (key === 'value' && [...v.replace(/\s/gu, '')].length < MIN_VALUE_LENGTH) {
    throw invalid(
      '/value',
      `a value must have at least ${MIN_VALUE_LENGTH} characters other than white space`,
    );
  }
  return key === 'value' ? { value: v } : key === 'user' ? { user: v } : { call_id: v };
}

export class ClassifiedArguments {
  readonly #store: Pick<Store, 'db'>;
  readonly #pseudonyms: AuditPseudonyms;
  readonly #clock: Clock;
  readonly #declaredKeys: ClassifiedOptions['declaredKeys'];
  readonly retentionDays: number;

  constructor(store: Pick<Store, 'db'>, pseudonyms: AuditPseudonyms, options: ClassifiedOptions) {
    const days = options.retentionDays ?? DEFAULT_CLASSIFIED_RETENTION_DAYS;
    if (!Number.isSafeInteger(days) || days < 1) {
      throw new TypeError('the classified store retention must be a whole number of days, ≥ 1');
    }
    this.#store = store;
    this.#pseudonyms = pseudonyms;
    this.#clock = options.clock ?? systemClock;
    this.#declaredKeys = options.declaredKeys;
    this.retentionDays = days;
  }

  async #record(row: Row): Promise<ClassifiedRecord> {
    const args = parsed(row.args);
    const declared =
      row.tool_id !== null && this.#declaredKeys
        ? await this.#declaredKeys(row.tool_id).catch(() => null)
        : null;
    return {
      call_id: row.call_id,
      at: row.at,
      agent_id: row.agent_id,
      user_id: row.user_id,
      tool_id: row.tool_id,
      args,
      masked: this.#pseudonyms.maskArguments(args, declared),
    };
  }

  /** The keyed hash the audit log shows for `value` (a string as an argument carried it). */
  tokenOf(value: string): string {
    return this.#pseudonyms.token(value);
  }

  /** One call's raw arguments; the read is recorded (who, which call) before anything is shown. */
  async read(callId: string, actor: Actor): Promise<ClassifiedRecord> {
    const row = await this.#store.db
      .selectFrom('call_arguments')
      .selectAll()
      .where('call_id', '=', callId)
      .executeTakeFirst();
    if (!row) {
      throw new ToolgateError('NOT_FOUND', `no raw arguments kept for call ${callId}`, {});
    }
    await appendEvent(this.#store.db, actor, this.#clock(), {
      action: 'audit.classified_read',
      subject: `call:${callId}`,
      details: {},
    });
    return this.#record(row);
  }

  /** The rows a selector names, oldest first, at most `limit` (all when undefined). */
  async #matching(selector: ClassifiedSelector, limit?: number): Promise<Row[]> {
    const db = this.#store.db;
    if ('call_id' in selector) {
      return db
        .selectFrom('call_arguments')
        .selectAll()
        .where('call_id', '=', selector.call_id)
        .execute();
    }
    if ('user' in selector) {
      let q = db
        .selectFrom('call_arguments')
        .selectAll()
        .where('user_id', '=', selector.user)
        .orderBy('at', 'asc')
        .orderBy('call_id', 'asc');
      if (limit !== undefined) q = q.limit(limit);
      return q.execute();
    }
    const needle = fold(selector.value);
    // A prefilter in SQL for ASCII values (lower() folds ASCII alike in both dialects; the JSON
    // text holds a string as its escaped form, character by character); the check is in code.
    const ascii = /^[\x20-\x7e]*$/.test(selector.value);
    const escaped = JSON.stringify(needle).slice(1, -1);
    const pattern = `%${escaped.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const out: Row[] = [];
    let after = '';
    for (;;) {
      let q = db
        .selectFrom('call_arguments')
        .selectAll()
        .where('call_id', '>', after)
        .orderBy('call_id', 'asc')
        .limit(BATCH);
      if (ascii) q = q.where(sql<SqlBool>`lower(args) like ${pattern} escape '\\'`);
      const rows = await q.execute();
      for (const row of rows) {
        if (carries(parsed(row.args), needle)) out.push(row);
        if (limit !== undefined && out.length >= limit) return out;
      }
      const last = rows.at(-1);
      if (rows.length < BATCH || !last) return out;
      after = last.call_id;
    }
  }

  /**
   * The rows carrying a value (or of a user), each with its masked copy; for a value, also its
   * keyed hash, to search the audit log with. Recorded as who searched and how many matched —
   * never the value.
   */
  async search(given: ClassifiedSelector, actor: Actor): Promise<ClassifiedSearch> {
    // Checked here too, not only by the fronts: the library's admin API reaches this directly.
    const selector = checkSelector(given);
    const rows = await this.#matching(selector, MAX_SEARCH_RESULTS + 1);
    const all =
      rows.length > MAX_SEARCH_RESULTS ? (await this.#matching(selector)).length : rows.length;
    await appendEvent(this.#store.db, actor, this.#clock(), {
      action: 'audit.classified_searched',
      subject: 'audit:classified',
      details: { by: Object.keys(selector)[0], matches: all },
    });
    return {
      token: 'value' in selector ? this.tokenOf(selector.value) : null,
      items: await Promise.all(rows.slice(0, MAX_SEARCH_RESULTS).map((r) => this.#record(r))),
      omitted: all - Math.min(all, MAX_SEARCH_RESULTS),
    };
  }

  /**
   * Removes every row the selector names, with an audit record of who erased how many rows of
   * which calls (the call ids are the log's own; the erased value is not written anywhere).
   */
  async erase(given: ClassifiedSelector, actor: Actor): Promise<{ erased: number }> {
    const selector = checkSelector(given);
    const ids = [...new Set((await this.#matching(selector)).map((r) => r.call_id))];
    const now = this.#clock();
    await this.#store.db.transaction().execute(async (trx) => {
      for (let i = 0; i < ids.length; i += BATCH) {
        await trx
          .deleteFrom('call_arguments')
          .where('call_id', 'in', ids.slice(i, i + BATCH))
          .execute();
      }
      await appendEvent(trx, actor, now, {
        action: 'audit.classified_erased',
        subject: 'audit:classified',
        details: {
          by: Object.keys(selector)[0],
          erased: ids.length,
          call_ids: ids.slice(0, MAX_NAMED_CALLS),
          ...(ids.length > MAX_NAMED_CALLS
            ? { call_ids_omitted: ids.length - MAX_NAMED_CALLS }
            : {}),
        },
      });
    });
    return { erased: ids.length };
  }

  /** Removes rows older than the retention period; recorded when it removed any. */
  async sweep(): Promise<number> {
    const now = this.#clock();
    const before = new Date(now.getTime() - this.retentionDays * 86_400_000).toISOString();
    return this.#store.db.transaction().execute(async (trx) => {
      const done = await trx
        .deleteFrom('call_arguments')
        .where('at', '<', before)
        .executeTakeFirst();
      const removed = Number(done.numDeletedRows);
      if (removed > 0) {
        await appendEvent(trx, systemActor('retention'), now, {
          action: 'audit.classified_swept',
          subject: 'audit:classified',
          details: { removed, before, retention_days: this.retentionDays },
        });
      }
      return removed;
    });
  }
}
