/**
 * @module The gate's CallTracer over the OpenTelemetry SDK, exporting OTLP over HTTP (JSON or
 * protobuf). Loaded by open-tracing.ts only when tracing is configured: with tracing off no
 * module of the SDK is imported. Span names and attributes follow the OpenTelemetry MCP and
 * GenAI conventions (`tools/call {tool}`, `mcp.method.name`, `gen_ai.tool.name`…); the gate's
 * own are under `toolgate.`. Never arguments, results, credentials or the caller's free text.
 * The SDK's sampler decides once per call; its spans are recorded-span.ts's (why: there), handed
 * to the SDK's batch processor when the call ends (recorded-call.ts), and its exporter encodes and
 * sends them between calls.
 */
import {
  type Attributes,
  createNoopMeter,
  type Meter,
  type MeterProvider,
  type MetricOptions,
  ROOT_CONTEXT,
  type SpanContext,
  SpanKind,
  TraceFlags,
  trace,
} from '@opentelemetry/api';
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  SamplingDecision,
  type SpanExporter,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace';
import type { TraceOrigin } from '../../core/index.js';
import type { CallSpan, CallTracer } from '../../gate/index.js';
import type { SpanCounts } from './open-tracing.js';
import { RecordedCall, type SpanTarget, UnsampledCall } from './recorded-call.js';
import { SpanIds } from './span-ids.js';
import type { TracingConfig } from './tracing-config.js';

/** A started tracer and how to stop it (flushing what is queued). */
export interface Tracing {
  readonly tracer: CallTracer;
  /** What became of the spans handed to the processor so far. */
  spanCounts(): SpanCounts;
  /** Exports every span ended so far. */
  flush(): Promise<void>;
  /** Flushes, then stops exporting; call once, when the gateway closes. */
  close(): Promise<void>;
}

function samplerOf(config: TracingConfig): Sampler {
  const ratio = new TraceIdRatioBasedSampler(config.ratio);
  switch (config.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
  }
}

/**
 * The exporter, its work moved out of the call whose span filled a batch: the batch processor
 * exports as soon as a batch is full, from inside the call that filled it, and an OTLP exporter
 * encodes the whole batch there and then (milliseconds for 512 spans). Deferred to the event
 * loop's next turn, a batch is encoded and sent between calls instead of inside one. The processor
 * still waits for each export's result; a flush and the shutdown wait for the exports deferred
 * but not yet begun (which the processor's own shutdown would not see), then for the exporter.
 */
function deferred(
  exporter: SpanExporter,
  counts: SpanTally,
): SpanExporter & { forceFlush(): Promise<void> } {
  const waiting = new Set<Promise<void>>();
  const settled = () => Promise.all(waiting).then(() => {});
  return {
    export: (spans, done) => {
      const exported = new Promise<void>((resolve) => {
        setImmediate(() => {
          let answered = false;
          const finish = (result: ExportResult) => {
            if (answered) return;
            answered = true;
            if (result.code === ExportResultCode.SUCCESS) counts.exported += spans.length;
            else counts.failed += spans.length;
            resolve();
            done(result);
          };
          // Called by the processor inside a promise, a throw was a failed export; here it
          // would be an uncaught exception, so it is turned into the failed export it is.
          try {
            exporter.export(spans, finish);
          } catch (err) {
            const error = err instanceof Error ? err : new Error(String(err));
            finish({ code: ExportResultCode.FAILED, error });
          }
        });
      });
      waiting.add(exported);
      void exported.then(() => waiting.delete(exported));
    },
    shutdown: () => settled().then(() => exporter.shutdown()),
    forceFlush: () => settled().then(() => exporter.forceFlush?.()),
  };
}

type SpanTally = { -readonly [K in keyof SpanCounts]: number };

/** The processor's own count of the spans it finished (a semantic-conventions metric). */
const SPANS_PROCESSED = 'otel.sdk.processor.span.processed';

/**
 * The batch processor's self-observation, read for the one thing only it knows: a span it
 * dropped because its queue was full (`otel.sdk.processor.span.processed` with `error.type`
 * `queue_full`). Exports are counted by the exporter (`deferred`); every other instrument is the
 * no-op.
 */
function dropCounter(counts: SpanTally): MeterProvider {
  const noop = createNoopMeter();
  const meter: Meter = Object.create(noop);
  meter.createCounter = ((name: string, options?: MetricOptions) => {
    if (name !== SPANS_PROCESSED) return noop.createCounter(name, options);
    return {
      add(n: number, attributes?: Attributes) {
        if (attributes?.['error.type'] === 'queue_full') counts.dropped += n;
      },
    };
  }) as Meter['createCounter'];
  return { getMeter: () => meter };
}

/**
 * Starts exporting with the SDK's batch processor and OTLP exporter, sized by the OTEL_BSP_*
 * settings. Nothing is registered globally (the library may share a process).
 */
export function startOtelTracing(config: TracingConfig): Tracing {
  // The exporter gives up when the processor does: a hung receiver's export is answered as
  // failed (and counted) after OTEL_BSP_EXPORT_TIMEOUT, not after the exporter's own 10 s.
  const exporterConfig = { url: config.endpoint, timeoutMillis: config.exportTimeoutMs };
  const exporter =
    config.protocol === 'http/json'
      ? new JsonExporter(exporterConfig)
      : new ProtoExporter(exporterConfig);
  const counts: SpanTally = { exported: 0, failed: 0, dropped: 0 };
  const sender = deferred(exporter, counts);
  const processor = new BatchSpanProcessor({
    exporter: sender,
    selfObsMeterProvider: dropCounter(counts),
    scheduledDelayMillis: config.scheduleDelayMs,
    maxQueueSize: config.maxQueueSize,
    maxExportBatchSize: config.maxExportBatchSize,
    exportTimeoutMillis: config.exportTimeoutMs,
  });
  const target: SpanTarget = {
    processor,
    resource: resourceFromAttributes({
      ...config.resource,
      'service.name': config.serviceName,
    }),
    scope: { name: 'toolgate' },
    ids: new SpanIds(),
  };
  const tracer = new OtelCallTracer(target, samplerOf(config));
  let closed: Promise<void> | null = null;
  return {
    tracer,
    spanCounts: () => ({ ...counts }),
    flush: () => processor.forceFlush().then(() => sender.forceFlush()),
    close: () => {
      closed ??= processor.shutdown();
      return closed;
    },
  };
}

class OtelCallTracer implements CallTracer {
  readonly #target: SpanTarget;
  readonly #sampler: Sampler;

  constructor(target: SpanTarget, sampler: Sampler) {
    this.#target = target;
    this.#sampler = sampler;
  }

  startCall(origin: TraceOrigin | undefined, sessionId: string, method: string): CallSpan {
    const mcp = origin?.front === 'mcp';
    const attributes: Attributes = { 'gen_ai.operation.name': 'execute_tool' };
    if (mcp) {
      attributes['mcp.method.name'] = method;
      attributes['mcp.session.id'] = sessionId;
      if (origin.protocolVersion !== undefined) {
        attributes['mcp.protocol.version'] = origin.protocolVersion;
      }
      if (origin.jsonrpcId !== undefined)
        attributes['jsonrpc.request.id'] = String(origin.jsonrpcId);
    } else {
      attributes['toolgate.session.id'] = sessionId;
    }
    if (origin !== undefined) {
      attributes['network.transport'] = origin.transport;
      if (origin.transport === 'tcp') attributes['network.protocol.name'] = 'http';
      if (origin.requestId !== undefined) attributes['toolgate.request.id'] = origin.requestId;
    }
    // MCP: `{mcp.method.name} {target}`; REST and the library: GenAI's `execute_tool {tool}`.
    const prefix = mcp ? method : 'execute_tool';
    const kind = origin === undefined ? SpanKind.INTERNAL : SpanKind.SERVER;
    const caller = origin?.parent;
    const parent: SpanContext | undefined = caller
      ? {
          traceId: caller.traceId,
          spanId: caller.spanId,
          traceFlags: caller.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
          isRemote: true,
        }
      : undefined;
    const traceId = parent ? parent.traceId : this.#target.ids.traceId();
    // The sampler decides once, for the call: the samplers toolgate offers follow the parent or
    // the trace id, so every span of a call shares its decision. Unsampled, nothing is recorded.
    const sampled = this.#sampler.shouldSample(
      parent ? trace.setSpanContext(ROOT_CONTEXT, parent) : ROOT_CONTEXT,
      traceId,
      prefix,
      kind,
      attributes,
      [],
    );
    if (sampled.decision !== SamplingDecision.RECORD_AND_SAMPLED) {
      return new UnsampledCall(traceId, this.#target.ids);
    }
    if (sampled.attributes) Object.assign(attributes, sampled.attributes);
    return new RecordedCall(this.#target, traceId, parent, prefix, kind, attributes);
  }
}
