/**
 * @module The probes themselves (C14): a harmless call with the definition's fixed arguments,
 * run by the tool's own runtime (and so its sandbox and egress rules) with the tool's own
 * credential — never an agent's, never an agent's session; a GET of the upstream's health URL
 * through the http runtime's checked dialer (the egress rules: exact host, checked address, no
 * redirect); a listing of an upstream MCP provider (one listing shared by all its tools); and,
 * before any of these, a command tool's `code_hash` against the files on disk (seed §8:
 * "the health monitor validates the hash on each probe"). Never throws: every failure is an
 * outcome with its rule.
 */
import type { ToolDefinition } from '../../domain/catalog/index.js';
import type { CredentialBroker } from '../../domain/credentials/index.js';
import { openUpstream, type ProviderService } from '../../execution/providers/index.js';
import type {
  HttpToolRunner,
  RuntimeRegistry,
  RuntimeResult,
} from '../../execution/runtimes/index.js';
import { commandCodeHash, createByteBudget } from '../../execution/sandbox/index.js';

export type ProbeKind = 'call' | 'http' | 'mcp_list' | 'code_hash';

export type ProbeOutcome =
  | { readonly ok: true; readonly latencyMs: number }
  | {
      readonly ok: false;
      readonly latencyMs: number;
      readonly rule: string;
      readonly message: string;
      /** Set when the code on disk is not the registered code. */
      readonly codeHash?: { readonly expected: string; readonly actual: string };
    };

/** What the monitor asks of a prober (tests and the benchmark may pass their own). */
export interface Prober {
  /** The probe a definition gets, or null: none (its health is passive only). */
  kindOf(def: ToolDefinition): ProbeKind | null;
  probe(def: ToolDefinition, timeoutMs: number): Promise<ProbeOutcome>;
}

export interface ToolProberDependencies {
  readonly runtimes: RuntimeRegistry;
  readonly credentials?: Pick<CredentialBroker, 'forCall'>;
  /** The http runtime's runner (its checked dialer): health URLs go through it. */
  readonly http?: Pick<HttpToolRunner, 'run'>;
  readonly providers?: Pick<ProviderService, 'storedSpec' | 'launch'>;
  /** One provider listing serves every tool of the provider probed within this many ms. */
  readonly listingShareMs?: number;
}

/** The principal a probe runs as: the monitor itself, never an agent. */
export const PROBE_AGENT = 'system:health';
const PROBE_SESSION = 'health-probe';
const PROBE_BYTES = 1_048_576;

export class ToolProber implements Prober {
  readonly #d: ToolProberDependencies;
  readonly #listings = new Map<string, { at: number; result: Promise<Set<string> | string> }>();
  #seq = 0;

  constructor(deps: ToolProberDependencies) {
    this.#d = deps;
  }

  kindOf(def: ToolDefinition): ProbeKind | null {
    if (def.runtime.kind === 'mcp') return this.#d.providers ? 'mcp_list' : null;
    if (def.probe?.kind === 'call') return 'call';
    if (def.probe?.kind === 'http') return 'http';
    if (def.runtime.kind === 'command' && def.code_hash) return 'code_hash';
    return null;
  }

  async probe(def: ToolDefinition, timeoutMs: number): Promise<ProbeOutcome> {
    const started = performance.now();
    const fail = (rule: string, message: string): ProbeOutcome => ({
      ok: false,
      latencyMs: performance.now() - started,
      rule,
      message,
    });
    try {
      if (def.runtime.kind === 'command' && def.code_hash) {
        const actual = commandCodeHash(def.runtime.argv);
        if (actual !== def.code_hash) {
          return {
            ...fail('probe.code_hash_mismatch', 'the code on disk is not the registered code'),
            codeHash: { expected: def.code_hash, actual },
          } as ProbeOutcome;
        }
      }
      const kind = this.kindOf(def);
      let failure: { rule: string; message: string } | null = null;
      const work =
        kind === 'call'
          ? this.#call(def, timeoutMs)
          : kind === 'http'
            ? this.#http(def)
            : kind === 'mcp_list'
              ? this.#listing(def, timeoutMs)
              : Promise.resolve(null);
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<{ rule: string; message: string }>((resolve) => {
        timer = setTimeout(
          () => resolve({ rule: 'probe.timeout', message: `no answer within ${timeoutMs} ms` }),
          timeoutMs,
        );
      });
      try {
        failure = await Promise.race([work, timeout]);
      } finally {
        clearTimeout(timer);
      }
      return failure
        ? fail(failure.rule, failure.message)
        : { ok: true, latencyMs: performance.now() - started };
    } catch {
      return fail('probe.error', 'the probe could not be run');
    }
  }

  /** The definition's own call, with its fixed arguments, through its runtime. */
  async #call(
    def: ToolDefinition,
    timeoutMs: number,
  ): Promise<{ rule: string; message: string } | null> {
    if (def.probe?.kind !== 'call') return { rule: 'probe.none', message: 'no call probe' };
    // Checked against the input schema at registration (validate-definition.ts).
    const args = structuredClone(def.probe.arguments) as Record<string, unknown>;
    const runtime = this.#d.runtimes[def.runtime.kind];
    if (!runtime)
      return { rule: 'runtime.unavailable', message: `no ${def.runtime.kind} runtime here` };
    const callId = `probe_${Date.now().toString(36)}_${(this.#seq++).toString(36)}`;
    let credentials = null;
    if (def.credentials) {
      if (!this.#d.credentials)
        return {
          rule: 'credentials.unavailable',
          message: "the tool's credential is not available",
        };
      try {
        // The tool's own credential, for the monitor: no agent, no user, no subject token.
        credentials = await this.#d.credentials.forCall({
          tool: def,
          userId: null,
          agentId: PROBE_AGENT,
          sessionId: PROBE_SESSION,
          callId,
          credential: null,
        });
      } catch {
        return {
          rule: 'credentials.unavailable',
          message: "the tool's credential is not available",
        };
      }
    }
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    let result: RuntimeResult;
    try {
      result = await runtime.run(def, args, {
        callId,
        sessionId: PROBE_SESSION,
        agentId: PROBE_AGENT,
        userId: null,
        credentials,
        budget: createByteBudget(PROBE_BYTES),
        destinations: new Set<string>(),
        wallTimeMs: Math.min(def.sandbox.limits.wall_time_ms, timeoutMs),
        // A probe asks whether the tool answers; its output shape is checked on live calls.
        validateOutput: () => true,
        signal: controller.signal,
      });
    } finally {
      clearTimeout(timer);
    }
    if (!result.ok) return { rule: result.rule, message: result.message };
    return null;
  }

  /** GET of the health URL under the http runtime's egress rules; 2xx with JSON (or nothing). */
  async #http(def: ToolDefinition): Promise<{ rule: string; message: string } | null> {
    if (def.probe?.kind !== 'http') return { rule: 'probe.none', message: 'no health URL' };
    if (!this.#d.http) return { rule: 'runtime.unavailable', message: 'no http runtime here' };
    const url = new URL(def.probe.url);
    const probeDef: ToolDefinition = {
      ...def,
      input_schema: { type: 'object' },
      output_schema: {},
      runtime: { kind: 'http', base_url: url.origin, method: 'GET', path: url.pathname },
    };
    // No credential: a health URL is asked as the monitor, with nothing of the tool's secrets.
    const r = await this.#d.http.run(probeDef, {}, { budget: createByteBudget(PROBE_BYTES) });
    return r.ok ? null : { rule: r.rule, message: r.message };
  }

  /** The provider listed (one listing shared by its tools); the tool must still be in it. */
  async #listing(
    def: ToolDefinition,
    timeoutMs: number,
  ): Promise<{ rule: string; message: string } | null> {
    if (def.runtime.kind !== 'mcp' || !this.#d.providers)
      return { rule: 'probe.none', message: 'no provider' };
    const provider = def.runtime.provider;
    const now = Date.now();
    let shared = this.#listings.get(provider);
    if (!shared || now - shared.at > (this.#d.listingShareMs ?? 5_000)) {
      shared = { at: now, result: this.#list(provider, timeoutMs) };
      this.#listings.set(provider, shared);
    }
    const listed = await shared.result;
    if (typeof listed === 'string') return { rule: 'probe.provider_unavailable', message: listed };
    if (def.runtime.entry) return null;
    return listed.has(def.runtime.tool)
      ? null
      : { rule: 'probe.provider_tool_missing', message: 'the provider no longer lists this tool' };
  }

  async #list(provider: string, timeoutMs: number): Promise<Set<string> | string> {
    const providers = this.#d.providers;
    if (!providers) return 'no provider';
    try {
      // As stored now: a probe lists the program the provider runs, whoever changed it last.
      const spec = await providers.storedSpec(provider);
      const upstream = await openUpstream(() => providers.launch(spec), timeoutMs);
      try {
        return new Set(upstream.tools.map((t) => t.name));
      } finally {
        await upstream.client.close().catch(() => {});
        await upstream.link.close().catch(() => {});
      }
    } catch {
      return `provider ${provider} could not be started or listed`;
    }
  }
}
