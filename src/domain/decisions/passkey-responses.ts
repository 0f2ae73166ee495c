/**
 * @module The browser's WebAuthn answers as they arrive (base64url JSON, what the console's script
 * sends): parsed and bounded before anything reads them, so the verifier only ever sees the shape
 * it expects. Never trusted beyond their shape: the signature check decides. Also the audit record
 * of a refused removal.
 */
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { Kysely } from 'kysely';
import type { Actor } from '../../core/index.js';
import { appendEvent, type Database } from '../../records/store/index.js';
import { type Operator, operatorActor } from '../operators/index.js';
import { passkeyRefused } from './passkey-challenges.js';

const B64URL = /^[A-Za-z0-9_-]*$/;
/** Far above any real authenticator's output; a bound on what is parsed and stored. */
const MAX_FIELD = 16 * 1024;

function field(value: unknown, name: string, optional = false): string | undefined {
  if (value === undefined && optional) return undefined;
  if (
    typeof value !== 'string' ||
    value.length === 0 ||
    value.length > MAX_FIELD ||
    !B64URL.test(value)
  )
    throw passkeyRefused('malformed', `the passkey answer's ${name} is not base64url`);
  return value;
}

function objectOf(value: unknown): Record<string, unknown> {
  let parsed = value;
  if (typeof value === 'string') {
    if (value.length > 8 * MAX_FIELD)
      throw passkeyRefused('malformed', 'the passkey answer is too large');
    try {
      parsed = JSON.parse(value);
    } catch {
      throw passkeyRefused('malformed', 'the passkey answer is not JSON');
    }
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw passkeyRefused('malformed', 'the passkey answer is not a WebAuthn credential');
  return parsed as Record<string, unknown>;
}

/** A `navigator.credentials.get` answer (an object, or its JSON text). */
export function assertionOf(value: unknown): AuthenticationResponseJSON {
  const o = objectOf(value);
  const r = objectOf(o.response ?? null);
  const id = field(o.id, 'id') as string;
  if (o.type !== 'public-key' || (o.rawId !== undefined && o.rawId !== id))
    throw passkeyRefused('malformed', 'the passkey answer is not a public-key credential');
  const userHandle = field(r.userHandle ?? undefined, 'userHandle', true);
  return {
    id,
    rawId: id,
    type: 'public-key',
    clientExtensionResults: {},
    response: {
      clientDataJSON: field(r.clientDataJSON, 'clientDataJSON') as string,
      authenticatorData: field(r.authenticatorData, 'authenticatorData') as string,
      signature: field(r.signature, 'signature') as string,
      ...(userHandle !== undefined ? { userHandle } : {}),
    },
  };
}

/** A `navigator.credentials.create` answer (an object, or its JSON text). */
export function attestationOf(value: unknown): RegistrationResponseJSON {
  const o = objectOf(value);
  const r = objectOf(o.response ?? null);
  const id = field(o.id, 'id') as string;
  if (o.type !== 'public-key' || (o.rawId !== undefined && o.rawId !== id))
    throw passkeyRefused('malformed', 'the passkey answer is not a public-key credential');
  const transports = Array.isArray(r.transports)
    ? r.transports.filter((t): t is string => typeof t === 'string' && t.length <= 32).slice(0, 8)
    : [];
  return {
    id,
    rawId: id,
    type: 'public-key',
    clientExtensionResults: {},
    response: {
      clientDataJSON: field(r.clientDataJSON, 'clientDataJSON') as string,
      attestationObject: field(r.attestationObject, 'attestationObject') as string,
      transports: transports as RegistrationResponseJSON['response']['transports'] & string[],
    },
  };
}

/** The challenge a browser signed, read from its clientDataJSON (checked again by the verifier). */
export function signedChallenge(clientDataJSON: string): string {
  let data: unknown;
  try {
    data = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8'));
  } catch {
    throw passkeyRefused('malformed', "the passkey answer's clientDataJSON is not JSON");
  }
  const challenge = (data as { challenge?: unknown } | null)?.challenge;
  if (typeof challenge !== 'string' || !B64URL.test(challenge) || challenge.length > 200)
    throw passkeyRefused('malformed', "the passkey answer's clientDataJSON names no challenge");
  return challenge;
}

/**
 * A refused removal of another operator's passkey, audited as the operator authority audits its
 * own refusals (`operator.forbidden`, subject the operator refused) before it is answered; a
 * refusal stands whether or not its record could be written.
 */
export async function auditRefusedRemoval(
  db: Kysely<Database>,
  now: Date,
  by: Operator,
  operatorId: string,
  via: Actor['via'],
): Promise<void> {
  await appendEvent(db, operatorActor(by, via), now, {
    action: 'operator.forbidden',
    subject: `operator:${by.id}`,
    details: {
      edge: via,
      operator: by.id,
      action: 'operators.self',
      what: "remove another operator's passkey",
      target: `operator:${operatorId}`,
      roles: ['admin'],
      held: [...by.roles],
    },
  }).catch(() => undefined);
}
