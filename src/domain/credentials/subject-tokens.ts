/**
 * @module The OAuth access tokens callers presented, held in memory only for token exchange
 * (RFC 8693): the subject token of a call is the one its own principal — the session's credential
 * and user — presented. Never stored, logged, audited or sent anywhere but the authorization
 * server's token endpoint; forgotten when it expires. Each replica holds what was presented to
 * it: every request carries its bearer, and it is remembered as it is authenticated.
 */

/** A caller's access token, with the issuer that signed it (verified when it was presented). */
export interface SubjectToken {
  readonly token: string;
  readonly issuer: string;
}

interface Held extends SubjectToken {
  readonly expiresAt: number;
}

/** Bounds memory under many callers; the oldest entry goes first. */
const MAX_HELD = 10_000;

export class SubjectTokens {
  readonly #held = new Map<string, Held>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  static #key(credential: string, userId: string): string {
    return JSON.stringify([credential, userId]);
  }

  /**
   * Keeps `token` of `issuer` (valid until `expiresAtMs`) as the principal's current subject
   * token. The issuer is the one the token was verified against, never a claim read unverified.
   */
  remember(credential: string, userId: string, subject: SubjectToken, expiresAtMs: number): void {
    const key = SubjectTokens.#key(credential, userId);
    const current = this.#held.get(key);
    // The later-expiring token wins: a slow request with an older token never replaces a newer.
    if (current && current.expiresAt > expiresAtMs) return;
    this.#held.delete(key);
    this.#held.set(key, { token: subject.token, issuer: subject.issuer, expiresAt: expiresAtMs });
    if (this.#held.size > MAX_HELD) {
      const oldest = this.#held.keys().next().value;
      if (oldest !== undefined) this.#held.delete(oldest);
    }
  }

  /** The principal's unexpired subject token and its issuer, or null. */
  get(credential: string, userId: string): SubjectToken | null {
    const key = SubjectTokens.#key(credential, userId);
    const held = this.#held.get(key);
    if (!held) return null;
    if (held.expiresAt <= this.#now()) {
      this.#held.delete(key);
      return null;
    }
    return { token: held.token, issuer: held.issuer };
  }
}
