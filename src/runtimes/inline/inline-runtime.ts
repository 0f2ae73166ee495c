/**
 * @module The `inline` runtime (docs/architecture.md §4): runs a built-in tool's registered
 * in-process handler. Handlers are trusted code shipped with the gateway: they get the checked
 * arguments only (no credential, no network lease) and are not held to a wall time, since a
 * deadline cannot stop synchronous JavaScript.
 */
import type { ToolDefinition } from '../../catalog/index.js';
import {
  type RuntimeContext,
  type RuntimeResult,
  runtimeFailure,
  type ToolRuntime,
} from '../tool-runtime.js';
import type { InlineExecutor } from './inline-executor.js';

export class InlineRuntime implements ToolRuntime {
  readonly kind = 'inline';
  readonly #executor: InlineExecutor;

  constructor(executor: InlineExecutor) {
    this.#executor = executor;
  }

  async run(
    def: ToolDefinition,
    args: Record<string, unknown>,
    _context: RuntimeContext,
  ): Promise<RuntimeResult> {
    const handler =
      def.runtime.kind === 'inline' ? this.#executor.handler(def.runtime.handler) : undefined;
    if (!handler) {
      // Never run a tool with less isolation than it asks for: no handler here, no run.
      return runtimeFailure(
        'EXECUTION_FAILED',
        'runtime.unavailable',
        `the ${def.runtime.kind} runtime is not available on this gateway`,
      );
    }
    try {
      return { ok: true, output: await handler(args) };
    } catch {
      // What the handler threw is not the caller's to see.
      return runtimeFailure('EXECUTION_FAILED', 'execute.error', 'the tool failed');
    }
  }
}
