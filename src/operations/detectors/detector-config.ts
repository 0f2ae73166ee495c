/**
 * @module Detector configuration as data: thresholds, windows, the webhook and which detectors
 * suspend the session. Every field has a safe default (all detectors on, none suspends, no
 * webhook); a bad configuration is refused whole with every problem listed.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { endpointUrlProblem, problem, ToolgateError } from '../../core/index.js';

interface Common {
  readonly enabled: boolean;
  /** Suspend the session the alert is about (its later calls are SESSION_SUSPENDED). */
  readonly suspend: boolean;
}

export interface DetectorsConfig {
  readonly webhook: {
    readonly url: string | null;
    /** The only hosts the webhook may go to (exact names, loopback ones too; the outbound rules apply besides). */
    readonly allow_hosts: readonly string[];
    readonly timeout_ms: number;
    /** Deliveries in flight at once; beyond it an alert's webhook is dropped and counted. */
    readonly max_in_flight: number;
  };
  readonly new_destination: Common & {
    /** Egress calls a tool (or agent) must have made before a new host is news. */
    readonly min_history: number;
  };
  readonly read_then_egress: Common & { readonly window_seconds: number };
  readonly egress_volume: Common & {
    /** Results a tool must have returned before its p99 is trusted. */
    readonly min_history: number;
    /** Distinct destinations in one session that count as fan-out. */
    readonly fan_out: number;
  };
  readonly deny_rate: Common & {
    readonly window_seconds: number;
    /** Denials in the window that may fire at all. */
    readonly threshold: number;
    /** …and the count must exceed the agent's usual denials per window times this. */
    readonly baseline_factor: number;
    /** How far back the baseline is learned from the store. */
    readonly baseline_hours: number;
  };
  readonly off_hours: Common & {
    readonly min_history: number;
    /** An hour (UTC) with less than this share of the agent's calls is unusual. */
    readonly min_share: number;
  };
  readonly read_only_write: Common;
}

/** Any subset of the configuration; missing fields take the defaults. */
export type DetectorsConfigInput = {
  readonly [K in keyof DetectorsConfig]?: Partial<DetectorsConfig[K]>;
};

export const DEFAULT_DETECTORS_CONFIG: DetectorsConfig = {
  webhook: { url: null, allow_hosts: [], timeout_ms: 2000, max_in_flight: 32 },
  new_destination: { enabled: true, suspend: false, min_history: 20 },
  read_then_egress: { enabled: true, suspend: false, window_seconds: 300 },
  egress_volume: { enabled: true, suspend: false, min_history: 50, fan_out: 10 },
  deny_rate: {
    enabled: true,
    suspend: false,
    window_seconds: 300,
    threshold: 10,
    baseline_factor: 3,
    baseline_hours: 24,
  },
  off_hours: { enabled: true, suspend: false, min_history: 200, min_share: 0.01 },
  read_only_write: { enabled: true, suspend: false },
};

const common = {
  enabled: { type: 'boolean' },
  suspend: { type: 'boolean' },
} as const;
const count = { type: 'integer', minimum: 1, maximum: 1_000_000 } as const;
const seconds = { type: 'integer', minimum: 1, maximum: 7 * 86_400 } as const;

function section(properties: Record<string, unknown>) {
  return { type: 'object', additionalProperties: false, properties: { ...common, ...properties } };
}

export const detectorsConfigSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  title: 'toolgate detector configuration',
  type: 'object',
  additionalProperties: false,
  properties: {
    webhook: {
      type: 'object',
      additionalProperties: false,
      properties: {
        url: { type: ['string', 'null'], maxLength: 2000 },
        allow_hosts: { type: 'array', items: { type: 'string', maxLength: 253 }, maxItems: 100 },
        timeout_ms: { type: 'integer', minimum: 50, maximum: 30_000 },
        max_in_flight: { type: 'integer', minimum: 1, maximum: 1000 },
      },
    },
    new_destination: section({ min_history: { type: 'integer', minimum: 0, maximum: 1_000_000 } }),
    read_then_egress: section({ window_seconds: seconds }),
    egress_volume: section({ min_history: count, fan_out: { type: 'integer', minimum: 2 } }),
    deny_rate: section({
      window_seconds: seconds,
      threshold: count,
      baseline_factor: { type: 'number', minimum: 1, maximum: 1000 },
      baseline_hours: { type: 'integer', minimum: 1, maximum: 24 * 90 },
    }),
    off_hours: section({
      min_history: count,
      min_share: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
    }),
    read_only_write: section({}),
  },
} as const;

/** Compiled at its first use, not at load (most commands never read this configuration). */
let compiled: ValidateFunction | null = null;
const validator = (): ValidateFunction =>
  (compiled ??= new Ajv({ allErrors: true, strict: false }).compile(detectorsConfigSchema));

/**
 * Whether a webhook URL names one of `allow_hosts` (exactly; loopback must be listed too). Where
 * it may point beyond that — https, public resolved addresses, loopback only with the admin's
 * setting — is the outbound rules', checked at start and at every delivery.
 */
export function webhookUrlProblem(url: string, allowHosts: readonly string[]): string | null {
  return (
    endpointUrlProblem(url, { allowHosts, allowHostsKey: 'webhook.allow_hosts' })?.message ?? null
  );
}

/** Validates a configuration and fills the defaults; throws INPUT_INVALID listing every problem. */
export function resolveDetectorsConfig(input: unknown = {}): DetectorsConfig {
  const validate = validator();
  if (!validate(input)) {
    throw new ToolgateError('INPUT_INVALID', 'the detector configuration is invalid', {
      problems: (validate.errors ?? []).map((e) =>
        problem(e.instancePath || '/', e.message ?? 'is invalid', `schema.${e.keyword}`),
      ),
    });
  }
  const given = input as DetectorsConfigInput;
  const d = DEFAULT_DETECTORS_CONFIG;
  const config: DetectorsConfig = {
    webhook: { ...d.webhook, ...given.webhook },
    new_destination: { ...d.new_destination, ...given.new_destination },
    read_then_egress: { ...d.read_then_egress, ...given.read_then_egress },
    egress_volume: { ...d.egress_volume, ...given.egress_volume },
    deny_rate: { ...d.deny_rate, ...given.deny_rate },
    off_hours: { ...d.off_hours, ...given.off_hours },
    read_only_write: { ...d.read_only_write, ...given.read_only_write },
  };
  if (config.webhook.url !== null) {
    const why = webhookUrlProblem(config.webhook.url, config.webhook.allow_hosts);
    if (why) {
      throw new ToolgateError('INPUT_INVALID', `webhook.url ${why}`, {
        problems: [problem('/webhook/url', why, 'detectors.webhook_url')],
      });
    }
  }
  return config;
}
