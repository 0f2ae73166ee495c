/**
 * @module The secrets store (C11): one secret per tool × name × environment, sealed
 * with AES-256-GCM, versioned by rotation. Admin operations (set, rotate, delete, list) never
 * return a value; only the credential broker opens one, after the gate passed. Each change is
 * an event without the value.
 */
import type { Kysely, Transaction } from 'kysely';
import {
  type Actor,
  type Clock,
  type Problem,
  problem,
  systemClock,
  TOOL_ID_PATTERN,
  ToolgateError,
} from '../../core/index.js';
import {
  appendEvent,
  type Database,
  isUniqueViolation,
  type SecretRow,
} from '../../records/store/index.js';
import type { MasterKey } from './master-key.js';
import { openSecret, sealSecret } from './secret-cipher.js';

export const DEFAULT_ENVIRONMENT = 'default';
export const SECRET_NAME_PATTERN = '^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,99}$';
export const ENVIRONMENT_PATTERN = '^[a-z0-9][a-z0-9_-]{0,39}$';
/** Shorter values cannot be scrubbed from output without mangling ordinary text. */
export const MIN_SECRET_CHARS = 8;
export const MAX_SECRET_BYTES = 65_536;

/** Which secret: the tool it belongs to, its name, and the environment. */
export interface SecretAddress {
  readonly toolId: string;
  readonly name: string;
  /** Default `default`. */
  readonly environment?: string;
}

/** What an admin may see of a secret: everything but the value. */
export interface SecretInfo {
  readonly tool_id: string;
  readonly name: string;
  readonly environment: string;
  readonly version: number;
  readonly key_id: string;
  readonly created_at: string;
  readonly created_by: string;
  readonly rotated_at: string | null;
  readonly rotated_by: string | null;
}

/** The admin surface fronts get: no operation here returns a value. */
export interface SecretAdmin {
  set(address: SecretAddress, value: string, actor: Actor): Promise<SecretInfo>;
  rotate(address: SecretAddress, value: string, actor: Actor): Promise<SecretInfo>;
  delete(address: SecretAddress, actor: Actor): Promise<SecretInfo>;
  list(filter?: { toolId?: string; environment?: string }): Promise<SecretInfo[]>;
}

const toolIdRe = new RegExp(TOOL_ID_PATTERN);
const nameRe = new RegExp(SECRET_NAME_PATTERN);
const environmentRe = new RegExp(ENVIRONMENT_PATTERN);

interface Resolved {
  readonly toolId: string;
  readonly name: string;
  readonly environment: string;
}

function refuse(problems: Problem[]): never {
  throw new ToolgateError(
    'INPUT_INVALID',
    `secret refused: ${problems.map((p) => p.message).join('; ')}`,
    { problems },
  );
}

function resolve(address: SecretAddress): Resolved {
  const environment = address.environment ?? DEFAULT_ENVIRONMENT;
  const problems: Problem[] = [];
  if (!toolIdRe.test(address.toolId)) {
    problems.push(problem('/tool', `tool must be a tool id (${TOOL_ID_PATTERN})`, 'secret.tool'));
  }
  if (!nameRe.test(address.name)) {
    problems.push(
      problem(
        '/name',
        `name must match ${SECRET_NAME_PATTERN} (as in credentials.secret)`,
        'secret.name',
      ),
    );
  }
  if (!environmentRe.test(environment)) {
    problems.push(
      problem(
        '/environment',
        `environment must match ${ENVIRONMENT_PATTERN}`,
        'secret.environment',
      ),
    );
  }
  if (problems.length > 0) refuse(problems);
  return { toolId: address.toolId, name: address.name, environment };
}

/** Checks a value without ever putting it (or a piece of it) into the message. */
function checkValue(value: unknown): string {
  if (typeof value !== 'string') refuse([problem('/value', 'value must be text', 'secret.value')]);
  const problems: Problem[] = [];
  if ([...value].length < MIN_SECRET_CHARS) {
    problems.push(
      problem(
        '/value',
        `value must be at least ${MIN_SECRET_CHARS} characters (shorter values cannot be redacted from output reliably)`,
        'secret.value.short',
      ),
    );
  }
  if (Buffer.byteLength(value, 'utf8') > MAX_SECRET_BYTES) {
    problems.push(
      problem('/value', `value must be at most ${MAX_SECRET_BYTES} bytes`, 'secret.value.long'),
    );
  }
  if (value.includes('\0')) {
    problems.push(
      problem(
        '/value',
        'value must not contain NUL (it could not be injected)',
        'secret.value.nul',
      ),
    );
  }
  if (Buffer.from(value, 'utf8').toString('utf8') !== value) {
    problems.push(problem('/value', 'value must be well-formed Unicode', 'secret.value.unicode'));
  }
  if (problems.length > 0) refuse(problems);
  return value;
}

/**
 * Refuses to seal under a key other than the one the stored secrets use: a gateway started with
 * the wrong key (another data folder, a stale variable) must not quietly mix keys in one store.
 */
async function sameKeyAsStore(trx: Transaction<Database>, key: MasterKey): Promise<void> {
  const other = await trx
    .selectFrom('secrets')
    .select('key_id')
    .where('key_id', '!=', key.keyId)
    .limit(1)
    .executeTakeFirst();
  if (other) {
    throw new ToolgateError(
      'MASTER_KEY_INVALID',
      `the stored secrets are sealed with master key ${other.key_id}, but the master key loaded is ${key.keyId}: start toolgate with the key the secrets were set with`,
      { reason: 'wrong_key', keyId: key.keyId, expectedKeyId: other.key_id },
    );
  }
}

function info(row: SecretRow): SecretInfo {
  return {
    tool_id: row.tool_id,
    name: row.name,
    environment: row.environment,
    version: Number(row.version),
    key_id: row.key_id,
    created_at: row.created_at,
    created_by: row.created_by,
    rotated_at: row.rotated_at,
    rotated_by: row.rotated_by,
  };
}

function subject(r: Resolved): string {
  return `secret:${r.toolId}/${r.name}@${r.environment}`;
}

function notFound(r: Resolved): ToolgateError<'SECRET_NOT_FOUND'> {
  return new ToolgateError(
    'SECRET_NOT_FOUND',
    `no secret ${r.name} for tool ${r.toolId} in environment ${r.environment}`,
    { toolId: r.toolId, name: r.name, environment: r.environment },
  );
}

export class SecretsService implements SecretAdmin {
  readonly #db: Kysely<Database>;
  readonly #loadKey: () => MasterKey;
  readonly #clock: Clock;
  #key: MasterKey | null = null;

  /** The master key is loaded on first use, so commands that never touch secrets never need it. */
  constructor(db: Kysely<Database>, masterKey: MasterKey | (() => MasterKey), clock?: Clock) {
    this.#db = db;
    this.#loadKey = typeof masterKey === 'function' ? masterKey : () => masterKey;
    this.#clock = clock ?? systemClock;
  }

  #masterKey(): MasterKey {
    this.#key ??= this.#loadKey();
    return this.#key;
  }

  async set(address: SecretAddress, value: string, actor: Actor): Promise<SecretInfo> {
    const r = resolve(address);
    const plain = checkValue(value);
    const key = this.#masterKey();
    const sealed = sealSecret(key, { ...r, version: 1 }, plain);
    const now = this.#clock().toISOString();
    try {
      return await this.#db.transaction().execute(async (trx) => {
        await sameKeyAsStore(trx, key);
        const row = await trx
          .insertInto('secrets')
          .values({
            tool_id: r.toolId,
            name: r.name,
            environment: r.environment,
            version: 1,
            key_id: sealed.keyId,
            nonce: sealed.nonce,
            ciphertext: sealed.ciphertext,
            tag: sealed.tag,
            created_at: now,
            created_by: actor.id,
            rotated_at: null,
            rotated_by: null,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        await appendEvent(trx, actor, new Date(now), {
          action: 'secret.set',
          subject: subject(r),
          details: {
            tool_id: r.toolId,
            name: r.name,
            environment: r.environment,
            version: 1,
            key_id: sealed.keyId,
          },
        });
        return info(row);
      });
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      const existing = await this.#row(r);
      throw new ToolgateError(
        'SECRET_EXISTS',
        `secret ${r.name} of tool ${r.toolId} (${r.environment}) exists at version ${existing?.version ?? '?'}: use \`secrets rotate\` to change its value`,
        {
          toolId: r.toolId,
          name: r.name,
          environment: r.environment,
          version: Number(existing?.version ?? 0),
        },
      );
    }
  }

  /** Seals the new value as the next version; the previous ciphertext is overwritten, not kept. */
  async rotate(address: SecretAddress, value: string, actor: Actor): Promise<SecretInfo> {
    const r = resolve(address);
    const plain = checkValue(value);
    const key = this.#masterKey();
    const now = this.#clock().toISOString();
    // A concurrent rotation makes the guarded update match nothing; read again and retry.
    for (let attempt = 0; attempt < 5; attempt++) {
      const done = await this.#rotateOnce(r, plain, key, now, actor);
      if (done) return done;
    }
    throw new ToolgateError(
      'SECRET_EXISTS',
      `secret ${r.name} of tool ${r.toolId} (${r.environment}) is being rotated concurrently; try again`,
      { toolId: r.toolId, name: r.name, environment: r.environment, version: 0 },
    );
  }

  /** One attempt; null when another rotation won the race. */
  async #rotateOnce(
    r: Resolved,
    plain: string,
    key: MasterKey,
    now: string,
    actor: Actor,
  ): Promise<SecretInfo | null> {
    return this.#db.transaction().execute(async (trx) => {
      const current = await trx
        .selectFrom('secrets')
        .select('version')
        .where('tool_id', '=', r.toolId)
        .where('name', '=', r.name)
        .where('environment', '=', r.environment)
        .executeTakeFirst();
      if (!current) throw notFound(r);
      await sameKeyAsStore(trx, key);
      const version = Number(current.version) + 1;
      const sealed = sealSecret(key, { ...r, version }, plain);
      // `version = previous`: of two concurrent rotations one wins, the other retries.
      const row = await trx
        .updateTable('secrets')
        .set({
          version,
          key_id: sealed.keyId,
          nonce: sealed.nonce,
          ciphertext: sealed.ciphertext,
          tag: sealed.tag,
          rotated_at: now,
          rotated_by: actor.id,
        })
        .where('tool_id', '=', r.toolId)
        .where('name', '=', r.name)
        .where('environment', '=', r.environment)
        .where('version', '=', version - 1)
        .returningAll()
        .executeTakeFirst();
      if (!row) return null;
      await appendEvent(trx, actor, new Date(now), {
        action: 'secret.rotate',
        subject: subject(r),
        details: {
          tool_id: r.toolId,
          name: r.name,
          environment: r.environment,
          version,
          key_id: sealed.keyId,
        },
      });
      return info(row);
    });
  }

  async delete(address: SecretAddress, actor: Actor): Promise<SecretInfo> {
    const r = resolve(address);
    const now = this.#clock();
    return this.#db.transaction().execute(async (trx) => {
      const row = await trx
        .deleteFrom('secrets')
        .where('tool_id', '=', r.toolId)
        .where('name', '=', r.name)
        .where('environment', '=', r.environment)
        .returningAll()
        .executeTakeFirst();
      if (!row) throw notFound(r);
      await appendEvent(trx, actor, now, {
        action: 'secret.delete',
        subject: subject(r),
        details: {
          tool_id: r.toolId,
          name: r.name,
          environment: r.environment,
          version: Number(row.version),
        },
      });
      return info(row);
    });
  }

  async list(filter: { toolId?: string; environment?: string } = {}): Promise<SecretInfo[]> {
    let q = this.#db
      .selectFrom('secrets')
      .selectAll()
      .orderBy('tool_id')
      .orderBy('name')
      .orderBy('environment');
    if (filter.toolId !== undefined) q = q.where('tool_id', '=', filter.toolId);
    if (filter.environment !== undefined) q = q.where('environment', '=', filter.environment);
    return (await q.execute()).map(info);
  }

  /**
   * The plaintext of one tool's own secret. Only the credential broker calls this, after the
   * gate passed; it is not on the admin surface and no front reaches it.
   */
  async open(address: SecretAddress): Promise<{ value: string; version: number } | null> {
    const r = resolve(address);
    const row = await this.#row(r);
    if (!row) return null;
    const version = Number(row.version);
    const value = openSecret(
      this.#masterKey(),
      { ...r, version },
      {
        keyId: row.key_id,
        nonce: row.nonce,
        ciphertext: row.ciphertext,
        tag: row.tag,
      },
    );
    return { value, version };
  }

  async #row(r: Resolved): Promise<SecretRow | undefined> {
    return this.#db
      .selectFrom('secrets')
      .selectAll()
      .where('tool_id', '=', r.toolId)
      .where('name', '=', r.name)
      .where('environment', '=', r.environment)
      .executeTakeFirst();
  }
}
