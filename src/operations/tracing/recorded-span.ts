/**
 * @module The spans the gate's tracer records (recorded-call.ts): records that implement the SDK's
 * ReadableSpan, the shape its span processors and OTLP exporters take, made with the least work a
 * call's path can do.
 *
 * Why not the SDK's Tracer and its spans: for each span the Tracer reads the context twice, checks
 * the parent's ids by regular expression, cleans the attributes twice, asks the sampler, records
 * two metrics (into a no-op meter) and reads three clocks, and every attribute set later is checked
 * again. In the gate's path that is cold code: the steps between two spans push it out of the
 * processor's caches, and the first span of a call cost five times the second one started right
 * after it. It came to 45–60 µs a call of five spans (bench:tracing, docs/operations.md
 * "Tracing"). Here a span, while the call runs, is one small object and a monotonic clock reading
 * at its start and at its end; its span id is drawn when someone first asks for it (an upstream's
 * `traceparent`, else the exporter), its times are turned into the epoch's nanoseconds when the
 * exporter reads them, and the call hands all its spans to the processor at once when it ends.
 * The sampler, the batch processor and the exporters stay the SDK's.
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
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace';
import { formatTraceparent } from '../../core/index.js';
import type { ChildSpan } from '../../gate/index.js';

/** What a span needs of its call: the trace, its ids, its clock, and where ended spans go. */
export interface SpanCall {
  readonly traceId: string;
  readonly clock: CallClock;
  readonly resource: Resource;
  readonly scope: InstrumentationScope;
  /** A fresh span id (16 hex digits). */
  spanId(): string;
  /** Takes a span that ended. */
  ended(span: RecordedSpan): void;
}

/**
 * The clock of one call's spans: the wall clock read once, when the call starts, and the
 * monotonic clock for every later reading (`performance.now()`), so a call's spans keep the order
 * they ran in. A reading becomes an epoch time only when it is exported; the epoch's whole
 * milliseconds and the offset beside them keep the nanoseconds exact.
 */
export class CallClock {
  /** The monotonic reading at the call's start. */
  readonly origin: number;
  readonly #epochS: number;
  readonly #epochNs: number;

  constructor() {
    this.origin = performance.now();
    const ms = Date.now();
    this.#epochS = Math.floor(ms / 1000);
    this.#epochNs = (ms % 1000) * 1_000_000;
  }

  /** A monotonic reading of this call as an epoch time. */
  at(reading: number): HrTime {
    const ns = this.#epochNs + Math.round((reading - this.origin) * 1_000_000);
    return [this.#epochS + Math.floor(ns / 1e9), ns % 1e9];
  }
}

const NO_ATTRIBUTES: Attributes = Object.freeze({});
const UNSET: SpanStatus = Object.freeze({ code: SpanStatusCode.UNSET });
const ERROR: SpanStatus = Object.freeze({ code: SpanStatusCode.ERROR });
const NONE: never[] = Object.freeze([]) as unknown as never[];

/**
 * A sampled span of a call, recording until it ends. It is its own SpanContext (sampled, never
 * remote) and its children's parent. Its attributes are set by the tracer only, with values of the
 * tracer's own making (never the caller's arguments or free text).
 */
export class RecordedSpan implements ReadableSpan, SpanContext, ChildSpan {
  name: string;
  readonly kind: SpanKind;
  readonly parentSpanContext?: SpanContext;
  attributes: Attributes;
  status: SpanStatus = UNSET;
  readonly #call: SpanCall;
  readonly #start: number;
  #end = -1;
  #spanId: string | undefined;

  constructor(
    call: SpanCall,
    parent: SpanContext | undefined,
    name: string,
    kind: SpanKind,
    attributes: Attributes = NO_ATTRIBUTES,
    start: number = performance.now(),
  ) {
    this.#call = call;
    if (parent !== undefined) this.parentSpanContext = parent;
    this.name = name;
    this.kind = kind;
    this.attributes = attributes;
    this.#start = start;
  }

  get traceId(): string {
    return this.#call.traceId;
  }

  get spanId(): string {
    this.#spanId ??= this.#call.spanId();
    return this.#spanId;
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
    if (this.#end >= 0) return;
    if (error !== undefined) this.fail(error);
    this.#end = performance.now();
    this.#call.ended(this);
  }

  get ended(): boolean {
    return this.#end >= 0;
  }

  get startTime(): HrTime {
    return this.#call.clock.at(this.#start);
  }

  get endTime(): HrTime {
    return this.#end >= 0 ? this.#call.clock.at(this.#end) : [0, 0];
  }

  get duration(): HrTime {
    if (this.#end < 0) return [-1, -1];
    const ns = Math.round((this.#end - this.#start) * 1_000_000);
    return [Math.floor(ns / 1e9), ns % 1e9];
  }

  get resource(): Resource {
    return this.#call.resource;
  }

  get instrumentationScope(): InstrumentationScope {
    return this.#call.scope;
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
