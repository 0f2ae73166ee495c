/**
 * @module Credentials (C11): the encrypted secrets store, the broker that hands a tool
 * its own credential after the gate passed, per-call token minting and output redaction.
 * Anything exported here is public API.
 */
export type { CallTokenClaims } from './call-token.js';
export {
  CALL_TOKEN_ISSUER,
  DEFAULT_CALL_TOKEN_TTL_S,
  MAX_CALL_TOKEN_TTL_S,
  MIN_SIGNING_KEY_BYTES,
  mintCallToken,
  verifyCallToken,
} from './call-token.js';
export type {
  CallCredentials,
  CredentialBrokerOptions,
  CredentialRequest,
} from './credential-broker.js';
export { CredentialBroker, isReservedEnvName, isReservedHeaderName } from './credential-broker.js';
export { lazyMasterKey, pseudonymKey } from './lazy-master-key.js';
export type { MasterKeySource } from './master-key.js';
export {
  configuredMasterKey,
  loadMasterKey,
  MASTER_KEY_BYTES,
  MASTER_KEY_FILE_NAME,
  MasterKey,
} from './master-key.js';
export { redactSecrets, SECRET_MASK, secretForms } from './redact-secrets.js';
export type { SealedSecret, SecretBinding } from './secret-cipher.js';
export { openSecret, sealSecret } from './secret-cipher.js';
export type { SecretAddress, SecretAdmin, SecretInfo } from './secrets-service.js';
export {
  DEFAULT_ENVIRONMENT,
  ENVIRONMENT_PATTERN,
  MAX_SECRET_BYTES,
  MIN_SECRET_CHARS,
  SECRET_NAME_PATTERN,
  SecretsService,
} from './secrets-service.js';
export { SubjectTokens } from './subject-tokens.js';
export type { ExchangeTarget, TokenExchangeConfig } from './token-exchange.js';
export { readClientSecretFile, TOKEN_EXCHANGE_GRANT, TokenExchanger } from './token-exchange.js';
