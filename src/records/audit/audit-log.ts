/**
 * @module The audit log service: the group-commit writer, the checkpointer (every N records, every
 * T seconds with new records, and on close), RFC 9162 proofs, verification of the database and
 * export bundles. The Merkle tree is kept in memory (leaf hashes and every complete subtree, ~64
 * bytes a record) and caught up from the database off the hot path — records appended by other
 * processes or replicas are read back in seq order — after recomputing each record's hash and
 * link, so a checkpoint never signs a record that does not match its hash.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import {
  type Clock,
  isStoreCorrupt,
  makeDirs,
  problem,
  systemClock,
  ToolgateError,
} from '../../core/index.js';
import { GENESIS_PREV_HASH, recordHash } from '../audit-chain/index.js';
import type { AuditCheckpointRow, Database, NewAuditRow, Store } from '../store/index.js';
import type { AuditPseudonyms } from './audit-pseudonyms.js';
import { type AuditRecord, AuditWriter } from './audit-writer.js';
import {
  type ChainRow,
  type CheckpointRow,
  LogVerifier,
  type VerifyReport,
} from './log-verifier.js';
import { MerkleFrontier, MerkleTree } from './merkle.js';
import {
  checkpointText,
  type NoteSigner,
  type NoteVerifier,
  openNote,
  parseVerifierKey,
} from './signed-note.js';
import {
  type AuditStore,
  type FeedSource,
  feedLog,
  type LogReport,
  logExtent,
  type VerifyOptions,
} from './verify-feed.js';

type FrontierJson = ReturnType<MerkleFrontier['toJSON']>;

export const DEFAULT_ORIGIN = 'toolgate.local/audit';
const PAGE = 5000;
/** Own leaf hashes kept for catch-up at most; past this they are dropped (and records re-hashed). */
const OWN_MAX = 200_000;
const CHECKPOINT_CACHE_MS = 1000;

export interface AuditLogOptions {
  /** Signs checkpoints (a function is called on first use); without one, none are written. */
  readonly signer?: NoteSigner | (() => NoteSigner) | null;
  readonly origin?: string;
  /** Checkpoint after this many new records (default 1000). */
  readonly checkpointEvery?: number;
  /** …or after this long with new records (default 10 s); 0 turns the timer off. */
  readonly checkpointIntervalMs?: number;
  /** Write checkpoints at all (off for read-only commands such as `audit verify`). */
  readonly checkpoints?: boolean;
  readonly clock?: Clock;
  /** Reports failures of background checkpoints (they never reach a caller). */
  readonly onError?: (err: unknown) => void;
  /** Keyed hashes of caller-supplied values (the writer's; default a per-process key). */
  readonly pseudonyms?: AuditPseudonyms;
  /** Told of records a failed commit gave up (AuditWriterOptions.onFailed); must not throw. */
  readonly onFailed?: (records: readonly AuditRecord[], err: unknown) => void;
}

export interface CheckpointView {
  readonly treeSize: number;
  readonly rootHash: string;
  readonly note: string;
  readonly at: string;
}

export interface InclusionProof {
  readonly seq: number;
  readonly leafIndex: number;
  readonly treeSize: number;
  readonly leafHash: string;
  readonly rootHash: string;
  readonly proof: string[];
}

export interface ConsistencyProof {
  readonly from: number;
  readonly to: number;
  readonly fromRoot: string;
  readonly toRoot: string;
  readonly proof: string[];
}

function badInput(pointer: string, message: string): ToolgateError<'INPUT_INVALID'> {
  return new ToolgateError('INPUT_INVALID', message, {
    problems: [problem(pointer, message, 'audit.range')],
  });
}

function view(row: AuditCheckpointRow): CheckpointView {
  return { treeSize: Number(row.tree_size), rootHash: row.root_hash, note: row.note, at: row.at };
}

export class AuditLog {
  readonly writer: AuditWriter;
  readonly origin: string;
  readonly #db: Kysely<Database>;
  readonly #signerSource: NoteSigner | (() => NoteSigner) | null;
  #signerLoaded: NoteSigner | null = null;
  readonly #every: number;
  readonly #clock: Clock;
  readonly #onError: (err: unknown) => void;
  readonly #tree = new MerkleTree();
  #treeHead = GENESIS_PREV_HASH;
  #frontier: MerkleFrontier | null = null;
  #recent: { at: number; size: number | undefined } | null = null;
  #frontierHead = GENESIS_PREV_HASH;
  #sinceCheckpoint = 0;
  #lastCheckpointSize = -1;
  /**
   * Leaf hashes this process computed for the records it wrote, by seq, until a checkpoint covers
   * them: catching up, a stored record whose hash is the one computed here is not hashed again.
   */
  readonly #own = new Map<number, { readonly hash: string; readonly prev: string }>();
  #timer: NodeJS.Timeout | null = null;
  /** Serialises catch-up and checkpoint writing. */
  #busy: Promise<unknown> = Promise.resolve();
  #checkpointScheduled = false;
  #closed = false;
  readonly #checkpoints: boolean;
  readonly #store: AuditStore;

  /** `store`: its `db` for checkpoints and catch-up, its audit slot for appends and verification. */
  constructor(store: AuditStore, options: AuditLogOptions = {}) {
    this.#store = store;
    this.#db = store.db;
    this.#signerSource = options.signer ?? null;
    this.origin = options.origin ?? DEFAULT_ORIGIN;
    this.#every = options.checkpointEvery ?? 1000;
    this.#clock = options.clock ?? systemClock;
    this.#onError = options.onError ?? (() => {});
    this.#checkpoints = options.checkpoints !== false && this.#signerSource !== null;
    this.writer = new AuditWriter(store, {
      onCommit: (rows, records) => this.#committed(rows, records),
      ...(options.pseudonyms ? { pseudonyms: options.pseudonyms } : {}),
      ...(options.onFailed ? { onFailed: options.onFailed } : {}),
    });
    const interval = options.checkpointIntervalMs ?? 10_000;
    if (this.#checkpoints && interval > 0) {
      this.#timer = setInterval(() => this.#schedule(), interval);
      this.#timer.unref();
    }
  }

  /** The signer, loaded (or created) on first use: commands that never sign never touch the key. */
  get #signer(): NoteSigner | null {
    if (this.#signerLoaded === null && this.#signerSource !== null) {
      this.#signerLoaded =
        typeof this.#signerSource === 'function' ? this.#signerSource() : this.#signerSource;
    }
    return this.#signerLoaded;
  }

  /** The trusted verifier key of this log's signer, `name+id+key`; null without a signer. */
  get verifierKey(): string | null {
    return this.#signer?.verifierKey ?? null;
  }

  #committed(rows: readonly NewAuditRow[], records: number): void {
    if (this.#checkpoints) {
      if (this.#own.size + rows.length > OWN_MAX) this.#own.clear();
      for (const row of rows)
        this.#own.set(Number(row.seq), { hash: row.hash, prev: row.prev_hash });
    }
    this.#sinceCheckpoint += records;
    if (this.#sinceCheckpoint >= this.#every) this.#schedule();
  }

  #schedule(): void {
    if (!this.#checkpoints || this.#checkpointScheduled || this.#closed) return;
    this.#checkpointScheduled = true;
    setImmediate(() => {
      this.#checkpointScheduled = false;
      this.checkpoint().catch(this.#onError);
    });
  }

  #exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#busy.then(fn, fn);
    this.#busy = run.catch(() => {});
    return run;
  }

  /**
   * Follows the log from record `size` (whose hash is `head`) to the tail, feeding each leaf to
   * `append`. Refuses when a record does not match its hash or its link: nothing is ever signed or
   * proven over such a record. Returns the new size and head.
   */
  async #follow(
    size: number,
    head: string,
    append: (leaf: Buffer) => void,
  ): Promise<{ size: number; head: string }> {
    // Records this gateway wrote, in an unbroken run from here, are taken as written without
    // reading them back: consecutive seqs were all chained by this process, each onto the one
    // before, and the first onto `head`. The database is read from the first record it did not
    // write (usually: nothing more).
    for (let mine = this.#own.get(size + 1); mine && mine.prev === head; ) {
      append(Buffer.from(mine.hash, 'hex'));
      size += 1;
      head = mine.hash;
      mine = this.#own.get(size + 1);
    }
    for (;;) {
      // Links first (three columns); whole records only for a page holding a record this process
      // did not write, or whose stored hash is not the one computed here: those are re-hashed.
      const links = await this.#db
        .selectFrom('audit_log')
        .select(['seq', 'prev_hash', 'hash'])
        .where('seq', '>', size)
        .orderBy('seq', 'asc')
        .limit(PAGE)
        .execute();
      const own = links.every((row) => this.#own.get(Number(row.seq))?.hash === row.hash);
      const rows = own
        ? links
        : await this.#db
            .selectFrom('audit_log')
            .selectAll()
            .where('seq', '>', size)
            .orderBy('seq', 'asc')
            .limit(PAGE)
            .execute();
      for (const row of rows) {
        const seq = Number(row.seq);
        if (
          seq !== size + 1 ||
          row.prev_hash !== head ||
          (this.#own.get(seq)?.hash !== row.hash && recordHash(row) !== row.hash)
        ) {
          throw new ToolgateError(
            'AUDIT_CHAIN_BROKEN',
            `audit record ${seq} does not chain; run toolgate audit verify`,
            { seq },
          );
        }
        append(Buffer.from(row.hash, 'hex'));
        size = seq;
        head = row.hash;
      }
      if (rows.length < PAGE) return { size, head };
    }
  }

  /** The full tree (for proofs and exports), built on first use and then kept up to date. */
  async #catchUp(): Promise<number> {
    const next = await this.#follow(this.#tree.size, this.#treeHead, (l) => this.#tree.append(l));
    this.#treeHead = next.head;
    return next.size;
  }

  /**
   * The frontier the checkpointer signs from. A fresh process resumes it from the latest checkpoint
   * it can verify with its own key (the frontier stored beside it must give the signed root), so a
   * CLI command that checkpoints on exit reads only the records after that checkpoint.
   */
  async #catchUpFrontier(): Promise<number> {
    if (!this.#frontier) {
      this.#frontier = new MerkleFrontier();
      this.#frontierHead = GENESIS_PREV_HASH;
      const last = await this.#db
        .selectFrom('audit_checkpoints')
        .selectAll()
        .where('frontier', 'is not', null)
        .orderBy('tree_size', 'desc')
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst();
      const key = this.verifierKey;
      if (last?.frontier && key && openNote(last.note, [parseVerifierKey(key)]).ok) {
        try {
          const f = MerkleFrontier.fromJSON(JSON.parse(last.frontier) as FrontierJson);
          const tail = await this.#db
            .selectFrom('audit_log')
            .selectAll()
            .where('seq', '=', f.size)
            .executeTakeFirst();
          if (
            f.size === Number(last.tree_size) &&
            f.root().toString('hex') === last.root_hash &&
            last.note.includes(`\n${f.size}\n${f.root().toString('base64')}\n`) &&
            tail &&
            recordHash(tail) === tail.hash
          ) {
            this.#frontier = f;
            this.#frontierHead = tail.hash;
          }
        } catch {
          // An unreadable frontier: rebuild from the first record instead.
        }
      }
    }
    const frontier = this.#frontier;
    const next = await this.#follow(frontier.size, this.#frontierHead, (l) => frontier.append(l));
    this.#frontierHead = next.head;
    // The signed frontier has these now; a later proof tree catch-up re-hashes what it reads.
    for (const seq of this.#own.keys()) {
      if (seq <= next.size) this.#own.delete(seq);
      else break;
    }
    return next.size;
  }

  /** Checkpoints the tail (staged records integrated first) if it grew; returns the latest. */
  async checkpoint(): Promise<CheckpointView | null> {
    await this.#store.audit.settled();
    return this.#exclusive(async () => {
      const signer = this.#signer;
      if (!signer) throw new ToolgateError('INTERNAL', 'this audit log has no signing key', {});
      const size = await this.#catchUpFrontier();
      if (this.#lastCheckpointSize < 0) {
        const last = await this.#latestRow();
        this.#lastCheckpointSize = last ? Number(last.tree_size) : 0;
      }
      if (size === 0 || size <= this.#lastCheckpointSize) {
        this.#sinceCheckpoint = 0;
        const last = await this.#latestRow();
        return last ? view(last) : null;
      }
      const frontier = this.#frontier as MerkleFrontier;
      const root = frontier.root();
      const note = signer.sign(checkpointText(this.origin, size, root));
      const row = {
        tree_size: size,
        root_hash: root.toString('hex'),
        note,
        at: this.#clock().toISOString(),
        frontier: JSON.stringify(frontier.toJSON()),
      };
      await this.#db.insertInto('audit_checkpoints').values(row).execute();
      this.#lastCheckpointSize = size;
      this.#recent = { at: Date.now(), size };
      this.#sinceCheckpoint = 0;
      return { treeSize: size, rootHash: row.root_hash, note, at: row.at };
    });
  }

  async #latestRow(): Promise<AuditCheckpointRow | undefined> {
    return this.#db
      .selectFrom('audit_checkpoints')
      .selectAll()
      .orderBy('tree_size', 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
  }

  /**
   * The latest checkpoint's size, re-read at most every CHECKPOINT_CACHE_MS: a proof against a
   * slightly older signed head is as good, and the hot proof path then stays in memory.
   */
  async #recentCheckpointSize(): Promise<number | undefined> {
    const now = Date.now();
    if (!this.#recent || now - this.#recent.at > CHECKPOINT_CACHE_MS) {
      this.#recent = { at: now, size: (await this.latestCheckpoint())?.treeSize };
    }
    return this.#recent.size;
  }

  async latestCheckpoint(): Promise<CheckpointView | null> {
    const row = await this.#latestRow();
    return row ? view(row) : null;
  }

  /** The seq of the record with this leaf hash, found in the tree kept in memory (caught up). */
  async #seqOf(hash: string): Promise<number> {
    if (!/^[0-9a-f]{64}$/.test(hash)) throw badInput('/hash', 'hash is 64 lowercase hex digits');
    const leaf = Buffer.from(hash, 'hex');
    let index = this.#tree.indexOf(leaf);
    if (index < 0) {
      await this.#exclusive(() => this.#catchUp());
      index = this.#tree.indexOf(leaf);
    }
    if (index < 0)
      throw new ToolgateError('AUDIT_RECORD_NOT_FOUND', 'no audit record has this hash', { hash });
    return index + 1;
  }

  /**
   * Tree size a proof is asked against: a given one, else the latest checkpoint's. The database is
   * read for new records only when the tree in memory is smaller than that size.
   */
  async #size(size: number | undefined): Promise<number> {
    const wanted = size ?? (await this.#recentCheckpointSize());
    const tail =
      wanted !== undefined && wanted <= this.#tree.size
        ? this.#tree.size
        : await this.#exclusive(() => this.#catchUp());
    if (wanted === undefined) return tail;
    if (!Number.isInteger(wanted) || wanted < 1 || wanted > tail) {
      throw badInput('/size', `size must be within 1..${tail}`);
    }
    return wanted;
  }

  async inclusionProof(
    leaf: { seq?: number; hash?: string },
    size?: number,
  ): Promise<InclusionProof> {
    const seq = leaf.hash !== undefined ? await this.#seqOf(leaf.hash) : leaf.seq;
    if (seq === undefined || !Number.isInteger(seq) || seq < 1)
      throw badInput('/seq', 'seq must be a positive integer');
    const treeSize = await this.#size(size);
    if (seq > treeSize) {
      if (seq > (await this.#exclusive(() => this.#catchUp())))
        throw new ToolgateError('AUDIT_RECORD_NOT_FOUND', `no audit record ${seq}`, { seq });
      throw badInput('/seq', `record ${seq} is not in the tree of size ${treeSize}`);
    }
    return {
      seq,
      leafIndex: seq - 1,
      treeSize,
      leafHash: this.#tree.leaf(seq - 1).toString('hex'),
      rootHash: this.#tree.root(treeSize).toString('hex'),
      proof: this.#tree.inclusionProof(seq - 1, treeSize).map((h) => h.toString('hex')),
    };
  }

  async consistencyProof(from: number, to?: number): Promise<ConsistencyProof> {
    const second = await this.#size(to);
    if (!Number.isInteger(from) || from < 1 || from > second) {
      throw badInput('/from', `from must be within 1..${second}`);
    }
    return {
      from,
      to: second,
      fromRoot: this.#tree.root(from).toString('hex'),
      toRoot: this.#tree.root(second).toString('hex'),
      proof: this.#tree.consistencyProof(from, second).map((h) => h.toString('hex')),
    };
  }

  /** Verifiers trusted for this log: the given keys, else this log's own signer. */
  #verifiers(keys: readonly string[] | undefined): NoteVerifier[] {
    const texts = keys && keys.length > 0 ? keys : this.verifierKey ? [this.verifierKey] : [];
    return texts.map((k) => parseVerifierKey(k));
  }

  /** Recomputes the whole chain, tree and every checkpoint from the database. */
  async verify(options: VerifyOptions = {}): Promise<LogReport> {
    await this.#store.audit.settled(); // every replica's records, staged ones too (§5)
    const verifiers = this.#verifiers(options.keys);
    let checkpoints: CheckpointRow[];
    try {
      checkpoints = (await this.#db
        .selectFrom('audit_checkpoints')
        .selectAll()
        .orderBy('id', 'asc')
        .execute()) as CheckpointRow[];
    } catch (err) {
      if (!isStoreCorrupt(err)) throw err;
      // Without the checkpoints the chain can still be checked; the damage is the finding.
      const verifier = new LogVerifier({ verifiers, origin: this.origin }, []);
      verifier.storeCorrupt(`audit_checkpoints: ${corruptReason(err)}`);
      return { ...verifier.finish(), checkedInParallel: 0 };
    }
    const verifier = new LogVerifier({ verifiers, origin: this.origin }, checkpoints);
    const { parallel } = await feedLog(verifier, this.#feedSource(), options);
    return { ...verifier.finish(), checkedInParallel: parallel };
  }

  /** Where verify reads the log: the audit slot's pages, and the store's range check. */
  #feedSource(): FeedSource {
    return {
      page: (after, limit) => this.#page(after, limit),
      ranges: this.#store.ranges ?? null,
      extent: () => logExtent(this.#db),
      corruptReason,
    };
  }

  /** PAGE records after seq `after`, in seq order, whole (the store's slot reads them). */
  async #page(after: number, limit: number = PAGE): Promise<ChainRow[]> {
    return (await this.#store.audit.page(after, limit)) as unknown as ChainRow[];
  }

  /**
   * Writes records from..to as a bundle another machine can check with no database: records.jsonl,
   * checkpoints.jsonl (those at or after from-1 up to the first that covers `to`), context.json
   * (the tree before `from` and the leaf hashes after `to` up to that checkpoint) and
   * public-key.vkey. A checkpoint of the current tail is written first when a signer is present.
   */
  async exportBundle(
    dir: string,
    range: { from?: number; to?: number } = {},
  ): Promise<{ records: number; from: number; to: number; checkpoint: number }> {
    // An empty name would write into the working folder; an existing bundle would be overwritten
    // file by file, leaving a mix of two exports that verifies as neither.
    if (dir.trim() === '') throw badInput('/out', 'name the folder to export the bundle to');
    for (const name of ['context.json', 'records.jsonl', 'checkpoints.jsonl'])
      if (existsSync(join(dir, name)))
        throw badInput(
          '/out',
          `${dir} already holds an audit bundle (${name}): choose a new folder`,
        );
    await this.#store.audit.settled();
    if (this.#checkpoints) await this.checkpoint();
    const tail = await this.#exclusive(() => this.#catchUp());
    const from = range.from ?? 1;
    const to = range.to ?? tail;
    if (!Number.isInteger(from) || from < 1)
      throw badInput('/from', 'from must be a positive integer');
    if (!Number.isInteger(to) || to < from || to > tail)
      throw badInput('/to', `to must be within ${from}..${tail}`);
    const all = (await this.#db
      .selectFrom('audit_checkpoints')
      .selectAll()
      .where('tree_size', '>=', from - 1)
      .orderBy('tree_size', 'asc')
      .orderBy('id', 'asc')
      .execute()) as AuditCheckpointRow[];
    const cover = all.find((c) => Number(c.tree_size) >= to);
    if (!cover) throw badInput('/to', `no checkpoint covers record ${to} yet`);
    const coverSize = Number(cover.tree_size);
    const checkpoints = all.filter((c) => Number(c.tree_size) <= coverSize);
    makeDirs(dir);
    const lines: string[] = [];
    let after = from - 1;
    while (after < to) {
      const rows = await this.#db
        .selectFrom('audit_log')
        .selectAll()
        .where('seq', '>', after)
        .where('seq', '<=', to)
        .orderBy('seq', 'asc')
        .limit(PAGE)
        .execute();
      if (rows.length === 0) break;
      for (const row of rows) lines.push(JSON.stringify(row));
      after = Number(rows[rows.length - 1]?.seq);
    }
    writeFileSync(join(dir, 'records.jsonl'), lines.length > 0 ? `${lines.join('\n')}\n` : '');
    writeFileSync(
      join(dir, 'checkpoints.jsonl'),
      checkpoints
        .map(
          (c) =>
            `${JSON.stringify({ tree_size: Number(c.tree_size), root_hash: c.root_hash, note: c.note, at: c.at })}\n`,
        )
        .join(''),
    );
    const tailLeaves: string[] = [];
    for (let i = to; i < coverSize; i++) tailLeaves.push(this.#tree.leaf(i).toString('hex'));
    writeFileSync(
      join(dir, 'context.json'),
      `${JSON.stringify(
        {
          format: 'toolgate-audit-bundle/1',
          origin: this.origin,
          from,
          to,
          start: {
            prev_hash: from === 1 ? GENESIS_PREV_HASH : this.#tree.leaf(from - 2).toString('hex'),
            frontier: this.#tree.frontier(from - 1).toJSON(),
          },
          tail_leaves: tailLeaves,
        },
        null,
        2,
      )}\n`,
    );
    if (this.verifierKey) writeFileSync(join(dir, 'public-key.vkey'), `${this.verifierKey}\n`);
    return { records: lines.length, from, to, checkpoint: coverSize };
  }

  /** Flushes the writer and, with a signer, writes a checkpoint of the tail (shutdown). */
  async close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.writer.close();
    if (this.#checkpoints) {
      try {
        await this.checkpoint();
      } catch (err) {
        this.#onError(err);
      }
    }
    this.#closed = true;
  }
}

/** What the driver said about the damage, without a stack: "SQLITE_CORRUPT: database disk…". */
function corruptReason(err: unknown): string {
  const { code, message } = err as { code?: unknown; message?: unknown };
  return `${typeof code === 'string' ? `${code}: ` : ''}${typeof message === 'string' ? message : 'unreadable'}`;
}
