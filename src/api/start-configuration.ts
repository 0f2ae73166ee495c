/**
 * @module What a gateway checks of its configuration before it opens anything (docs/architecture.md
 * §2, the composition's `checkConfiguration`), so that a bad one leaves nothing behind: each wing
 * resolves its own settings, the JWKS files are read into key sets, and every URL the
 * configuration fetches from or sends to goes under the outbound rules now, resolved. `serve` runs
 * it when the gateway opens, `toolgate config check` without a database: one path for both.
 */

import {
  AccessTokenVerifier,
  type JwtConfig,
  JwtVerifier,
  type OAuthResourceServerConfig,
} from '../domain/identity/index.js';
import { type AgentCaps, resolveAgentCaps } from '../domain/sessions/index.js';
import {
  type ConfiguredUrl,
  OutboundGuard,
  type OutboundOptions,
  refuseOutboundProblems,
} from '../execution/sandbox/index.js';
import { type AfterInjection, resolveAfterInjection } from '../gate/index.js';
import {
  type DetectorsConfig,
  type DetectorsConfigInput,
  resolveDetectorsConfig,
} from '../operations/detectors/index.js';
import {
  type HealthConfig,
  type HealthConfigInput,
  resolveHealthConfig,
} from '../operations/health/index.js';
import {
  type NotifyConfig,
  type NotifyConfigInput,
  resolveNotifyConfig,
} from '../operations/notify/index.js';

/** The settings checked before the gateway opens (the matching fields of `ToolgateOptions`). */
export interface StartConfiguration {
  readonly detectors?: DetectorsConfigInput | false;
  readonly caps?: Partial<AgentCaps>;
  readonly afterInjection?: Partial<AfterInjection>;
  readonly notify?: NotifyConfigInput;
  readonly health?: HealthConfigInput | false;
  readonly outbound?: OutboundOptions;
  readonly jwt?: JwtConfig;
  readonly oauth?: OAuthResourceServerConfig;
  /**
   * Single sign-on's issuer, for `config check`: a start checks it when it opens the relying party
   * (`openOidcLogin`), under the same outbound rules, before the gateway.
   */
  readonly oidcIssuer?: string;
  /** Operators' passkeys: the relying party behind TLS, and whether high-risk decisions need one. */
  readonly passkeys?: {
    readonly relyingParty?: { readonly rpId: string; readonly origin: string } | null;
    readonly required?: boolean | undefined;
  };
}

/** The settings each wing resolved, the outbound rules, and the agent-token verifiers. */
export interface CheckedStartConfiguration {
  /** Null when detectors are switched off. */
  readonly detectors: DetectorsConfig | null;
  readonly caps: AgentCaps;
  readonly afterInjection: AfterInjection;
  readonly notify: NotifyConfig;
  readonly health: HealthConfig;
  readonly outbound: OutboundGuard;
  /** Agent JWTs and OAuth access tokens, their key sets made now (a JWKS file is read here). */
  readonly jwt: JwtVerifier | null;
  readonly oauth: AccessTokenVerifier | null;
}

/**
 * Resolves and checks `options`; throws the first wing's refusal, or INPUT_INVALID listing every
 * outbound URL the outbound rules refuse, each at its configuration key. Nothing is opened.
 */
export async function checkStartConfiguration(
  options: StartConfiguration,
): Promise<CheckedStartConfiguration> {
  const outbound = new OutboundGuard(options.outbound ?? {});
  const resolved = {
    detectors: options.detectors === false ? null : resolveDetectorsConfig(options.detectors ?? {}),
    caps: resolveAgentCaps(options.caps),
    afterInjection: resolveAfterInjection(options.afterInjection),
    notify: resolveNotifyConfig(options.notify ?? {}),
    health: resolveHealthConfig(options.health === false ? {} : (options.health ?? {})),
    outbound,
  };
  await refuseOutboundProblems(outbound, configuredUrls(options, resolved));
  return {
    ...resolved,
    jwt: options.jwt ? new JwtVerifier(options.jwt, outbound.fetch) : null,
    oauth: options.oauth ? new AccessTokenVerifier(options.oauth, outbound.fetch) : null,
  };
}

/** Every URL the configuration fetches from or sends to, named by its configuration key. */
function configuredUrls(
  options: StartConfiguration,
  config: Pick<CheckedStartConfiguration, 'notify' | 'detectors'>,
): ConfiguredUrl[] {
  // An absent URL is skipped.
  return [
    ...config.notify.webhookUrls.map((url, i) => ({ at: `/notify/webhookUrls/${i}`, url })),
    { at: '/detectors/webhook/url', url: config.detectors?.webhook.url },
    { at: '/jwt/jwksUrl', url: options.jwt?.jwksUrl },
    ...(options.oauth?.issuers ?? []).map((issuer, i) => ({
      at: `/oauth/issuers/${i}/jwksUrl`,
      url: issuer.jwksUrl,
    })),
    {
      at: '/oauth/tokenExchange/tokenEndpoint',
      url: options.oauth?.tokenExchange?.tokenEndpoint,
    },
    { at: '/oidc/issuer', url: options.oidcIssuer },
  ];
}
