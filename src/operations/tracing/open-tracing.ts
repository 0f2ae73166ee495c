/**
 * @module Opens tracing when it is configured, and only then loads the OpenTelemetry SDK (a
 * dynamic import): a gateway without tracing imports none of it (docs/operations.md, "Tracing").
 */
import type { CallTracer } from '../../gate/index.js';
import type { TracingConfig } from './tracing-config.js';

/** Tracing as the gateway holds it: a tracer for the gate (none when off), and its close. */
export interface GatewayTracing {
  readonly tracer: CallTracer | undefined;
  /** Exports what is queued; call on shutdown (Toolgate.close calls it). */
  close(): Promise<void>;
}

const OFF: GatewayTracing = Object.freeze({ tracer: undefined, close: async () => {} });

/** Starts tracing for `config`; none (tracing off): the no-op, with nothing loaded. */
export async function openTracing(
  config: TracingConfig | null | undefined,
): Promise<GatewayTracing> {
  if (!config) return OFF;
  const { startOtelTracing } = await import('./otel-call-tracer.js');
  const started = startOtelTracing(config);
  return { tracer: started.tracer, close: () => started.close() };
}
