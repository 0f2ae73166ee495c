/**
 * @module Wires execution (docs/architecture.md §4): the sandbox drivers and the egress proxy,
 * upstream MCP providers, and one runtime per kind behind the `ToolRuntime` port. Command tools
 * never run unsandboxed and reach the network only through the proxy.
 */

import type { CatalogService } from '../domain/catalog/index.js';
import { DISCOVER_TOOLS_HANDLER } from '../domain/catalog/index.js';
import type { AgentDiscovery, SessionService } from '../domain/sessions/index.js';
import { ProviderService, UpstreamPool } from '../execution/providers/index.js';
import {
  CommandRuntime,
  demoExecutor,
  HttpRuntime,
  HttpToolRunner,
  InlineExecutor,
  InlineRuntime,
  McpRuntime,
  runtimeRegistry,
} from '../execution/runtimes/index.js';
import { EgressProxy, SandboxService } from '../execution/sandbox/index.js';
import type { Store } from '../records/store/index.js';
import { clockOf, type ToolgateOptions } from './toolgate-options.js';

export type SandboxWing = ReturnType<typeof wireSandbox>;
export type ExecutionWing = ReturnType<typeof wireRuntimes>;

/**
 * The sandbox, which no sandboxed process may see the gateway's own files through (the data
 * folder and token files the caller names, the SQLite database with its -wal, -shm and -journal
 * files), and the egress proxy with the http runtime.
 */
export function wireSandbox(options: ToolgateOptions, store: Store) {
  const sandbox = options.sandbox ?? new SandboxService();
  sandbox.protectedPaths.add([...(options.protectedPaths ?? []), ...store.files]);
  const egress = options.egress ?? { proxy: new EgressProxy(), http: new HttpToolRunner() };
  return { sandbox, egress };
}

export function wireRuntimes(
  options: ToolgateOptions,
  store: Store,
  parts: {
    readonly domain: { readonly catalog: CatalogService };
    readonly host: SandboxWing;
    readonly sessions: {
      readonly sessions: SessionService;
      readonly agentDiscovery: AgentDiscovery;
    };
  },
) {
  const { catalog } = parts.domain;
  const { sandbox, egress } = parts.host;
  const { sessions, agentDiscovery } = parts.sessions;
  const onError = options.providers?.onError;
  // Upstream MCP processes per gate session: administration (refresh, a changed spec) closes them
  // by provider, the mcp runtime calls through them and closes them with their session.
  const upstreams = new UpstreamPool({
    ...(options.providers?.maxLive !== undefined ? { maxLive: options.providers.maxLive } : {}),
    ...(onError ? { onError } : {}),
  });
  const providers = new ProviderService(store, catalog, sandbox, upstreams, {
    ...clockOf(options),
    ...(onError ? { onError } : {}),
    ...(options.providers?.http ? { http: options.providers.http } : {}),
  });
  const mcp = new McpRuntime(providers, upstreams);
  sessions.onClose((sessionId) => void mcp.closeSession(sessionId));
  // The built-in discovery tool runs agent discovery for the session the gate admitted the call in.
  const builtins = new InlineExecutor().register(DISCOVER_TOOLS_HANDLER, (args, call) =>
    agentDiscovery.forGatedCall(call.sessionId, args, call.tokenCapabilities ?? null),
  );
  const runtimes = runtimeRegistry(
    new InlineRuntime(options.executor ?? demoExecutor(), builtins),
    new CommandRuntime(sandbox, egress.proxy),
    new HttpRuntime(egress.http),
    mcp,
  );
  return { upstreams, providers, runtimes };
}
