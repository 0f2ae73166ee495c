/**
 * @module Notification channels as data: webhook URLs, the console's public URL the links point
 * to, and the bounds of delivery. Checked whole when the gateway opens; a bad one is refused with
 * every problem listed (NOTIFY_CONFIG_INVALID). Where a webhook URL may point (https, a public
 * resolved address, loopback only with the admin's setting) is the outbound rules' alone: the
 * gateway checks each URL under them at start (INPUT_INVALID with the egress rule) and at every
 * delivery.
 */
import { endpointUrlProblem, type Problem, problem, ToolgateError } from '../../core/index.js';

export interface NotifyConfig {
  readonly webhookUrls: readonly string[];
  /** Where operators reach the console (`https://toolgate.example.com`); links start here. */
  readonly publicUrl: string;
  readonly timeoutMs: number;
  readonly maxAttempts: number;
  readonly backoffMs: number;
  readonly maxInFlight: number;
  readonly maxQueue: number;
}

export type NotifyConfigInput = Partial<NotifyConfig>;

export const DEFAULT_NOTIFY_CONFIG: NotifyConfig = {
  webhookUrls: [],
  publicUrl: 'http://127.0.0.1:8080',
  timeoutMs: 5_000,
  maxAttempts: 4,
  backoffMs: 500,
  maxInFlight: 8,
  maxQueue: 1_000,
};

const BOUNDS: Record<
  'timeoutMs' | 'maxAttempts' | 'backoffMs' | 'maxInFlight' | 'maxQueue',
  [number, number]
> = {
  timeoutMs: [50, 60_000],
  maxAttempts: [1, 10],
  backoffMs: [1, 60_000],
  maxInFlight: [1, 1_000],
  maxQueue: [0, 100_000],
};

export function resolveNotifyConfig(input: NotifyConfigInput = {}): NotifyConfig {
  const c: NotifyConfig = { ...DEFAULT_NOTIFY_CONFIG, ...input };
  const problems: Problem[] = [];
  c.webhookUrls.forEach((url, i) => {
    const p = endpointUrlProblem(url);
    if (p) problems.push(problem(`/webhookUrls/${i}`, `webhook URL ${p.message}`, 'notify.url'));
  });
  if (c.webhookUrls.length > 10)
    problems.push(problem('/webhookUrls', 'at most 10 webhook URLs', 'notify.url'));
  let pub: URL | null = null;
  try {
    pub = new URL(c.publicUrl);
  } catch {
    problems.push(problem('/publicUrl', 'the public URL is not a URL', 'notify.public_url'));
  }
  if (
    pub &&
    ((pub.protocol !== 'http:' && pub.protocol !== 'https:') || pub.username || pub.password)
  )
    problems.push(
      problem(
        '/publicUrl',
        'the public URL must be http(s) without credentials',
        'notify.public_url',
      ),
    );
  for (const [key, [min, max]] of Object.entries(BOUNDS)) {
    const v = c[key as keyof typeof BOUNDS];
    if (!Number.isInteger(v) || v < min || v > max)
      problems.push(problem(`/${key}`, `${key} must be an integer ${min}–${max}`, 'notify.range'));
  }
  if (problems.length > 0)
    throw new ToolgateError(
      'NOTIFY_CONFIG_INVALID',
      `notifications: ${problems.map((p) => p.message).join('; ')}`,
      { problems },
    );
  return c;
}

type Env = Readonly<Record<string, string | undefined>>;

/** TOOLGATE_NOTIFY_WEBHOOK_URL (one URL, or several separated by commas); empty when unset. */
export function notifyConfigFromEnv(env: Env, publicUrl: string): NotifyConfig {
  const urls = (env.TOOLGATE_NOTIFY_WEBHOOK_URL ?? '')
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u.length > 0);
  return resolveNotifyConfig({ webhookUrls: urls, publicUrl });
}
