/**
 * @module Configuration is checked before anything is opened: a bad one leaves nothing behind.
 * Each wing resolves its own settings; the URLs this configuration fetches from or sends to go
 * under the outbound rules now, resolved, and one they refuse stops the start (INPUT_INVALID).
 */

import type { AgentCaps } from '../domain/sessions/index.js';
import { resolveAgentCaps } from '../domain/sessions/index.js';
import { OutboundGuard, refuseOutboundProblems } from '../execution/sandbox/index.js';
import { type AfterInjection, resolveAfterInjection } from '../gate/index.js';
import { type DetectorsConfig, resolveDetectorsConfig } from '../operations/detectors/index.js';
import { type HealthConfig, resolveHealthConfig } from '../operations/health/index.js';
import { type NotifyConfig, resolveNotifyConfig } from '../operations/notify/index.js';
import { type GatewayTracing, openTracing } from '../operations/tracing/index.js';
import type { ToolgateOptions } from './toolgate-options.js';

/** The settings each wing resolved, and the outbound rules every configured URL is under. */
export interface CheckedConfig {
  /** Null when detectors are switched off. */
  readonly detectors: DetectorsConfig | null;
  readonly caps: AgentCaps;
  readonly afterInjection: AfterInjection;
  readonly notify: NotifyConfig;
  readonly health: HealthConfig;
  readonly outbound: OutboundGuard;
  /**
   * Tracing, opened last (nothing is left behind by a configuration refused before it); the
   * gateway's close flushes it. Its exporter's endpoint is the operator's, not an agent's: it is
   * not an egress of a tool (docs/security-model.md, "What tracing exports").
   */
  readonly tracing: GatewayTracing;
}

export async function checkConfiguration(options: ToolgateOptions): Promise<CheckedConfig> {
  const config: Omit<CheckedConfig, 'tracing'> = {
    detectors: options.detectors === false ? null : resolveDetectorsConfig(options.detectors ?? {}),
    caps: resolveAgentCaps(options.caps),
    afterInjection: resolveAfterInjection(options.afterInjection),
    notify: resolveNotifyConfig(options.notify ?? {}),
    health: resolveHealthConfig(options.health === false ? {} : (options.health ?? {})),
    outbound: new OutboundGuard(options.outbound ?? {}),
  };
  // An absent URL is skipped; each one is named by its configuration key.
  await refuseOutboundProblems(config.outbound, [
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
  ]);
  return { ...config, tracing: await openTracing(options.tracing) };
}
