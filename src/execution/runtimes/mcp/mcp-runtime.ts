/**
 * @module The `mcp` runtime (docs/architecture.md §4; C15): forwards an imported tool's call to its
 * upstream provider as tools/call, in the upstream process (or HTTP connection) kept for this
 * gate session in the upstream pool: the tool's wall time, the session's egress budget, progress
 * relayed, cancellation forwarded, and the upstream's structured content checked against the
 * tool's output schema. Provider administration (register, refresh, classify) is src/execution/providers'.
 */
import {
  expandTemplate,
  type McpEntry,
  type ToolDefinition,
} from '../../../domain/catalog/index.js';
import {
  DEFAULT_IDLE_TIMEOUT_MS,
  type EgressMeter,
  type EgressRefused,
  entryPinKey,
  launchHash,
  type ProviderSpec,
  type UpstreamLink,
  type UpstreamPool,
  type UpstreamRequest,
  workspaceOverlapProblems,
} from '../../providers/index.js';
import {
  type RuntimeContext,
  type RuntimeResult,
  runtimeFailure,
  type ToolRuntime,
} from '../tool-runtime.js';

/**
 * Provider connections whose egress meter is kept (each a few bytes; they go when their session
 * closes). Past this the oldest is dropped, and a connection still holding it then charges nothing
 * until it is reopened: far above any live session count, it bounds memory only.
 */
const MAX_METERS = 100_000;

/** What the runtime needs of the providers' side: specs, links to them, and pin changes noted. */
export interface ProviderLinks {
  /**
   * A provider's registered spec, one object per stored spec until it changes (a session's process
   * is kept only for calls under the object it was started with); rejects when there is none.
   */
  spec(name: string): Promise<ProviderSpec>;
  /** Opens one link to the provider, its bytes charged to `meter`. */
  launch(spec: ProviderSpec, meter: EgressMeter | null): Promise<UpstreamLink>;
  /** The upstream's listing changed under a running process (a rug pull): record it. */
  pinChanged(provider: string): void;
}

export class McpRuntime implements ToolRuntime {
  readonly kind = 'mcp';
  readonly #links: ProviderLinks;
  readonly #pool: UpstreamPool;
  readonly #meters = new Map<string, EgressMeter>();

  constructor(links: ProviderLinks, pool: UpstreamPool) {
    this.#links = links;
    this.#pool = pool;
  }

  async run(
    def: ToolDefinition,
    args: Record<string, unknown>,
    context: RuntimeContext,
  ): Promise<RuntimeResult> {
    if (def.runtime.kind !== 'mcp') {
      return runtimeFailure('EXECUTION_FAILED', 'runtime.unavailable', 'not an mcp tool', {
        outcome: 'runtime.unavailable',
      });
    }
    const { provider, tool } = def.runtime;
    let spec: ProviderSpec;
    try {
      spec = await this.#links.spec(provider);
    } catch {
      return runtimeFailure(
        'EXECUTION_FAILED',
        'provider.unknown',
        'the provider of this tool is not registered',
        { outcome: 'provider.unknown' },
      );
    }
    // The tool was classified (and reviewed) for one program: another one behind the provider
    // is not what anyone approved.
    const launch = def.runtime.launch;
    if (launch !== undefined && launch !== launchHash(spec)) {
      return runtimeFailure(
        'EXECUTION_FAILED',
        'provider.changed',
        'the provider now runs another program than the one this tool was classified for; classify it again',
        { outcome: 'provider.changed' },
      );
    }
    // A provider stored before its workspace was checked against its program: never started
    // with a workspace that holds what it runs (provider-spec.ts refuses one now).
    if (workspaceOverlapProblems(spec).length > 0) {
      return runtimeFailure(
        'EXECUTION_FAILED',
        'provider.workspace_overlap',
        "the provider's writable workspace holds its program; change the provider",
        { outcome: 'provider.workspace_overlap' },
      );
    }
    const meter = this.#meter(provider, context.sessionId);
    meter.budget = context.budget;
    meter.refusal = null;
    const target = {
      provider,
      sessionId: context.sessionId,
      launch: () => this.#links.launch(spec, meter),
      idleMs: spec.idle_timeout_ms ?? DEFAULT_IDLE_TIMEOUT_MS,
      // A process started under a spec since replaced is not called (upstream-pool.ts).
      spec,
    };
    const relay = {
      ...(context.onProgress ? { onProgress: context.onProgress } : {}),
      ...(context.signal ? { signal: context.signal } : {}),
      ...(context.traceparent ? { traceparent: context.traceparent } : {}),
    };
    const entry = def.runtime.entry;
    const result = entry
      ? await this.#pool.request(
          target,
          entryPinKey(entry.kind, entryKey(entry)),
          def.code_hash,
          context.wallTimeMs,
          relay,
          entryRequest(entry, args),
        )
      : await this.#pool.call(target, tool, args, def.code_hash, context.wallTimeMs, relay);
    if (result.pinMismatch) this.#links.pinChanged(provider);
    if (!result.ok) {
      // Refused on its way out (budget, secret): that is the answer, whatever the client made of
      // it. (Set by the fetch during the call: not the null assigned above.)
      const refused = meter.refusal as EgressRefused | null;
      const { code, rule, message } = refused ?? result;
      return runtimeFailure(code, rule, message, {
        outcome: code === 'CALL_CANCELLED' ? 'cancelled' : rule,
      });
    }
    const r = result.result;
    // An entry's read is passed on as the upstream gave it (its shape is MCP's, not a schema's).
    if (entry) return { ok: true, output: r, outcome: 'ok' };
    // The upstream's structured content is what its output schema speaks of; a tool error result
    // is passed on as the upstream gave it (the model sees the error), never checked.
    if (r.isError !== true && r.structuredContent !== undefined) {
      if (!context.validateOutput(r.structuredContent)) {
        return runtimeFailure(
          'OUTPUT_INVALID',
          'result.schema',
          'the upstream returned structured content that does not match its output schema',
        );
      }
    }
    return { ok: true, output: r, outcome: r.isError === true ? 'tool_error' : 'ok' };
  }

  /** Ends the upstream processes of a gate session (its MCP session closed). */
  closeSession(sessionId: string): Promise<void> {
    for (const key of this.#meters.keys()) {
      if (key.endsWith(`\u0000${sessionId}`)) this.#meters.delete(key);
    }
    return this.#pool.closeSession(sessionId);
  }

  /** The meter of one provider connection of one gate session (kept while the session is). */
  #meter(provider: string, sessionId: string): EgressMeter {
    const key = `${provider}\u0000${sessionId}`;
    let meter = this.#meters.get(key);
    if (!meter) {
      if (this.#meters.size >= MAX_METERS)
        this.#meters.delete(this.#meters.keys().next().value as string);
      meter = { budget: null, refusal: null };
      this.#meters.set(key, meter);
    }
    return meter;
  }
}

/** What the upstream knows an entry by: its URI, URI template or name (its pin's key). */
function entryKey(entry: McpEntry): string {
  switch (entry.kind) {
    case 'resource':
      return entry.uri;
    case 'resource_template':
      return entry.uri_template;
    case 'prompt':
      return entry.name;
  }
}

/**
 * The upstream request of a gated entry read, its answer carried as structured content (the MCP
 * front gives it back as `resources/read` or `prompts/get` results). A template's URI is the one
 * its checked arguments expand to, never a string the agent sent.
 */
function entryRequest(entry: McpEntry, args: Record<string, unknown>): UpstreamRequest {
  switch (entry.kind) {
    case 'resource':
    case 'resource_template': {
      const uri = entry.kind === 'resource' ? entry.uri : expandTemplate(entry.uri_template, args);
      return async (client, options) => {
        if (uri === null) throw new Error('the resource template does not parse');
        const read = await client.readResource({ uri }, options);
        return { content: [], structuredContent: { contents: read.contents } };
      };
    }
    case 'prompt': {
      const strings: Record<string, string> = {};
      for (const [k, v] of Object.entries(args)) if (typeof v === 'string') strings[k] = v;
      return async (client, options) => {
        const got = await client.getPrompt({ name: entry.name, arguments: strings }, options);
        return {
          content: [],
          structuredContent: {
            ...(got.description !== undefined ? { description: got.description } : {}),
            messages: got.messages,
          },
        };
      };
    }
  }
}
