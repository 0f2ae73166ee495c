/**
 * @module The agent-authentication region of the composition (docs/architecture.md §6): the one
 * authenticator (`AgentAuthenticator`: an API key, agent JWT or OAuth access token becomes the
 * caller's AgentPrincipal), the OAuth front (protected resource metadata), the gate's scope step
 * for a front that answers a step-up before it dispatches, and the sealer of request states.
 */
import type { AgentApi, SecurityEvents } from '../api/index.js';
import { expose } from '../api/index.js';
import { ToolgateError } from '../core/index.js';
import type { MasterKey, SubjectTokens } from '../domain/credentials/index.js';
import { REQUEST_STATE_KEY_LABEL, RequestStateSealer } from '../domain/decisions/index.js';
import {
  type AccessTokenVerifier,
  AgentAuthenticator,
  type AgentKeys,
  type AgentService,
  type JwtVerifier,
  protectedResourceMetadata,
  protectedResourceMetadataUrl,
  type UserService,
} from '../domain/identity/index.js';
import type { Gate } from '../gate/index.js';
import type { ToolgateOptions } from './toolgate-options.js';

export type AgentAuth = ReturnType<typeof wireAgentAuth>;

interface AgentAuthDeps {
  /** The verifiers made when the configuration was checked (their JWKS files read then). */
  readonly config: {
    readonly jwt: JwtVerifier | null;
    readonly oauth: AccessTokenVerifier | null;
  };
  readonly domain: {
    readonly keys: AgentKeys;
    readonly agents: AgentService;
    readonly users: UserService;
  };
  readonly credentials: { readonly subjects: SubjectTokens | null };
  readonly security: SecurityEvents;
  readonly gate: Gate;
  readonly loadMasterKey: () => MasterKey;
}

export function wireAgentAuth(options: ToolgateOptions, deps: AgentAuthDeps) {
  const { jwt, oauth } = deps.config;
  const { keys, agents, users } = deps.domain;
  const { subjects } = deps.credentials;
  const { security } = deps;
  const authenticator = new AgentAuthenticator({
    agents,
    users,
    keys,
    jwt,
    oauth,
    subjects,
    refusals: security,
  });
  const authenticate = (token: string, peer?: string) => authenticator.authenticate(token, peer);
  const oauthFront: AgentApi['oauth'] = oauth
    ? Object.freeze({
        metadata: protectedResourceMetadata(oauth.config),
        metadataUrl: protectedResourceMetadataUrl(oauth.config.resource),
      })
    : null;
  return { authenticate, oauthFront, ...stepUpAndStates(options, deps) };
}

/** The agent API's `stepUp` (the gate's scope step alone) and `requestStates`. */
function stepUpAndStates(options: ToolgateOptions, deps: AgentAuthDeps) {
  const { gate, loadMasterKey } = deps;
  return {
    stepUp: async (
      ...[call, toolRef, args, via]: Parameters<AgentApi['stepUp']>
    ): ReturnType<AgentApi['stepUp']> => {
      const refused = await gate.stepUp(call, toolRef, args, via);
      return refused === null
        ? null
        : new ToolgateError('INSUFFICIENT_SCOPE', refused.message, {
            scope: (refused.details as { scope: string }).scope,
          });
    },
    requestStates: expose(
      new RequestStateSealer(
        () => loadMasterKey().derive(REQUEST_STATE_KEY_LABEL),
        options.clock ? { clock: options.clock } : {},
      ),
      ['seal', 'open'],
    ),
  };
}
