/**
 * @module Versions side by side over MCP (C2; docs/tools-and-catalog.md, "Versions side by side"): a `tools/call`
 * pins a major with `_meta["io.toolgate/version"]` (a number or its decimal string), and a call
 * to a deprecated version answers with `_meta["io.toolgate/deprecation"]`. The gate parses and
 * checks the pin; this front only carries it.
 */
import type { CallOptions } from '../../gate/index.js';

export const VERSION_META_KEY = 'io.toolgate/version';
export const DEPRECATION_META_KEY = 'io.toolgate/deprecation';

/** The call option carrying the request's pin, if it has one (never interpreted here). */
export function versionOption(
  meta: Record<string, unknown> | undefined,
): Pick<CallOptions, 'version'> {
  if (meta === undefined || !Object.hasOwn(meta, VERSION_META_KEY)) return {};
  return { version: meta[VERSION_META_KEY] };
}
