/**
 * @module Opens tracing when it is configured, and only then loads the OpenTelemetry SDK (a
 * dynamic import): a gateway without tracing imports none of it (docs/operations.md, "Tracing").
 */
import type { CallTracer } from '../../gate/index.js';
import type { TracingConfig } from './tracing-config.js';

/**
 * Spans by what became of them since the tracer started: exported (the receiver took them),
 * failed (an export that failed or timed out) and dropped (the queue was full:
 * OTEL_BSP_MAX_QUEUE_SIZE). No span is lost without a count (/metrics,
 * `toolgate_trace_spans_total`).
 */
export interface SpanCounts {
  readonly exported: number;
  readonly failed: number;
  readonly dropped: number;
}

/** Tracing as the gateway holds it: a tracer for the gate (none when off), and its close. */
export interface GatewayTracing {
  readonly tracer: CallTracer | undefined;
  /** The spans exported, failed and dropped so far; null when tracing is off. */
  spanCounts(): SpanCounts | null;
  /**
   * Exports what is queued, waiting at most the export timeout (5 s at most); never rejects: a
   * collector that is down or hung does not fail the gateway's close. Toolgate.close calls it.
   */
  close(): Promise<void>;
}

/**
 * The longest a gateway's close waits for the last spans to be exported: a collector that is
 * gone or hung at shutdown (a sidecar stopped first) must not hold the stop past its deadline.
 */
const CLOSE_BOUND_MS = 5_000;

/**
 * Waits for `closing` at most `ms`; never rejects. Spans whose export failed are counted as such
 * (`toolgate_trace_spans_total`); the gateway closes either way.
 */
function closeWithin(closing: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  return Promise.race([closing.catch(() => {}), bound]).finally(() => clearTimeout(timer));
}

const OFF: GatewayTracing = Object.freeze({
  tracer: undefined,
  spanCounts: () => null,
  close: async () => {},
});

/** Starts tracing for `config`; none (tracing off): the no-op, with nothing loaded. */
export async function openTracing(
  config: TracingConfig | null | undefined,
): Promise<GatewayTracing> {
  if (!config) return OFF;
  const { startOtelTracing } = await import('./otel-call-tracer.js');
  const started = startOtelTracing(config);
  return {
    tracer: started.tracer,
    spanCounts: () => started.spanCounts(),
    close: () => closeWithin(started.close(), Math.min(config.exportTimeoutMs, CLOSE_BOUND_MS)),
  };
}
