/**
 * @module The gate's CallTracer over the OpenTelemetry SDK, exporting OTLP over HTTP (JSON or
 * protobuf). Loaded by open-tracing.ts only when tracing is configured: with tracing off no
 * module of the SDK is imported. Span names and attributes follow the OpenTelemetry MCP and
 * GenAI conventions (`tools/call {tool}`, `mcp.method.name`, `gen_ai.tool.name`…); the gate's
 * own are under `toolgate.`. Never arguments, results, credentials or the caller's free text.
 */
import {
  type Attributes,
  type Context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { formatTraceparent, type TraceOrigin } from '../../core/index.js';
import type {
  CallSpan,
  CallTracer,
  ChildSpan,
  TracedTool,
  TracedVerdict,
} from '../../gate/index.js';
import type { TracingConfig } from './tracing-config.js';

/** A started tracer and how to stop it (flushing what is queued). */
export interface Tracing {
  readonly tracer: CallTracer;
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

/** Starts the SDK with its own provider (never the global one: the library may share a process). */
export function startOtelTracing(config: TracingConfig): Tracing {
  const exporterConfig = { url: config.endpoint };
  const exporter =
    config.protocol === 'http/json'
      ? new JsonExporter(exporterConfig)
      : new ProtoExporter(exporterConfig);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      ...config.resource,
      'service.name': config.serviceName,
    }),
    sampler: samplerOf(config),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter,
        scheduledDelayMillis: config.scheduleDelayMs,
        maxQueueSize: config.maxQueueSize,
      }),
    ],
  });
  const tracer = new OtelCallTracer(provider.getTracer('toolgate'));
  let closed: Promise<void> | null = null;
  return {
    tracer,
    flush: () => provider.forceFlush(),
    close: () => {
      closed ??= provider.shutdown();
      return closed;
    },
  };
}

class OtelCallTracer implements CallTracer {
  readonly #tracer: Tracer;

  constructor(tracer: Tracer) {
    this.#tracer = tracer;
  }

  startCall(origin: TraceOrigin | undefined, sessionId: string, method: string): CallSpan {
    const parent = origin?.parent
      ? trace.setSpanContext(ROOT_CONTEXT, {
          traceId: origin.parent.traceId,
          spanId: origin.parent.spanId,
          traceFlags: origin.parent.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
          isRemote: true,
        })
      : ROOT_CONTEXT;
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
    const span = this.#tracer.startSpan(
      prefix,
      { kind: origin === undefined ? SpanKind.INTERNAL : SpanKind.SERVER, attributes },
      parent,
    );
    return new OtelCallSpan(this.#tracer, span, prefix);
  }
}

function traceparentOf(span: Span): string {
  const c = span.spanContext();
  return formatTraceparent(c.traceId, c.spanId, (c.traceFlags & TraceFlags.SAMPLED) !== 0);
}

/** The SDK span behind each child handed out, so an upstream span can be its child. */
const SPANS = new WeakMap<ChildSpan, Span>();

function child(span: Span): ChildSpan {
  const handle: ChildSpan = {
    traceparent: traceparentOf(span),
    end(error?: string) {
      if (error !== undefined) {
        span.setAttribute('error.type', error);
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    },
  };
  SPANS.set(handle, span);
  return handle;
}

class OtelCallSpan implements CallSpan {
  readonly traceId: string;
  readonly #tracer: Tracer;
  readonly #span: Span;
  readonly #context: Context;
  readonly #prefix: string;

  constructor(tracer: Tracer, span: Span, prefix: string) {
    this.#tracer = tracer;
    this.#span = span;
    this.#prefix = prefix;
    this.#context = trace.setSpan(ROOT_CONTEXT, span);
    this.traceId = span.spanContext().traceId;
  }

  tool(tool: TracedTool): void {
    this.#span.updateName(`${this.#prefix} ${tool.name}`);
    this.#span.setAttributes({
      'gen_ai.tool.name': tool.name,
      'toolgate.tool.id': tool.id,
      'toolgate.tool.version': tool.version,
      'toolgate.action_class': tool.actionClass,
    });
  }

  step(name: string): ChildSpan {
    return child(
      this.#tracer.startSpan(`toolgate.${name}`, { kind: SpanKind.INTERNAL }, this.#context),
    );
  }

  upstream(
    parent: ChildSpan | null,
    name: string,
    attributes: Readonly<Record<string, string>>,
  ): ChildSpan {
    // The parent is the execute step's span when it is open, else the call's.
    const under = parent ? SPANS.get(parent) : undefined;
    const ctx = under ? trace.setSpan(ROOT_CONTEXT, under) : this.#context;
    return child(this.#tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, ctx));
  }

  end(verdict: TracedVerdict | null, error?: string): void {
    if (verdict) {
      this.#span.setAttribute('toolgate.decision', verdict.decision);
      if (verdict.rule !== undefined) this.#span.setAttribute('toolgate.rule', verdict.rule);
      if (verdict.code !== undefined) {
        this.#span.setAttribute('toolgate.code', verdict.code);
        this.#span.setAttribute('error.type', verdict.code);
        this.#span.setStatus({ code: SpanStatusCode.ERROR });
      }
    }
    if (error !== undefined) {
      this.#span.setAttribute('error.type', error);
      this.#span.setStatus({ code: SpanStatusCode.ERROR });
    }
    this.#span.end();
  }
}
