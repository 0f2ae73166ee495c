/**
 * @module The `inline` runtime (docs/architecture.md §4): runs a built-in tool's registered
 * in-process handler. Handlers are trusted code shipped with the gateway: they get the checked
 * arguments only (no credential, no network lease) and are not held to a wall time, since a
 * deadline cannot stop synchronous JavaScript.
 */
import type { ToolDefinition } from '../../../domain/catalog/index.js';
import {
  type RuntimeContext,
  type RuntimeResult,
  runtimeFailure,
  type ToolRuntime,
} from '../tool-runtime.js';
import type { InlineExecutor } from './inline-executor.js';

/** Handler names the gateway reserves for its own built-in tools. */
export const BUILTIN_PREFIX = 'toolgate.';

export class InlineRuntime implements ToolRuntime {
  readonly kind = 'inline';
  readonly #executor: InlineExecutor;
  readonly #builtins: InlineExecutor | null;

  /**
   * `builtins`: the gateway's own handlers (names under `toolgate.`, e.g. agent discovery),
   * looked up first, so a caller's executor cannot stand in for one.
   */
  constructor(executor: InlineExecutor, builtins: InlineExecutor | null = null) {
    this.#executor = executor;
    this.#builtins = builtins;
  }

  async run(
    def: ToolDefinition,
    args: Record<string, unknown>,
    context: RuntimeContext,
  ): Promise<RuntimeResult> {
    const name = def.runtime.kind === 'inline' ? def.runtime.handler : undefined;
    const handler =
      name === undefined
        ? undefined
        : name.startsWith(BUILTIN_PREFIX)
          ? this.#builtins?.handler(name)
          : this.#executor.handler(name);
    if (!handler) {
      // Never run a tool with less isolation than it asks for: no handler here, no run.
      return runtimeFailure(
        'EXECUTION_FAILED',
        'runtime.unavailable',
        `the ${def.runtime.kind} runtime is not available on this gateway`,
      );
    }
    try {
      return {
        ok: true,
        output: await handler(args, {
          callId: context.callId,
          sessionId: context.sessionId,
          agentId: context.agentId,
          userId: context.userId,
          ...(context.tokenCapabilities ? { tokenCapabilities: context.tokenCapabilities } : {}),
        }),
      };
    } catch {
      // What the handler threw is not the caller's to see.
      return runtimeFailure('EXECUTION_FAILED', 'execute.error', 'the tool failed');
    }
  }
}
