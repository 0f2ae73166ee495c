/**
 * @module Per-call tokens (C11, `inject: minted_jwt`): instead of handing a tool its
 * long-lived secret, toolgate signs a short-lived JWT (HS256, keyed by that secret, which the
 * downstream shares) scoped to one tool, one principal and one call.
 */
import { jwtVerify, SignJWT } from 'jose';

export const CALL_TOKEN_ISSUER = 'toolgate';
/** The longest a call token may live; the default is shorter. */
export const MAX_CALL_TOKEN_TTL_S = 300;
export const DEFAULT_CALL_TOKEN_TTL_S = 120;
/** HS256 keys shorter than the hash output weaken the MAC (RFC 7518 §3.2). */
export const MIN_SIGNING_KEY_BYTES = 32;

export interface CallTokenClaims {
  /** Who the call is for: the user, else the agent (`agent:<id>`). */
  readonly subject: string;
  /** The tool's egress hosts, or its id when it has none. */
  readonly audience: readonly string[];
  readonly toolId: string;
  readonly toolVersion: string;
  readonly sessionId: string;
  readonly callId: string;
  readonly agentId?: string;
}

export async function mintCallToken(
  signingKey: string,
  claims: CallTokenClaims,
  now: Date,
  ttlSeconds: number = DEFAULT_CALL_TOKEN_TTL_S,
): Promise<{ token: string; expiresAt: Date }> {
  const ttl = Math.min(Math.max(1, Math.floor(ttlSeconds)), MAX_CALL_TOKEN_TTL_S);
  const iat = Math.floor(now.getTime() / 1000);
  const token = await new SignJWT({
    tool: claims.toolId,
    tool_version: claims.toolVersion,
    sid: claims.sessionId,
    ...(claims.agentId !== undefined ? { agent: claims.agentId } : {}),
  })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(CALL_TOKEN_ISSUER)
    .setAudience([...claims.audience])
    .setSubject(claims.subject)
    .setJti(claims.callId)
    .setIssuedAt(iat)
    .setNotBefore(iat)
    .setExpirationTime(iat + ttl)
    .sign(new TextEncoder().encode(signingKey));
  return { token, expiresAt: new Date((iat + ttl) * 1000) };
}

/**
 * What a downstream does with a call token (and what the tests use): verify signature, issuer,
 * audience and time; only HS256 is accepted.
 */
export async function verifyCallToken(
  token: string,
  signingKey: string,
  expected: { audience: string; now?: Date },
): Promise<Record<string, unknown>> {
  const { payload } = await jwtVerify(token, new TextEncoder().encode(signingKey), {
    issuer: CALL_TOKEN_ISSUER,
    audience: expected.audience,
    algorithms: ['HS256'],
    ...(expected.now ? { currentDate: expected.now } : {}),
  });
  return payload;
}
