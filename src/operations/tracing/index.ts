/**
 * @module Tracing (docs/operations.md, "Tracing"): the configuration from the OTEL_* variables
 * and the gate's tracer over the OpenTelemetry SDK, loaded only when configured. Anything
 * exported here is public API.
 */
export type { GatewayTracing, SpanCounts } from './open-tracing.js';
export { openTracing } from './open-tracing.js';
export type { OtlpProtocol, SamplerName, TracingConfig } from './tracing-config.js';
export { tracingConfigFromEnv } from './tracing-config.js';
