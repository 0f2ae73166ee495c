/**
 * @module Wires the credentials (C11): the sealed secrets store and the broker that opens a
 * tool's own credential after the gate passed, with token exchange when OAuth names an exchange
 * endpoint (the callers' access tokens are then held in memory, for that exchange only).
 */
import {
  CredentialBroker,
  type MasterKey,
  readClientSecretFile,
  SecretsService,
  SubjectTokens,
  TokenExchanger,
} from '../domain/credentials/index.js';
import { exchangeIssuer } from '../domain/identity/index.js';
import type { OutboundGuard } from '../execution/sandbox/index.js';
import type { Store } from '../records/store/index.js';
import { clockOf, type ToolgateOptions } from './toolgate-options.js';

export type CredentialsWing = ReturnType<typeof wireCredentials>;

export function wireCredentials(
  options: ToolgateOptions,
  store: Store,
  { outbound }: { readonly outbound: OutboundGuard },
  loadMasterKey: () => MasterKey,
) {
  const secrets = new SecretsService(store.db, loadMasterKey, options.clock);
  // Held only when OAuth is configured: the callers' access tokens, for token exchange.
  const subjects = options.oauth ? new SubjectTokens() : null;
  const exchange = options.oauth?.tokenExchange;
  const credentials = new CredentialBroker(secrets, {
    ...clockOf(options),
    ...(options.environment ? { environment: options.environment } : {}),
    ...(exchange && subjects
      ? {
          exchange: {
            subjects,
            exchanger: new TokenExchanger(
              {
                issuer: exchangeIssuer(options.oauth),
                tokenEndpoint: exchange.tokenEndpoint,
                clientId: exchange.clientId,
                clientSecret: readClientSecretFile(exchange.clientSecretFile),
                tools: exchange.tools,
              },
              { fetch: outbound.fetch },
            ),
          },
        }
      : {}),
  });
  return { secrets, subjects, credentials };
}
