/**
 * @module The WebAuthn challenges the server issues (docs/architecture.md §6, "Passkeys bound to
 * the decision"): kept in the store every replica shares, single use (one conditional update
 * spends one), short-lived, each bound to its purpose, its operator and the relying party it was
 * issued for, so the check never takes an origin or RP ID from the request that presents the
 * assertion. Also where the relying party is settled: configured, or — without configuration — a
 * console opened at `http://localhost` (browsers refuse an IP address as RP ID).
 */
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { type PasskeyRefusal, ToolgateError } from '../../core/index.js';
import type { Database } from '../../records/store/index.js';

/** Who the passkeys are for: the RP ID (a domain) and the origin browsers sign at. */
export interface RelyingParty {
  readonly rpId: string;
  readonly origin: string;
}

export type ChallengePurpose = 'register' | 'login' | 'decision';

/** How long an issued challenge may be answered. */
export const PASSKEY_CHALLENGE_TTL_MS = 5 * 60_000;

export function passkeyRefused(
  reason: PasskeyRefusal,
  message: string,
  differs?: string[],
): ToolgateError<'PASSKEY_REFUSED'> {
  return new ToolgateError('PASSKEY_REFUSED', message, {
    reason,
    ...(differs !== undefined ? { differs } : {}),
  });
}

/**
 * The relying party of a ceremony the console starts at `requestOrigin` (the Origin its
 * same-origin check already accepted). A configured one wins, and then the request must come
 * from its origin; without one only `http(s)://localhost[:port]` is accepted, for a gateway
 * reached on the operator's own machine: WebAuthn refuses an IP address (127.0.0.1) as RP ID.
 */
export function relyingPartyOf(
  configured: RelyingParty | null,
  requestOrigin: string | undefined,
): RelyingParty {
  if (configured) {
    if (requestOrigin !== undefined && requestOrigin !== configured.origin) {
      throw passkeyRefused(
        'relying_party',
        `passkeys on this gateway are for ${configured.origin}; open the console there`,
      );
    }
    return configured;
  }
  let url: URL | null = null;
  try {
    url = requestOrigin ? new URL(requestOrigin) : null;
  } catch {
    url = null;
  }
  if (
    url &&
    url.hostname === 'localhost' &&
    (url.protocol === 'http:' || url.protocol === 'https:') &&
    url.origin === requestOrigin
  ) {
    return { rpId: 'localhost', origin: url.origin };
  }
  throw passkeyRefused(
    'relying_party',
    'passkeys need the console at its own domain: set passkeys.origin and passkeys.rp_id (or server.public_url), or open the console at http://localhost:<port> (a browser refuses an IP address as relying party)',
  );
}

export interface IssuedChallenge {
  /** base64url, as the browser's clientDataJSON carries it. */
  readonly challenge: string;
  readonly expiresAt: string;
}

/**
 * Stores a challenge. A decision's is the hash of its commitment (given); any other is 32 random
 * bytes. Expired ones are swept by the same statement's neighbours (sweepChallenges).
 */
export async function issueChallenge(
  db: Kysely<Database>,
  now: Date,
  entry: {
    readonly purpose: ChallengePurpose;
    readonly operatorId: string | null;
    readonly rp: RelyingParty;
    readonly challenge?: string;
    readonly commitment?: string;
    readonly expiresAt?: string;
  },
): Promise<IssuedChallenge> {
  const challenge = entry.challenge ?? randomBytes(32).toString('base64url');
  const expiresAt =
    entry.expiresAt ?? new Date(now.getTime() + PASSKEY_CHALLENGE_TTL_MS).toISOString();
  await sweepChallenges(db, now);
  await db
    .insertInto('passkey_challenges')
    .values({
      challenge,
      purpose: entry.purpose,
      operator_id: entry.operatorId,
      commitment: entry.commitment ?? null,
      rp_id: entry.rp.rpId,
      origin: entry.rp.origin,
      created_at: now.toISOString(),
      expires_at: expiresAt,
      used_at: null,
    })
    .execute();
  return { challenge, expiresAt };
}

/**
 * Challenges an hour past their expiry: nobody can answer them, and the table stays small. An
 * expired sign-in challenge goes at once: anyone can ask for one, so none is kept to say why.
 */
async function sweepChallenges(db: Kysely<Database>, now: Date): Promise<void> {
  await db
    .deleteFrom('passkey_challenges')
    .where((eb) =>
      eb.or([
        eb('expires_at', '<', new Date(now.getTime() - 3_600_000).toISOString()),
        eb.and([eb('purpose', '=', 'login'), eb('expires_at', '<=', now.toISOString())]),
      ]),
    )
    .execute();
}

/** Outstanding sign-in challenges: per peer address, and in all (every replica's, in the store). */
export const LOGIN_CHALLENGE_CAPS = { perPeer: 10, total: 500 } as const;
/** Peers this replica remembers at once; past it, new peers are refused until some expire. */
const MAX_LOGIN_PEERS = 10_000;

/**
 * The bounds on sign-in challenges, which anyone may ask for before signing in: over either,
 * refused (RATE_LIMITED), never stored; each lasts the challenge's lifetime. The per-peer count
 * is this replica's (issue times in memory, bounded); the total is counted in the store.
 */
export class LoginChallengeCaps {
  readonly #caps: { readonly perPeer: number; readonly total: number };
  readonly #issued = new Map<string, number[]>();

  constructor(caps: { readonly perPeer: number; readonly total: number } = LOGIN_CHALLENGE_CAPS) {
    this.#caps = caps;
  }

  async admit(db: Kysely<Database>, now: Date, peer: string): Promise<void> {
    const since = now.getTime() - PASSKEY_CHALLENGE_TTL_MS;
    const mine = (this.#issued.get(peer) ?? []).filter((t) => t > since);
    if (mine.length >= this.#caps.perPeer)
      throw rateLimited('too many sign-in challenges from this address; wait a few minutes');
    if (!this.#issued.has(peer) && this.#issued.size >= MAX_LOGIN_PEERS) {
      for (const [p, times] of this.#issued)
        if (!times.some((t) => t > since)) this.#issued.delete(p);
      if (this.#issued.size >= MAX_LOGIN_PEERS)
        throw rateLimited('too many sign-ins are starting; wait a few minutes');
    }
    await sweepChallenges(db, now);
    const row = await db
      .selectFrom('passkey_challenges')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('purpose', '=', 'login')
      .where('used_at', 'is', null)
      .where('expires_at', '>', now.toISOString())
      .executeTakeFirst();
    if (Number(row?.n ?? 0) >= this.#caps.total)
      throw rateLimited('too many sign-ins are starting; wait a few minutes');
    mine.push(now.getTime());
    this.#issued.set(peer, mine);
  }
}

function rateLimited(message: string): ToolgateError<'RATE_LIMITED'> {
  return new ToolgateError('RATE_LIMITED', message, {
    rule: 'passkey.login_challenges',
    call_id: '',
  });
}

export interface ChallengeRow {
  readonly challenge: string;
  readonly purpose: string;
  readonly operator_id: string | null;
  readonly commitment: string | null;
  readonly rp: RelyingParty;
  readonly expires_at: string;
  readonly used_at: string | null;
}

/**
 * The issued challenge `challenge` for `purpose` (and `operatorId`, when it was issued to one),
 * unspent and unexpired; refuses otherwise, saying which. Spends nothing: see spendChallenge.
 */
export async function openChallenge(
  db: Kysely<Database>,
  now: Date,
  challenge: string,
  purpose: ChallengePurpose,
  operatorId: string | null,
): Promise<ChallengeRow> {
  const row = await db
    .selectFrom('passkey_challenges')
    .selectAll()
    .where('challenge', '=', challenge)
    .executeTakeFirst();
  if (!row)
    throw passkeyRefused('unknown_challenge', 'the passkey answered no challenge of this gateway');
  if (row.purpose !== purpose || (row.operator_id !== null && row.operator_id !== operatorId)) {
    throw passkeyRefused(
      'not_yours',
      'the passkey answered a challenge issued to another operator or for another purpose',
    );
  }
  if (row.used_at !== null)
    throw passkeyRefused('used', 'this passkey assertion was already used; start again');
  if (Date.parse(row.expires_at) <= now.getTime())
    throw passkeyRefused('expired', 'the passkey challenge expired; start again');
  return {
    challenge: row.challenge,
    purpose: row.purpose,
    operator_id: row.operator_id,
    commitment: row.commitment,
    rp: { rpId: row.rp_id, origin: row.origin },
    expires_at: row.expires_at,
    used_at: row.used_at,
  };
}

/** Spends a challenge: of two presentations racing, exactly one gets true. */
export async function spendChallenge(
  db: Kysely<Database>,
  now: Date,
  challenge: string,
): Promise<void> {
  const done = await db
    .updateTable('passkey_challenges')
    .set({ used_at: now.toISOString() })
    .where('challenge', '=', challenge)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  if (Number(done.numUpdatedRows) !== 1)
    throw passkeyRefused('used', 'this passkey assertion was already used; start again');
}
