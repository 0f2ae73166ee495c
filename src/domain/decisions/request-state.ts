/**
 * @module The sealed `requestState` of a call waiting for approval (MCP 2026-07-28 multi
 * round-trip requests, docs/architecture.md §6). The state travels through the client and comes
 * back as attacker-controlled input, so it is AES-256-GCM under a key of its own (derived from the
 * master key with HKDF, label `REQUEST_STATE_KEY_LABEL`): a client can neither read nor change
 * what it binds — principal, run, tool and version, canonical-argument hash, approval, expiry.
 * Opening checks integrity and expiry only; whether the state belongs to this request is the
 * front's check (principal, run) and the gate's (tool, arguments, approval still usable).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { type Clock, systemClock, ToolgateError } from '../../core/index.js';

/** HKDF info of the state key; changing it invalidates every state in flight. */
export const REQUEST_STATE_KEY_LABEL = 'toolgate mcp request-state v1';
/** How long one minted state may be echoed; a call still waiting gets a fresh one each retry. */
export const REQUEST_STATE_TTL_MS = 10 * 60 * 1000;

const PREFIX = 'tgrs1.';
const AAD = Buffer.from(`${PREFIX}aes-256-gcm`);
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** What a state binds. `userId` and `credential` are null when the principal has none. */
export interface RequestStateClaims {
  readonly agentId: string;
  readonly userId: string | null;
  readonly credential: string | null;
  readonly run: string;
  readonly toolId: string;
  readonly toolVersion: string;
  readonly argsHash: string;
  readonly approvalId: string;
  /**
   * Which round of the call's multi round-trip request minted it (1 for the answer to the call
   * without a state); absent in states minted before rounds were counted: 0.
   */
  readonly round?: number;
  /** Milliseconds since the epoch. */
  readonly expiresAt: number;
}

function invalid(): ToolgateError<'REQUEST_STATE_INVALID'> {
  // One message for every failure: the caller learns nothing about which byte was wrong.
  return new ToolgateError(
    'REQUEST_STATE_INVALID',
    'this requestState was not issued by this gateway, or was changed; nothing ran',
    { reason: 'unsealable' },
  );
}

const FIELDS = [
  'agentId',
  'userId',
  'credential',
  'run',
  'toolId',
  'toolVersion',
  'argsHash',
  'approvalId',
] as const;

function claimsOf(value: unknown): RequestStateClaims {
  if (typeof value !== 'object' || value === null) throw invalid();
  const v = value as Record<string, unknown>;
  for (const f of FIELDS) {
    const nullable = f === 'userId' || f === 'credential';
    if (!(typeof v[f] === 'string' || (nullable && v[f] === null))) throw invalid();
  }
  if (typeof v.expiresAt !== 'number' || !Number.isFinite(v.expiresAt)) throw invalid();
  if (v.round !== undefined && !(Number.isSafeInteger(v.round) && (v.round as number) >= 0))
    throw invalid();
  return v as unknown as RequestStateClaims;
}

export class RequestStateSealer {
  readonly #keySource: Buffer | (() => Buffer);
  #key: Buffer | null = null;
  readonly #clock: Clock;
  readonly #ttlMs: number;

  constructor(
    /** The derived state key, or how to get it: read on first use (no key is made before). */
    key: Buffer | (() => Buffer),
    options: { clock?: Clock; ttlMs?: number } = {},
  ) {
    this.#keySource = key;
    this.#clock = options.clock ?? systemClock;
    this.#ttlMs = options.ttlMs ?? REQUEST_STATE_TTL_MS;
  }

  /** The wire string for these claims, expiring `ttlMs` from now. */
  seal(claims: Omit<RequestStateClaims, 'expiresAt'>): string {
    const body: RequestStateClaims = {
      ...claims,
      expiresAt: this.#clock().getTime() + this.#ttlMs,
    };
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#stateKey(), iv);
    cipher.setAAD(AAD);
    const sealed = Buffer.concat([cipher.update(JSON.stringify(body), 'utf8'), cipher.final()]);
    return PREFIX + Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString('base64url');
  }

  /**
   * The claims of a state this gateway sealed and that has not expired. Throws
   * REQUEST_STATE_INVALID for anything else (never says why) and REQUEST_STATE_EXPIRED; never
   * returns claims that failed the tag check.
   */
  open(text: string): RequestStateClaims {
    if (!text.startsWith(PREFIX)) throw invalid();
    const raw = Buffer.from(text.slice(PREFIX.length), 'base64url');
    // base64url decoding skips stray characters: a re-encoding that differs is not ours.
    if (raw.toString('base64url') !== text.slice(PREFIX.length)) throw invalid();
    if (raw.length < IV_BYTES + TAG_BYTES + 2) throw invalid();
    let claims: RequestStateClaims;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#stateKey(), raw.subarray(0, IV_BYTES));
      decipher.setAAD(AAD);
      decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
      const plain = Buffer.concat([
        decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)),
        decipher.final(),
      ]);
      claims = claimsOf(JSON.parse(plain.toString('utf8')));
    } catch {
      throw invalid();
    }
    if (claims.expiresAt <= this.#clock().getTime()) {
      throw new ToolgateError(
        'REQUEST_STATE_EXPIRED',
        'this requestState has expired; send the call again without it',
        { reason: 'expired' },
      );
    }
    return claims;
  }

  #stateKey(): Buffer {
    this.#key ??= typeof this.#keySource === 'function' ? this.#keySource() : this.#keySource;
    return this.#key;
  }
}
