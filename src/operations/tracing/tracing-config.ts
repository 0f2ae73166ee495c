/**
 * @module Tracing's configuration, read from the standard OpenTelemetry variables
 * (docs/operations.md, "Tracing"). Off unless configured: `OTEL_TRACES_EXPORTER=otlp`, or an
 * OTLP endpoint given with no exporter named. Pure: reads the map it is given, loads nothing.
 * The endpoint is the operator's choice (configuration, never agent input).
 */
import { ToolgateError } from '../../core/index.js';

export type OtlpProtocol = 'http/json' | 'http/protobuf';
export type SamplerName =
  | 'always_on'
  | 'always_off'
  | 'traceidratio'
  | 'parentbased_always_on'
  | 'parentbased_always_off'
  | 'parentbased_traceidratio';

/** Tracing switched on: where spans go, how, and which are kept. */
export interface TracingConfig {
  /** The OTLP/HTTP traces URL (`…/v1/traces`). */
  readonly endpoint: string;
  readonly protocol: OtlpProtocol;
  readonly serviceName: string;
  /** OTEL_RESOURCE_ATTRIBUTES, decoded (service.name there is overridden by OTEL_SERVICE_NAME). */
  readonly resource: Readonly<Record<string, string>>;
  readonly sampler: SamplerName;
  /** The ratio of the `traceidratio` samplers, 0–1 (default 1). */
  readonly ratio: number;
  /** The batch processor's delay between exports (OTEL_BSP_SCHEDULE_DELAY, default 5000 ms). */
  readonly scheduleDelayMs: number;
  /** Spans held before new ones are dropped (OTEL_BSP_MAX_QUEUE_SIZE, default 2048). */
  readonly maxQueueSize: number;
  /**
   * Spans in one export, sent as soon as that many wait (OTEL_BSP_MAX_EXPORT_BATCH_SIZE, default
   * 512 or maxQueueSize when smaller; never more than maxQueueSize).
   */
  readonly maxExportBatchSize: number;
  /** How long an export may take before it is given up (OTEL_BSP_EXPORT_TIMEOUT, default 30000 ms). */
  readonly exportTimeoutMs: number;
}

type Env = Readonly<Record<string, string | undefined>>;

const SAMPLERS: ReadonlySet<string> = new Set([
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
]);

function invalid(message: string): ToolgateError<'INPUT_INVALID'> {
  return new ToolgateError('INPUT_INVALID', message, { problems: [] });
}

function value(env: Env, name: string): string | undefined {
  const v = env[name]?.trim();
  return v === undefined || v === '' ? undefined : v;
}

/**
 * The tracing configuration the variables describe, or null when tracing is off (the default,
 * `OTEL_SDK_DISABLED=true`, `OTEL_TRACES_EXPORTER=none`). A value it cannot use (an exporter or
 * protocol it does not speak, a URL that is not http(s), a ratio outside 0–1) fails the start
 * with a message naming the variable: a typo never turns tracing off silently.
 */
export function tracingConfigFromEnv(env: Env): TracingConfig | null {
  if (value(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return null;
  const exporters = (value(env, 'OTEL_TRACES_EXPORTER') ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  const tracesEndpoint = value(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const baseEndpoint = value(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (exporters.length === 0 && tracesEndpoint === undefined && baseEndpoint === undefined) {
    return null;
  }
  if (exporters.includes('none')) return null;
  for (const e of exporters) {
    if (e !== 'otlp')
      throw invalid(`OTEL_TRACES_EXPORTER: toolgate exports traces by otlp only, not ${e}`);
  }
  const protocol =
    value(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ??
    value(env, 'OTEL_EXPORTER_OTLP_PROTOCOL') ??
    'http/protobuf';
  if (protocol !== 'http/json' && protocol !== 'http/protobuf') {
    throw invalid(
      `OTEL_EXPORTER_OTLP_PROTOCOL: http/json or http/protobuf (OTLP over HTTP), not ${protocol}`,
    );
  }
  const endpoint =
    tracesEndpoint ??
    (baseEndpoint === undefined
      ? 'http://localhost:4318/v1/traces'
      : `${baseEndpoint.replace(/\/+$/, '')}/v1/traces`);
  checkUrl(
    endpoint,
    tracesEndpoint ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT',
  );
  const resource = resourceAttributes(value(env, 'OTEL_RESOURCE_ATTRIBUTES'));
  const sampler = value(env, 'OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on';
  if (!SAMPLERS.has(sampler)) {
    throw invalid(`OTEL_TRACES_SAMPLER: one of ${[...SAMPLERS].join(', ')}, not ${sampler}`);
  }
  const maxQueueSize = positive(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2_048);
  // The default batch fits a smaller queue; a batch set larger than the queue is a mistake.
  const maxExportBatchSize = positive(
    env,
    'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
    Math.min(512, maxQueueSize),
  );
  if (maxExportBatchSize > maxQueueSize) {
    throw invalid(
      `OTEL_BSP_MAX_EXPORT_BATCH_SIZE: at most OTEL_BSP_MAX_QUEUE_SIZE (${maxQueueSize}), not ${maxExportBatchSize}`,
    );
  }
  return {
    endpoint,
    protocol,
    serviceName: value(env, 'OTEL_SERVICE_NAME') ?? resource['service.name'] ?? 'toolgate',
    resource,
    sampler: sampler as SamplerName,
    ratio: ratioOf(value(env, 'OTEL_TRACES_SAMPLER_ARG'), sampler),
    scheduleDelayMs: positive(env, 'OTEL_BSP_SCHEDULE_DELAY', 5_000),
    maxQueueSize,
    maxExportBatchSize,
    exportTimeoutMs: positive(env, 'OTEL_BSP_EXPORT_TIMEOUT', 30_000),
  };
}

function checkUrl(url: string, name: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid(`${name}: not a URL: ${url}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw invalid(`${name}: an http(s) URL, not ${parsed.protocol}`);
  }
}

function ratioOf(arg: string | undefined, sampler: string): number {
  if (arg === undefined || !sampler.endsWith('traceidratio')) return 1;
  const n = Number(arg);
  if (!Number.isFinite(n) || n < 0 || n > 1 || !/^[0-9.]+$/.test(arg)) {
    throw invalid(`OTEL_TRACES_SAMPLER_ARG: a ratio from 0 to 1, not ${arg}`);
  }
  return n;
}

function positive(env: Env, name: string, fallback: number): number {
  const v = value(env, name);
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw invalid(`${name}: a positive integer, not ${v}`);
  return n;
}

/** `key=value,key=value`, each part percent-decoded (the W3C Baggage form the spec uses). */
function resourceAttributes(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (text === undefined) return out;
  for (const pair of text.split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) throw invalid(`OTEL_RESOURCE_ATTRIBUTES: key=value pairs, not ${pair}`);
    try {
      out[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(
        pair.slice(at + 1).trim(),
      );
    } catch {
      throw invalid(`OTEL_RESOURCE_ATTRIBUTES: a value is not percent-encoded: ${pair}`);
    }
  }
  return out;
}
