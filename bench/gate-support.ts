/**
 * What bench/gate.ts and bench/gate-tracing.ts share: the bench's tool, agent and arguments, a
 * gateway of them, one allowed call, and the statistics (in microseconds).
 */
import type { Actor } from '../src/core/index.js';
import { demoExecutor } from '../src/execution/runtimes/index.js';
import type { InProcessCall as CallContext, CallOptions } from '../src/gate/index.js';
import { type Gateway, openGateway } from '../src/host/toolgate.js';
import type { TracingConfig } from '../src/operations/tracing/index.js';

export const admin: Actor = { id: 'bench', via: 'library' };
export const AGENT = 'bench-agent';
export const CAPABILITY = 'docs:read';

export const inputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['document', 'query'],
  properties: {
    document: { type: 'string', maxLength: 200 },
    query: { type: 'string', maxLength: 200 },
  },
};
export const args = { document: 'handbook/onboarding', query: 'expense policy for travel' };

export function tool(id: string, name: string, extra: Record<string, unknown> = {}) {
  return {
    id,
    version: '1.0.0',
    name,
    description: 'Return the passage of one internal document that best answers a question.',
    tags: ['docs', 'read'],
    owner: 'bench-team',
    input_schema: inputSchema,
    output_schema: { type: 'object' },
    action_class: 'read',
    data_access: 'public',
    egress: { mode: 'none' },
    access_tier: 'public',
    required_capabilities: [CAPABILITY],
    runtime: { kind: 'inline', handler: 'noop' },
    provenance: 'internal',
    ...extra,
  };
}

export async function allowed(
  tg: Gateway,
  ctx: CallContext,
  toolName: string,
  options: CallOptions,
): Promise<void> {
  const d = await tg.gate.invoke(ctx, toolName, args, options);
  if (d.kind !== 'allow') throw new Error(`expected allow, got ${JSON.stringify(d)}`);
}

/** A gateway of the bench's tool and agent, tracing as given, and one session's caller. */
export async function benchGateway(db: string, tracing: TracingConfig | null) {
  const tg = await openGateway({
    db: `sqlite:${db}`,
    executor: demoExecutor().register('noop', () => ({})),
    tracing,
  });
  await tg.config.apply(
    [
      { kind: 'Agent', spec: { id: AGENT, owner: 'bench', ceilings: { windows: [] } } },
      { kind: 'Tool', spec: tool('bench.read_doc', 'read_doc') },
      { kind: 'Grant', spec: { agent: AGENT, capabilities: [CAPABILITY] } },
    ],
    admin,
  );
  const ctx: CallContext = { agentId: AGENT, sessionId: (await tg.sessions.open(AGENT)).id };
  return { tg, ctx };
}

// ---------------------------------------------------------------------------------------------
// Statistics (microseconds)

export function percentile(sorted: readonly number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] ?? Number.NaN;
}

export const r1 = (x: number) => Math.round(x * 10) / 10;
export const r3 = (x: number) => Math.round(x * 1000) / 1000;

export interface Stats {
  readonly n: number;
  readonly p50_us: number;
  readonly p90_us: number;
  readonly p99_us: number;
  readonly p999_us: number;
  readonly mean_us: number;
}

/** Samples are in milliseconds (performance.now); figures are in microseconds. */
export function stats(samplesMs: readonly number[]): Stats {
  const s = samplesMs.map((x) => x * 1000).sort((a, b) => a - b);
  const mean = s.reduce((a, b) => a + b, 0) / Math.max(1, s.length);
  return {
    n: s.length,
    p50_us: r1(percentile(s, 50)),
    p90_us: r1(percentile(s, 90)),
    p99_us: r1(percentile(s, 99)),
    p999_us: r1(percentile(s, 99.9)),
    mean_us: r1(mean),
  };
}

export const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
