/**
 * @module Process and Node metrics (C16): prom-client's default collectors (CPU, memory, heap,
 * garbage collection, event-loop lag, handles) under the gateway's `toolgate_` prefix, and
 * `toolgate_build_info`. They describe the process, not a gateway, so they live in one registry
 * per process, created with the first gateway (prom-client counts CPU from then) and merged into
 * every gateway's exposition: several gateways in one process (tests, embedders) neither collide
 * on names nor add a collector each (the GC observer and the event-loop monitor, once started,
 * are never stopped).
 */
import { readFileSync } from 'node:fs';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';

/** The version of this package, as its package.json says (the CLI's VERSION reads the same). */
function packageVersion(): string {
  try {
    const url = new URL('../../../package.json', import.meta.url);
    return (JSON.parse(readFileSync(url, 'utf8')) as { version?: string }).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

let shared: Registry | null = null;

/** The process's registry (default collectors and build info), created on first use. */
export function processRegistry(): Registry {
  if (shared) return shared;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'toolgate_' });
  new Gauge({
    name: 'toolgate_build_info',
    help: 'Always 1; the labels say what runs: toolgate version, Node version, platform and architecture',
    labelNames: ['version', 'node_version', 'platform', 'arch'],
    registers: [registry],
  }).set(
    {
      version: packageVersion(),
      node_version: process.version,
      platform: process.platform,
      arch: process.arch,
    },
    1,
  );
  shared = registry;
  return registry;
}
