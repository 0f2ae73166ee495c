/**
 * @module A real gateway (SQLite file) to run single gate steps against: its services as the
 * steps' dependencies, a second connection to look at what a step wrote, and call states built
 * the way the gate builds them. A step's input is prepared by the real earlier steps (or set
 * directly on the state); nothing stands in for a store or service.
 */
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import type { Actor } from '../../../src/core/index.js';
import { IdempotencyStore } from '../../../src/domain/idempotency/index.js';
import { CallCounters } from '../../../src/domain/limits/index.js';
import type { PolicyEngine } from '../../../src/domain/policy/index.js';
import {
  demoExecutor,
  InlineRuntime,
  runtimeRegistry,
} from '../../../src/execution/runtimes/index.js';
import {
  type CallContext,
  type CallOptions,
  callContextOf,
  type InProcessCall,
} from '../../../src/gate/call-context.js';
import { Gate, type GateDependencies, stepDependencies } from '../../../src/gate/gate.js';
import { GATE_STEPS } from '../../../src/gate/steps/pipeline.js';
import { CallState, type StepDependencies, type StepResult } from '../../../src/gate/steps/step.js';
import { type Gateway, openGateway } from '../../../src/host/toolgate.js';
import { openStore, readRevisions, type Store } from '../../../src/records/store/index.js';
import { backends } from '../../support/backends.js';
import { approvePendingReviews } from '../../support/reviews.js';
import { validSendTool, validTool } from '../../support/tools.js';
import { callRecords } from '../../support/world.js';

export const admin: Actor = { id: 'steps-admin', via: 'library' };

export interface Harness {
  readonly tg: Gateway;
  /** A second connection to the same database. */
  readonly store: Store;
  readonly deps: StepDependencies;
  /** What a gate over the harness's services is built from. */
  readonly gateDeps: GateDependencies;
  /** Result records that could not be written, as the gate would count them. */
  readonly lost: { count: number };
  /** The clock every part reads; tests move it. */
  now: Date;
  open(agentId?: string): Promise<{ agentId: string; sessionId: string }>;
  state(
    ctx: CallContext | InProcessCall,
    tool: unknown,
    args: unknown,
    options?: CallOptions,
  ): CallState;
  /** Runs the real steps before `name`, each of which must let the call go on. */
  before(state: CallState, name: string): Promise<CallState>;
  /** Runs the step `name` (awaiting it when it returns a promise). */
  step(state: CallState, name: string): Promise<StepResult>;
  /** A fresh call's state brought to step `name` by the real earlier steps, then that step run. */
  at(
    name: string,
    ctx: CallContext | InProcessCall,
    tool: unknown,
    args: unknown,
    options?: CallOptions,
  ): Promise<{ s: CallState; r: StepResult }>;
  /** The audit kinds written for one call, after the writer flushed. */
  auditOf(callId: string): Promise<string[]>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  readonly policy?: PolicyEngine;
}

let calls = 0;

/** A session of an agent, as `Harness.open` returns it. */
export interface HarnessSession {
  agentId: string;
  sessionId: string;
}

/**
 * The harness of a whole test file: opened before its tests (with a session of `bot` in `ctx`
 * when `session` is set) and closed after them. Both objects are filled in by the `before` hook.
 */
export function harnessForFile(options: HarnessOptions & { readonly session?: boolean } = {}): {
  h: Harness;
  ctx: HarnessSession;
} {
  const h = {} as Harness;
  const ctx = {} as HarnessSession;
  before(async () => {
    await openHarness(options, h);
    if (options.session) Object.assign(ctx, await h.open());
  });
  after(async () => {
    await h.close();
  });
  return { h, ctx };
}

/** A gate over the harness's services (`extra` adds or replaces dependencies). */
export function harnessGate(h: Harness, extra: Partial<GateDependencies> = {}): Gate {
  return new Gate({ ...h.gateDeps, revisions: () => h.tg.revisions(), ...extra });
}

export async function openHarness(
  options: HarnessOptions = {},
  target: object = {},
): Promise<Harness> {
  const sqlite = backends().find((b) => b.name === 'sqlite');
  assert.ok(sqlite);
  const fresh = await sqlite.fresh();
  const h = Object.assign(target, { now: new Date('2026-06-01T10:00:00Z') });
  const clock = () => h.now;
  const executor = demoExecutor()
    .register('t.echo', (a) => ({ status: 'ok', echo: a }))
    .register('t.fail', () => {
      throw new Error('boom');
    })
    .register('t.big', () => ({ status: 'x'.repeat(5000) }))
    .register('t.bad', () => ({ status: 42 }));
  const tg = await openGateway({
    db: fresh.url,
    clock,
    executor,
    ...(options.policy ? { policy: options.policy } : {}),
  });
  const inline = (handler: string) => ({ runtime: { kind: 'inline', handler } });
  /** A tool of no data run inline by `handler`; `extra` is what sets it apart. */
  const noData = (id: string, handler: string, extra: Record<string, unknown> = {}) => ({
    kind: 'Tool',
    spec: validTool({ id, name: id, data_access: 'none', ...extra, ...inline(handler) }),
  });
  await tg.config.apply(
    [
      { kind: 'Agent', spec: { id: 'bot', owner: 'qa' } },
      {
        kind: 'Agent',
        spec: { id: 'capped', owner: 'qa', budgets: { external_sends: 1, spend_cents: 100 } },
      },
      { kind: 'Agent', spec: { id: 'nobody', owner: 'qa' } },
      // Holds only the egress tool: a set never holds a private read beside it.
      { kind: 'Agent', spec: { id: 'surfer', owner: 'qa' } },
      noData('echo', 't.echo'),
      { kind: 'Tool', spec: validTool({ id: 'private', name: 'private', ...inline('t.echo') }) },
      noData('limited', 't.echo', { rate_limit: { per_run: 1 } }),
      noData('priced', 't.echo', { cost: { fixed_cents: 60 } }),
      noData('approved', 't.echo', { approval: { mode: 'always' } }),
      noData('failing', 't.fail'),
      noData('bad', 't.bad'),
      noData('big', 't.big', {
        sandbox: { isolation: 'process', network: 'none', limits: { output_bytes: 1000 } },
      }),
      {
        kind: 'Tool',
        spec: validTool({
          id: 'fetch',
          name: 'fetch',
          data_access: 'public',
          egress: { mode: 'unconstrained' },
          required_capabilities: ['web:fetch'],
          input_schema: {
            type: 'object',
            additionalProperties: false,
            required: ['url'],
            properties: { url: { type: 'string', format: 'uri', maxLength: 200 } },
          },
          ...inline('t.echo'),
        }),
      },
      {
        kind: 'Tool',
        spec: validSendTool({
          id: 'send',
          name: 'send',
          // Approval only for a text that is never sent here: these calls reach the limits.
          approval: {
            mode: 'conditional',
            conditions: [{ argument: '/text', op: 'eq', value: 'needs approval' }],
          },
        }),
      },
      {
        kind: 'Tool',
        spec: validTool({
          id: 'secret',
          name: 'secret',
          required_capabilities: ['vault:read'],
          ...inline('t.echo'),
        }),
      },
      { kind: 'Grant', spec: { agent: 'bot', capabilities: ['billing:read', 'notify:send'] } },
      { kind: 'Grant', spec: { agent: 'surfer', capabilities: ['web:fetch'] } },
      { kind: 'Grant', spec: { agent: 'capped', capabilities: ['billing:read', 'notify:send'] } },
    ],
    admin,
  );
  // Restricted tools (the send tool) go live only after their security review.
  await approvePendingReviews(tg.admin);
  const store = await openStore(fresh.url);
  const lost = { count: 0 };
  const gateDeps: GateDependencies = {
    catalog: tg.catalog,
    agents: tg.agents,
    users: tg.users,
    sessions: tg.sessions,
    approvals: tg.approvals,
    runtimes: runtimeRegistry(new InlineRuntime(executor)),
    clock,
    audit: tg.audit.writer,
    counters: new CallCounters(store),
    idempotency: new IdempotencyStore(store.db, clock),
    revisions: () => readRevisions(store.db),
    ...(options.policy ? { policies: async () => options.policy ?? null } : {}),
  };
  const deps = stepDependencies(gateDeps, () => {
    lost.count += 1;
  });
  const stepNamed = (name: string) => {
    const found = GATE_STEPS.find((s) => s.name === name);
    assert.ok(found, `no step ${name}`);
    return found;
  };
  return Object.assign(h, {
    tg,
    store,
    deps,
    gateDeps,
    lost,
    async open(agentId = 'bot') {
      const s = await tg.sessions.open(agentId);
      return { agentId, sessionId: s.id };
    },
    state(
      ctx: CallContext | InProcessCall,
      tool: unknown,
      args: unknown,
      callOptions: CallOptions = {},
    ) {
      calls += 1;
      return new CallState(
        deps,
        callContextOf(ctx),
        tool,
        args,
        callOptions,
        `call_step_${calls}`,
        performance.now(),
      );
    },
    async before(state: CallState, name: string) {
      for (const s of GATE_STEPS) {
        if (s.name === name) return state;
        const r = await s.run(state);
        assert.equal(r, undefined, `step ${s.name} stopped the call: ${JSON.stringify(r)}`);
      }
      assert.fail(`no step ${name}`);
    },
    async step(state: CallState, name: string) {
      return stepNamed(name).run(state);
    },
    async at(
      name: string,
      ctx: CallContext | InProcessCall,
      tool: unknown,
      args: unknown,
      callOptions = {},
    ) {
      const s = await this.before(this.state(ctx, tool, args, callOptions), name);
      return { s, r: await this.step(s, name) };
    },
    async auditOf(callId: string) {
      return (await callRecords(tg, store, callId)).map((r) => r.kind);
    },
    async close() {
      await tg.close();
      await store.close();
      await fresh.drop();
    },
  });
}
