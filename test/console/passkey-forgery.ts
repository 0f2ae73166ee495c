/**
 * @module A forged passkey-signed decision for the offline check's tests (docs/architecture.md §6,
 * "Passkeys bound to the decision"): built by hand with node:crypto as a forger would, no mock.
 */
import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import type { DecisionEvidence } from '../../src/api/index.js';
import { canonicalJson, type DecisionCommitment, decisionChallenge } from '../../src/core/index.js';

/**
 * What a forger makes of a real decision's evidence: its own P-256 key (COSE), the commitment
 * rewritten for `approver`, the challenge recomputed, authenticator data and client data built
 * and signed, the key, credential, decider and audit record (its actor too) replaced. Self-consistent: only a
 * verifier that trusts the evidence's own key would accept it.
 */
export function forge(
  real: DecisionEvidence,
  approver: string,
  credentialId?: string,
): DecisionEvidence {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  const cose = Buffer.concat([
    Buffer.from([0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20]),
    Buffer.from(jwk.x ?? '', 'base64url'),
    Buffer.from([0x22, 0x58, 0x20]),
    Buffer.from(jwk.y ?? '', 'base64url'),
  ]);
  const commitment = {
    ...(JSON.parse(real.assertion.commitment) as DecisionCommitment),
    approver,
    nonce: randomBytes(32).toString('base64url'),
  };
  const challenge = decisionChallenge(commitment);
  const clientData = Buffer.from(
    JSON.stringify({ type: 'webauthn.get', challenge, origin: real.assertion.origin }),
  );
  const authData = Buffer.concat([
    createHash('sha256').update(real.assertion.rp_id).digest(),
    Buffer.from([0x05, 0, 0, 0, 1]),
  ]);
  const signature = sign(
    'sha256',
    Buffer.concat([authData, createHash('sha256').update(clientData).digest()]),
    privateKey,
  );
  const credential = credentialId ?? randomBytes(16).toString('base64url');
  const id = `pka_forged${randomBytes(4).toString('hex')}`;
  assert.ok(real.approval);
  return {
    assertion: {
      ...real.assertion,
      id,
      approver_id: approver,
      credential_id: credential,
      public_key: cose.toString('base64url'),
      commitment: canonicalJson(commitment),
      challenge,
      client_data_json: clientData.toString('base64url'),
      authenticator_data: authData.toString('base64url'),
      signature: signature.toString('base64url'),
      user_handle: null,
    },
    approval: { ...real.approval, decided_by: approver },
    // The record a forger writes names them too: the forged approver, the real approval.
    events: [
      {
        action: 'approval.approved',
        actor: approver,
        subject: `approval:${real.approval.id}`,
        details: { assertion: id, challenge, credential },
      },
    ],
  };
}
