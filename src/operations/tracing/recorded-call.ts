/**
 * @module One traced call (the gate's CallSpan, gate/call-tracer.ts): its span, its children, and
 * how they reach the batch processor. A sampled call records its spans (recorded-span.ts) and
 * hands them all to the processor when its own span ends; a call the sampler left out records
 * nothing but still has a trace id and a context to pass on.
 */
import { type Attributes, type SpanContext, SpanKind } from '@opentelemetry/api';
import type { InstrumentationScope } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { SpanProcessor } from '@opentelemetry/sdk-trace';
import { formatTraceparent } from '../../core/index.js';
import type { CallSpan, ChildSpan, TracedTool, TracedVerdict } from '../../gate/index.js';
import { CallClock, RecordedSpan, type SpanCall } from './recorded-span.js';
import type { SpanIds } from './span-ids.js';

/** What every call of a tracer shares: where its spans go, their resource, scope and ids. */
export interface SpanTarget {
  readonly processor: Pick<SpanProcessor, 'onEnd'>;
  readonly resource: Resource;
  readonly scope: InstrumentationScope;
  readonly ids: SpanIds;
}

/** `toolgate.{step}`, built once per step name rather than once per call. */
const STEP_NAMES = new Map<string, string>();

function stepSpanName(step: string): string {
  let name = STEP_NAMES.get(step);
  if (name === undefined) {
    name = `toolgate.${step}`;
    STEP_NAMES.set(step, name);
  }
  return name;
}

/**
 * A sampled call: its span, and its children on the call's clock. Children that end before the
 * call are kept and handed to the processor with the call's span, in one go (one pass through the
 * processor's code rather than one at each step); one that ends after it goes at once.
 */
export class RecordedCall implements CallSpan, SpanCall {
  readonly traceId: string;
  readonly clock = new CallClock();
  readonly #target: SpanTarget;
  readonly #span: RecordedSpan;
  readonly #prefix: string;
  #ended: RecordedSpan[] | null = [];

  constructor(
    target: SpanTarget,
    traceId: string,
    parent: SpanContext | undefined,
    prefix: string,
    kind: SpanKind,
    attributes: Attributes,
  ) {
    this.traceId = traceId;
    this.#target = target;
    this.#prefix = prefix;
    this.#span = new RecordedSpan(this, parent, prefix, kind, attributes, this.clock.origin);
  }

  get resource(): Resource {
    return this.#target.resource;
  }

  get scope(): InstrumentationScope {
    return this.#target.scope;
  }

  spanId(): string {
    return this.#target.ids.spanId();
  }

  ended(span: RecordedSpan): void {
    if (span !== this.#span && this.#ended !== null) {
      this.#ended.push(span);
      return;
    }
    const processor = this.#target.processor;
    for (const child of this.#ended ?? []) processor.onEnd(child);
    this.#ended = null;
    processor.onEnd(span);
  }

  tool(tool: TracedTool): void {
    this.#span.name = `${this.#prefix} ${tool.name}`;
    const a = this.#span.attributes;
    a['gen_ai.tool.name'] = tool.name;
    a['toolgate.tool.id'] = tool.id;
    a['toolgate.tool.version'] = tool.version;
    a['toolgate.action_class'] = tool.actionClass;
  }

  step(name: string): ChildSpan {
    return new RecordedSpan(this, this.#span, stepSpanName(name), SpanKind.INTERNAL);
  }

  upstream(
    parent: ChildSpan | null,
    name: string,
    attributes: Readonly<Record<string, string>>,
  ): ChildSpan {
    // The parent is the execute step's span when it is open, else the call's.
    const under = parent instanceof RecordedSpan ? parent : this.#span;
    return new RecordedSpan(this, under, name, SpanKind.CLIENT, { ...attributes });
  }

  end(verdict: TracedVerdict | null, error?: string): void {
    const span = this.#span;
    if (verdict) {
      span.attributes['toolgate.decision'] = verdict.decision;
      if (verdict.rule !== undefined) span.attributes['toolgate.rule'] = verdict.rule;
      if (verdict.code !== undefined) {
        span.attributes['toolgate.code'] = verdict.code;
        span.fail(verdict.code);
      }
    }
    span.end(error);
  }
}

/**
 * A call the sampler left out: nothing is recorded, but its trace id reaches the audit records
 * and an upstream still receives the context (not sampled) under a span id of its own.
 */
export class UnsampledCall implements CallSpan, ChildSpan {
  readonly traceId: string;
  readonly #ids: SpanIds;
  #traceparent: string | undefined;

  constructor(traceId: string, ids: SpanIds) {
    this.traceId = traceId;
    this.#ids = ids;
  }

  get traceparent(): string {
    this.#traceparent ??= formatTraceparent(this.traceId, this.#ids.spanId(), false);
    return this.#traceparent;
  }

  tool(): void {}

  step(): ChildSpan {
    return this;
  }

  upstream(): ChildSpan {
    return this;
  }

  end(): void {}
}
