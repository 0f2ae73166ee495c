/** @module Metrics (C16). Anything exported here is public API. */
export type { GatewayMetricsOptions } from './gateway-metrics.js';
export { GatewayMetrics } from './gateway-metrics.js';
export type { RequestMetrics } from './request-metrics.js';
