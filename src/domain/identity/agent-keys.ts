/**
 * @module Agent API keys: `tgk_<key id>_<secret>`. The secret is 256 random bits and only its
 * SHA-256 is stored (a slow hash adds nothing for a random 256-bit secret); the key is shown once.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import { type Actor, type Clock, systemClock, ToolgateError } from '../../core/index.js';
import { appendEvent, type Database } from '../../records/store/index.js';

const KEY_RE = /^tgk_([A-Za-z0-9_-]{16})_([A-Za-z0-9_-]{43})$/;

function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export interface IssuedKey {
  readonly agentId: string;
  readonly keyId: string;
  /** The full key; returned once, never stored. */
  readonly apiKey: string;
}

/**
 * A key id from 12 random bytes, base64url, never starting with `-`: an id is typed as a CLI
 * argument (`agents revoke-key ID`, the kill switch for a leaked key), where a leading `-` reads as
 * an option. A leading `-` becomes `A` (one value of 64 is drawn twice as often; 94 bits remain).
 */
export function keyIdFrom(bytes: Buffer): string {
  const id = bytes.toString('base64url');
  return id.startsWith('-') ? `A${id.slice(1)}` : id;
}

export class AgentKeys {
  readonly #db: Kysely<Database>;
  readonly #clock: Clock;

  constructor(db: Kysely<Database>, clock: Clock = systemClock) {
    this.#db = db;
    this.#clock = clock;
  }

  async issue(agentId: string, actor: Actor): Promise<IssuedKey> {
    const keyId = keyIdFrom(randomBytes(12));
    const secret = randomBytes(32).toString('base64url');
    const now = this.#clock();
    await this.#db.transaction().execute(async (trx) => {
      const agent = await trx
        .selectFrom('agents')
        .select('id')
        .where('id', '=', agentId)
        .executeTakeFirst();
      if (!agent) throw new ToolgateError('AGENT_NOT_FOUND', `no agent ${agentId}`, { agentId });
      await trx
        .insertInto('agent_keys')
        .values({
          key_id: keyId,
          agent_id: agentId,
          secret_hash: hashSecret(secret),
          created_at: now.toISOString(),
          created_by: actor.id,
          revoked_at: null,
        })
        .execute();
      await appendEvent(trx, actor, now, {
        action: 'agent.key_issued',
        subject: `agent:${agentId}`,
        details: { key_id: keyId },
      });
    });
    return { agentId, keyId, apiKey: `tgk_${keyId}_${secret}` };
  }

  async revoke(keyId: string, actor: Actor): Promise<void> {
    const now = this.#clock();
    await this.#db.transaction().execute(async (trx) => {
      const row = await trx
        .selectFrom('agent_keys')
        .selectAll()
        .where('key_id', '=', keyId)
        .executeTakeFirst();
      if (!row) throw new ToolgateError('NOT_FOUND', `no key ${keyId}`, {});
      await trx
        .updateTable('agent_keys')
        .set({ revoked_at: now.toISOString() })
        .where('key_id', '=', keyId)
        .execute();
      await appendEvent(trx, actor, now, {
        action: 'agent.key_revoked',
        subject: `agent:${row.agent_id}`,
        details: { key_id: keyId },
      });
    });
  }

  async list(
    agentId: string,
  ): Promise<{ key_id: string; created_at: string; revoked_at: string | null }[]> {
    return this.#db
      .selectFrom('agent_keys')
      .select(['key_id', 'created_at', 'revoked_at'])
      .where('agent_id', '=', agentId)
      .orderBy('created_at')
      .execute();
  }

  /**
   * The agent a presented key belongs to, or null. Null for malformed, unknown, revoked keys and
   * disabled agents alike: a caller learns nothing about which part failed.
   */
  async verify(presented: string): Promise<string | null> {
    return (await this.verifyKey(presented))?.agentId ?? null;
  }

  /**
   * The agent whose stored key a presented key names by its key id, whatever its secret: only to
   * audit a refused key of a known agent (who was tried), never to authenticate.
   */
  async namedAgent(presented: string): Promise<{ agentId: string; keyId: string } | null> {
    const m = KEY_RE.exec(presented);
    if (!m?.[1]) return null;
    const row = await this.#db
      .selectFrom('agent_keys')
      .select('agent_id')
      .where('key_id', '=', m[1])
      .executeTakeFirst();
    return row ? { agentId: row.agent_id, keyId: m[1] } : null;
  }

  /** As verify, with the key id: the credential a session opened with this key is bound to. */
  async verifyKey(presented: string): Promise<{ agentId: string; keyId: string } | null> {
    const m = KEY_RE.exec(presented);
    if (!m?.[1] || !m[2]) return null;
    const row = await this.#db
      .selectFrom('agent_keys')
      .innerJoin('agents', 'agents.id', 'agent_keys.agent_id')
      .select([
        'agent_keys.agent_id',
        'agent_keys.secret_hash',
        'agent_keys.revoked_at',
        'agents.enabled',
      ])
      .where('agent_keys.key_id', '=', m[1])
      .executeTakeFirst();
    const expected = Buffer.from(row?.secret_hash ?? '0'.repeat(64), 'hex');
    const given = Buffer.from(hashSecret(m[2]), 'hex');
    const match = timingSafeEqual(expected, given);
    if (!row || !match || row.revoked_at !== null || row.enabled !== 1) return null;
    return { agentId: row.agent_id, keyId: m[1] };
  }
}
