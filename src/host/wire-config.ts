/**
 * @module Configuration is checked before anything is opened: a bad one leaves nothing behind.
 * The check itself is the API's (`checkStartConfiguration`, which `toolgate config check` runs
 * too): each wing resolves its own settings, the JWKS files are read, and the URLs this
 * configuration fetches from or sends to go under the outbound rules now, resolved; one they
 * refuse stops the start (INPUT_INVALID). Tracing opens last.
 */

import { type CheckedStartConfiguration, checkStartConfiguration } from '../api/index.js';
import { type GatewayTracing, openTracing } from '../operations/tracing/index.js';
import type { ToolgateOptions } from './toolgate-options.js';

/** The settings each wing resolved, and the outbound rules every configured URL is under. */
export interface CheckedConfig extends CheckedStartConfiguration {
  /**
   * Tracing, opened last (nothing is left behind by a configuration refused before it); the
   * gateway's close flushes it. Its exporter's endpoint is the operator's, not an agent's: it is
   * not an egress of a tool (docs/security-model.md, "What tracing exports").
   */
  readonly tracing: GatewayTracing;
}

export async function checkConfiguration(options: ToolgateOptions): Promise<CheckedConfig> {
  const config = await checkStartConfiguration(options);
  return { ...config, tracing: await openTracing(options.tracing) };
}
