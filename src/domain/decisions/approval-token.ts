/** @module Signed, short-lived approval tokens bound to one exact call (C8). */
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  sign,
  verify,
} from 'node:crypto';
import { canonicalHash, canonicalJson } from '../../core/index.js';

/** What an approval is for: the call a reviewer saw. Every field must match at redemption. */
export interface ApprovalBinding {
  readonly approvalId: string;
  readonly toolId: string;
  readonly toolVersion: string;
  readonly agentId: string;
  readonly sessionId: string;
  /** `argumentsHash(args)` of the literal arguments the reviewer approved. */
  readonly argsHash: string;
}

export interface ApprovalClaims extends ApprovalBinding {
  /** 128 random bits, base64url. The integrator records it on redemption: single use is its job. */
  readonly tokenId: string;
  /** Epoch seconds. */
  readonly issuedAt: number;
  /** Epoch seconds; the token is refused from this second on (plus the clock-skew allowance). */
  readonly expiresAt: number;
}

export type ApprovalTokenFailureReason =
  | 'malformed'
  | 'bad_signature'
  | 'expired'
  | 'not_yet_valid'
  | 'wrong_tool'
  | 'wrong_version'
  | 'wrong_agent'
  | 'wrong_session'
  | 'wrong_approval'
  | 'arguments_changed';

export type ApprovalTokenVerification =
  | { readonly ok: true; readonly claims: ApprovalClaims }
  | { readonly ok: false; readonly reason: ApprovalTokenFailureReason };

export const APPROVAL_TOKEN_MIN_TTL_SECONDS = 1;
export const APPROVAL_TOKEN_MAX_TTL_SECONDS = 3600;
/** Tolerated disagreement between the clocks of the issuing and the verifying gateway. */
export const APPROVAL_TOKEN_CLOCK_SKEW_SECONDS = 5;
/** Refused before any decoding, so a hostile token costs nothing to reject. */
export const APPROVAL_TOKEN_MAX_LENGTH = 4096;
/** Per binding field; keeps every token we issue under APPROVAL_TOKEN_MAX_LENGTH. */
const MAX_BINDING_FIELD_LENGTH = 256;

const PREFIX = 'tga1';
const ED25519_SIGNATURE_BYTES = 64;
const TOKEN_ID_BYTES = 16;

const BINDING_FIELDS = [
  'approvalId',
  'toolId',
  'toolVersion',
  'agentId',
  'sessionId',
  'argsHash',
] as const;
const CLAIM_FIELDS: readonly string[] = [
  ...BINDING_FIELDS,
  'tokenId',
  'issuedAt',
  'expiresAt',
].sort();

/**
 * The binding fields in the order verify() checks them; the first mismatch is reported.
 * A table rather than six `if`s so a new binding field cannot be added without a reason.
 */
const BINDING_CHECKS: readonly (readonly [
  (typeof BINDING_FIELDS)[number],
  ApprovalTokenFailureReason,
])[] = [
  ['toolId', 'wrong_tool'],
  ['toolVersion', 'wrong_version'],
  ['agentId', 'wrong_agent'],
  ['sessionId', 'wrong_session'],
  ['approvalId', 'wrong_approval'],
  ['argsHash', 'arguments_changed'],
];

/**
 * The hash an approval is bound to: SHA-256 of the RFC 8785 canonical JSON of the arguments, so
 * key order and number spelling (`1` vs `1.0`) do not matter and every other change does.
 * Throws on anything that is not plain JSON data (undefined, functions, Dates, Maps, NaN, sparse
 * arrays, cycles): the canonicalizer would silently drop or coerce those, and two different
 * argument values must never share a hash.
 */
export function argumentsHash(args: unknown): string {
  assertPlainJson(args, new Set());
  return canonicalHash(args);
}

function assertPlainJson(value: unknown, ancestors: Set<object>): void {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError('arguments hold a non-finite number');
    return;
  }
  if (typeof value !== 'object') throw new TypeError(`arguments hold a ${typeof value}`);
  if (ancestors.has(value)) throw new TypeError('arguments hold a cycle');
  ancestors.add(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (!Object.hasOwn(value, i)) throw new TypeError('arguments hold a sparse array');
      assertPlainJson(value[i], ancestors);
    }
  } else {
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      throw new TypeError('arguments hold an object that is not plain JSON data');
    }
    for (const child of Object.values(value)) assertPlainJson(child, ancestors);
  }
  ancestors.delete(value);
}

/**
 * Issues and verifies approval tokens with one Ed25519 key.
 *
 * Format: `tga1.<base64url(canonical JSON claims)>.<base64url(Ed25519 over "tga1." + payload)>`.
 * There is no header and no algorithm field: the version prefix fixes the algorithm, so there is
 * nothing for an attacker to downgrade (`alg: none` has no place to go).
 *
 * Single use is NOT enforced here: this class holds no state. The integrator must record each
 * redeemed `claims.tokenId` (until `expiresAt` + skew has passed) and refuse a second redemption.
 */
export class ApprovalSigner {
  // Private fields: the key never shows up in JSON.stringify, spreads or structured logs.
  readonly #privateKey: KeyObject;
  readonly #publicKey: KeyObject;

  private constructor(privateKey: KeyObject) {
    this.#privateKey = privateKey;
    this.#publicKey = createPublicKey(privateKey);
  }

  static generate(): ApprovalSigner {
    return new ApprovalSigner(generateKeyPairSync('ed25519').privateKey);
  }

  /** Throws on anything but an unencrypted Ed25519 private key; never echoes the input. */
  static fromPem(privateKeyPem: string): ApprovalSigner {
    let key: KeyObject;
    try {
      key = createPrivateKey({ key: privateKeyPem, format: 'pem' });
    } catch {
      throw new TypeError('approval signing key is not a readable PEM private key');
    }
    if (key.asymmetricKeyType !== 'ed25519') {
      throw new TypeError('approval signing key must be Ed25519');
    }
    return new ApprovalSigner(key);
  }

  /** PKCS#8 PEM of the private key. Whoever stores it must keep it owner-readable only (0600). */
  toPem(): string {
    return this.#privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  }

  /** Throws on a ttl outside 1–3600 s, an invalid date, or an empty or oversized binding. */
  issue(
    binding: ApprovalBinding,
    ttlSeconds: number,
    now: Date = new Date(),
  ): { token: string; claims: ApprovalClaims } {
    if (
      !Number.isSafeInteger(ttlSeconds) ||
      ttlSeconds < APPROVAL_TOKEN_MIN_TTL_SECONDS ||
      ttlSeconds > APPROVAL_TOKEN_MAX_TTL_SECONDS
    ) {
      throw new RangeError(
        `approval token ttl must be whole seconds from ${APPROVAL_TOKEN_MIN_TTL_SECONDS} to ` +
          `${APPROVAL_TOKEN_MAX_TTL_SECONDS}`,
      );
    }
    for (const field of BINDING_FIELDS) {
      const value: unknown = binding[field];
      if (typeof value !== 'string' || value.length === 0) {
        throw new TypeError(`approval binding ${field} must be a non-empty string`);
      }
      if (value.length > MAX_BINDING_FIELD_LENGTH) {
        throw new RangeError(
          `approval binding ${field} is longer than ${MAX_BINDING_FIELD_LENGTH} characters`,
        );
      }
    }
    const issuedAt = epochSeconds(now);
    // Copy field by field: extra properties on the caller's object must not end up signed.
    const claims: ApprovalClaims = {
      approvalId: binding.approvalId,
      toolId: binding.toolId,
      toolVersion: binding.toolVersion,
      agentId: binding.agentId,
      sessionId: binding.sessionId,
      argsHash: binding.argsHash,
      tokenId: randomBytes(TOKEN_ID_BYTES).toString('base64url'),
      issuedAt,
      expiresAt: issuedAt + ttlSeconds,
    };
    const payload = Buffer.from(canonicalJson(claims), 'utf8').toString('base64url');
    const signature = sign(null, signingInput(payload), this.#privateKey).toString('base64url');
    const token = `${PREFIX}.${payload}.${signature}`;
    if (token.length > APPROVAL_TOKEN_MAX_LENGTH) {
      throw new RangeError('approval token would exceed its maximum length');
    }
    return { token, claims };
  }

  /**
   * Order matters and is fixed: syntax, then the signature over the raw bytes, and only then is
   * the payload decoded and parsed — unauthenticated JSON is never interpreted. Then time, then
   * each binding field. Never throws on any `token`; throws only on an invalid `now`.
   */
  verify(
    token: unknown,
    expected: ApprovalBinding,
    now: Date = new Date(),
  ): ApprovalTokenVerification {
    const nowSeconds = epochSeconds(now);
    if (typeof token !== 'string' || token.length > APPROVAL_TOKEN_MAX_LENGTH) {
      return failure('malformed');
    }
    const segments = token.split('.');
    if (segments.length !== 3) return failure('malformed');
    const [prefix, payload, signatureText] = segments;
    if (prefix !== PREFIX || payload === undefined || signatureText === undefined) {
      return failure('malformed');
    }
    const payloadBytes = decodeBase64url(payload);
    const signature = decodeBase64url(signatureText);
    if (payloadBytes === undefined || signature === undefined) return failure('malformed');
    if (signature.length !== ED25519_SIGNATURE_BYTES) return failure('malformed');

    let signatureValid: boolean;
    try {
      signatureValid = verify(null, signingInput(payload), this.#publicKey, signature);
    } catch {
      signatureValid = false;
    }
    if (!signatureValid) return failure('bad_signature');

    // Only our own key could have produced what follows, so a failure here means a bug or a
    // leaked key; it is still refused rather than trusted.
    const claims = parseClaims(payloadBytes);
    if (claims === undefined) return failure('malformed');

    if (nowSeconds + APPROVAL_TOKEN_CLOCK_SKEW_SECONDS < claims.issuedAt) {
      return failure('not_yet_valid');
    }
    if (nowSeconds >= claims.expiresAt + APPROVAL_TOKEN_CLOCK_SKEW_SECONDS) {
      return failure('expired');
    }
    for (const [field, reason] of BINDING_CHECKS) {
      if (claims[field] !== expected[field]) return failure(reason);
    }
    return { ok: true, claims };
  }
}

function failure(reason: ApprovalTokenFailureReason): ApprovalTokenVerification {
  return { ok: false, reason };
}

function signingInput(payload: string): Buffer {
  return Buffer.from(`${PREFIX}.${payload}`, 'utf8');
}

function epochSeconds(at: Date): number {
  const ms = at.getTime();
  if (!Number.isFinite(ms)) throw new TypeError('approval token time is not a valid date');
  return Math.floor(ms / 1000);
}

function isBase64urlChar(code: number): boolean {
  return (
    (code >= 0x41 && code <= 0x5a) || // A-Z
    (code >= 0x61 && code <= 0x7a) || // a-z
    (code >= 0x30 && code <= 0x39) || // 0-9
    code === 0x2d || // -
    code === 0x5f // _
  );
}

/**
 * Strict base64url: alphabet only, no padding, and the canonical encoding of its bytes. Node's
 * decoder silently skips foreign characters and ignores stray trailing bits, which would let one
 * token have many spellings.
 */
function decodeBase64url(text: string): Buffer | undefined {
  if (text.length === 0) return undefined;
  for (let i = 0; i < text.length; i++) {
    if (!isBase64urlChar(text.charCodeAt(i))) return undefined;
  }
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : undefined;
}

// ignoreBOM keeps a leading BOM in the text, so it fails the canonical comparison below.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function parseClaims(bytes: Buffer): ApprovalClaims | undefined {
  let text: string;
  let parsed: unknown;
  try {
    text = utf8.decode(bytes);
    parsed = JSON.parse(text);
    if (canonicalJson(parsed) !== text) return undefined;
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const record = parsed as Record<string, unknown>;
  // Canonical JSON has sorted keys, so an exact sorted-key match means no field missing or extra.
  const keys = Object.keys(record);
  if (keys.length !== CLAIM_FIELDS.length || keys.some((k, i) => k !== CLAIM_FIELDS[i])) {
    return undefined;
  }
  const { approvalId, toolId, toolVersion, agentId, sessionId, argsHash, tokenId } = record;
  const { issuedAt, expiresAt } = record;
  if (
    !isBindingString(approvalId) ||
    !isBindingString(toolId) ||
    !isBindingString(toolVersion) ||
    !isBindingString(agentId) ||
    !isBindingString(sessionId) ||
    !isBindingString(argsHash) ||
    typeof tokenId !== 'string' ||
    decodeBase64url(tokenId)?.length !== TOKEN_ID_BYTES ||
    typeof issuedAt !== 'number' ||
    typeof expiresAt !== 'number' ||
    !Number.isSafeInteger(issuedAt) ||
    !Number.isSafeInteger(expiresAt)
  ) {
    return undefined;
  }
  const ttl = expiresAt - issuedAt;
  if (ttl < APPROVAL_TOKEN_MIN_TTL_SECONDS || ttl > APPROVAL_TOKEN_MAX_TTL_SECONDS)
    return undefined;
  return {
    approvalId,
    toolId,
    toolVersion,
    agentId,
    sessionId,
    argsHash,
    tokenId,
    issuedAt,
    expiresAt,
  };
}

function isBindingString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_BINDING_FIELD_LENGTH;
}
