/**
 * @module The gate's tracing port (docs/operations.md, "Tracing"): one span per call, child spans
 * where time goes, the gate's verdict as attributes. The gate owns the interface; the
 * OpenTelemetry implementation lives in operations/tracing/ and is loaded only when tracing is
 * configured. Without a tracer the gate does nothing here but test one field (no cost).
 * Never hand a tracer arguments, results, credentials or free text of the caller.
 */
import type { TraceOrigin } from '../core/index.js';

/** The steps that get a child span of their own: where a call's time goes. */
export const TRACED_STEPS: ReadonlySet<string> = new Set([
  'policy',
  'approval',
  'audit-pre',
  'execute',
]);

/** What the gate decided, as the call's span records it (`toolgate.*` attributes). */
export interface TracedVerdict {
  readonly decision: 'allow' | 'deny' | 'pending_approval';
  readonly code?: string;
  readonly rule?: string;
}

/** The resolved tool, named on the span once `resolve` found it (never what the caller typed). */
export interface TracedTool {
  readonly name: string;
  readonly id: string;
  readonly version: string;
  readonly actionClass: string;
}

export interface CallTracer {
  /**
   * Starts a call's span under the caller's context (a new trace when it sent none); `method` is
   * the MCP method the call is (`tools/call`, `resources/read`, `prompts/get`; REST calls are
   * `tools/call` too).
   */
  startCall(origin: TraceOrigin | undefined, sessionId: string, method: string): CallSpan;
}

export interface CallSpan {
  /** The trace id (32 hex): the audit records of the call carry it. */
  readonly traceId: string;
  /** Names the resolved tool (span name `tools/call {tool}` and its attributes). */
  tool(tool: TracedTool): void;
  /** A child span of a step (`TRACED_STEPS`). */
  step(name: string): ChildSpan;
  /**
   * A client span for the call to an upstream (an MCP server, an HTTP tool) under `parent`; its
   * `traceparent` is what the upstream is sent.
   */
  upstream(
    parent: ChildSpan | null,
    name: string,
    attributes: Readonly<Record<string, string>>,
  ): ChildSpan;
  /** Ends the call's span with the gate's verdict. */
  end(verdict: TracedVerdict | null, error?: string): void;
}

export interface ChildSpan {
  /** The W3C `traceparent` naming this span, for a request it makes. */
  readonly traceparent: string;
  /** Ends the span; `error` (a code or rule, never a message) marks it failed. */
  end(error?: string): void;
}
