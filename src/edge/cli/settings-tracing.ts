/**
 * @module The settings file's `tracing` keys: OpenTelemetry's own variables (docs/operations.md
 * "Tracing"), in the table of settings-file.ts. The exporter's headers hold a collector's
 * credentials: they stay in OTEL_EXPORTER_OTLP_HEADERS, never in the file.
 */
import { int, type Setting, str, url } from './setting-kinds.js';

export const TRACING_SETTINGS: readonly Setting[] = [
  {
    path: 'tracing.exporter',
    env: 'OTEL_TRACES_EXPORTER',
    schema: { enum: ['otlp', 'none'] },
    description: '`otlp` turns tracing on, `none` keeps it off',
  },
  {
    path: 'tracing.endpoint',
    env: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    schema: url,
    description: "the collector's base URL (`/v1/traces` is added)",
  },
  {
    path: 'tracing.traces_endpoint',
    env: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    schema: url,
    description: 'the traces URL, used as given',
  },
  {
    path: 'tracing.protocol',
    env: 'OTEL_EXPORTER_OTLP_PROTOCOL',
    schema: { enum: ['http/protobuf', 'http/json'] },
    description: 'OTLP over HTTP as protobuf (default) or JSON',
  },
  {
    path: 'tracing.service_name',
    env: 'OTEL_SERVICE_NAME',
    schema: str,
    description: '`service.name` (default `toolgate`)',
  },
  {
    path: 'tracing.resource_attributes',
    env: 'OTEL_RESOURCE_ATTRIBUTES',
    schema: str,
    description: "`key=value,…` on every span's resource",
  },
  {
    path: 'tracing.sampler',
    env: 'OTEL_TRACES_SAMPLER',
    schema: {
      enum: [
        'parentbased_always_on',
        'parentbased_always_off',
        'parentbased_traceidratio',
        'always_on',
        'always_off',
        'traceidratio',
      ],
    },
    description: 'which calls are traced (default `parentbased_always_on`)',
  },
  {
    path: 'tracing.sampler_ratio',
    env: 'OTEL_TRACES_SAMPLER_ARG',
    schema: { type: 'number', minimum: 0, maximum: 1 },
    description: 'the ratio of the `traceidratio` samplers (default 1)',
  },
  {
    path: 'tracing.batch.schedule_delay_ms',
    env: 'OTEL_BSP_SCHEDULE_DELAY',
    schema: int(1, 3_600_000),
    description: "the batch processor's delay between exports (default 5000)",
  },
  {
    path: 'tracing.batch.max_queue_size',
    env: 'OTEL_BSP_MAX_QUEUE_SIZE',
    schema: int(1, 1_000_000),
    description: 'spans held before new ones are dropped and counted (default 2048)',
  },
  {
    path: 'tracing.batch.max_export_batch_size',
    env: 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
    schema: int(1, 1_000_000),
    description: 'spans in one export (default 512; at most the queue)',
  },
  {
    path: 'tracing.batch.export_timeout_ms',
    env: 'OTEL_BSP_EXPORT_TIMEOUT',
    schema: int(1, 3_600_000),
    description: 'how long an export may take (default 30000)',
  },
];
