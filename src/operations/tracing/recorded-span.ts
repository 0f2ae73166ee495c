/**
 * @module The spans the gate's tracer records (otel-call-tracer.ts): records that implement the
 * SDK's ReadableSpan, the shape its span processors and OTLP exporters take, made with the least
 * work a call's path can do and handed to the batch processor when they end.
 *
 * Why not the SDK's Tracer and its spans: for each span the Tracer reads the context twice, checks
 * the parent's ids by regular expression, cleans the attributes twice, asks the sampler, records
 * two metrics (into a no-op meter) and reads three clocks, and every attribute set later is checked
 * again. In the gate's path, between steps that push its code and data out of the caches, that
 * came to 45–60 µs a call of five spans (bench:tracing, docs/operations.md "Tracing"). Here a span
 * is one object that is its own SpanContext: ids from a pool of random bytes (span-ids.ts), one
 * clock reading at its start and one at its end, attributes one object the tracer fills with
 * values it built itself. The sampler, the batch processor and the exporters stay the SDK's.
 */
import {
  type Attributes,
  type HrTime,
  type Link,
  type SpanContext,
  type SpanKind,
  type SpanStatus,
  SpanStatusCode,
  TraceFlags,
} from '@opentelemetry/api';
import type { InstrumentationScope } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, SpanProcessor, TimedEvent } from '@opentelemetry/sdk-trace';
import { formatTraceparent } from '../../core/index.js';
import type { ChildSpan } from '../../gate/index.js';

/** Where a tracer's spans go, and what they all share. */
export interface SpanTarget {
  readonly processor: Pick<SpanProcessor, 'onEnd'>;
  readonly resource: Resource;
  readonly scope: InstrumentationScope;
}

/**
 * The clock of one call's spans: the wall clock read once, when the call starts, and the
 * monotonic clock for every later reading, so a call's spans keep the order they ran in. The
 * epoch's whole milliseconds and the offset beside them keep the nanoseconds exact.
 */
export class CallClock {
  readonly #epochS: number;
  readonly #epochNs: number;
  readonly #origin: number;
  /** The time the clock was started: the call's start. */
  readonly start: HrTime;

  constructor() {
    this.#origin = performance.now();
    const ms = Date.now();
    this.#epochS = Math.floor(ms / 1000);
    this.#epochNs = (ms % 1000) * 1_000_000;
    this.start = [this.#epochS, this.#epochNs];
  }

  now(): HrTime {
    const ns = this.#epochNs + Math.round((performance.now() - this.#origin) * 1_000_000);
    return [this.#epochS + Math.floor(ns / 1e9), ns % 1e9];
  }
}

const NO_ATTRIBUTES: Attributes = Object.freeze({});
const NOT_ENDED: HrTime = Object.freeze([0, 0]) as unknown as HrTime;
const UNSET: SpanStatus = Object.freeze({ code: SpanStatusCode.UNSET });
const ERROR: SpanStatus = Object.freeze({ code: SpanStatusCode.ERROR });
const NONE: never[] = Object.freeze([]) as unknown as never[];

/**
 * A sampled span of a call, recording until it ends, then handed to the processor once. It is
 * its own SpanContext (the trace and span ids, sampled), and the parent of its children's.
 * Its attributes are set by the tracer only, with values of its own making (never the caller's
 * arguments or free text).
 */
export class RecordedSpan implements ReadableSpan, SpanContext, ChildSpan {
  name: string;
  readonly kind: SpanKind;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanContext?: SpanContext;
  attributes: Attributes;
  readonly startTime: HrTime;
  endTime: HrTime = NOT_ENDED;
  duration: HrTime = NOT_ENDED;
  status: SpanStatus = UNSET;
  ended = false;
  readonly #target: SpanTarget;
  readonly #clock: CallClock;

  constructor(
    target: SpanTarget,
    clock: CallClock,
    ids: { readonly traceId: string; readonly spanId: string },
    parent: SpanContext | undefined,
    name: string,
    kind: SpanKind,
    attributes: Attributes = NO_ATTRIBUTES,
    startTime: HrTime = clock.now(),
  ) {
    this.#target = target;
    this.#clock = clock;
    this.traceId = ids.traceId;
    this.spanId = ids.spanId;
    if (parent !== undefined) this.parentSpanContext = parent;
    this.name = name;
    this.kind = kind;
    this.attributes = attributes;
    this.startTime = startTime;
  }

  get traceFlags(): number {
    return TraceFlags.SAMPLED;
  }

  spanContext(): SpanContext {
    return this;
  }

  get traceparent(): string {
    return formatTraceparent(this.traceId, this.spanId, true);
  }

  /** Marks the span failed with `error` (a code or rule, never a message) as `error.type`. */
  fail(error: string): void {
    if (this.attributes === NO_ATTRIBUTES) this.attributes = {};
    this.attributes['error.type'] = error;
    this.status = ERROR;
  }

  end(error?: string): void {
    if (this.ended) return;
    if (error !== undefined) this.fail(error);
    const end = this.#clock.now();
    this.endTime = end;
    const ns = (end[0] - this.startTime[0]) * 1e9 + (end[1] - this.startTime[1]);
    this.duration = [Math.floor(ns / 1e9), ns % 1e9];
    this.ended = true;
    this.#target.processor.onEnd(this);
  }

  get resource(): Resource {
    return this.#target.resource;
  }

  get instrumentationScope(): InstrumentationScope {
    return this.#target.scope;
  }

  get links(): Link[] {
    return NONE;
  }

  get events(): TimedEvent[] {
    return NONE;
  }

  get droppedAttributesCount(): number {
    return 0;
  }

  get droppedEventsCount(): number {
    return 0;
  }

  get droppedLinksCount(): number {
    return 0;
  }
}
