/**
 * @module toolgate as an MCP server over stdio for a local agent (`toolgate mcp`). The agent key
 * is checked at start and again before every request (live-agent.ts). The client's first message
 * chooses the era, as the versioning rules say: an `initialize` (or any message without a `_meta` envelope) is the 2025 session protocol,
 * served with one gate session until stdin closes; a 2026-07-28 message is served by the v2
 * SDK's stdio entry, statelessly, with runs (run-meta.ts); its `subscriptions/listen` streams hear
 * of catalog and grant changes. stdout carries only JSON-RPC:
 * anything for people goes to stderr.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { classifyInboundRequest, type Server } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import type { AgentApi } from '../../api/index.js';
import { type AgentPrincipal, ToolgateError } from '../../core/index.js';
import type { Toolgate } from '../../host/toolgate.js';
import { bindingOf, createGatewayServer } from './gateway-server.js';
import { ListChangedWatcher, watchRevisions } from './list-changed.js';
import { permittedSetOf } from './listen-streams.js';
import { liveAgentApi } from './live-agent.js';
import { createModernServer } from './modern-server.js';
import { DefaultRuns } from './run-meta.js';

export interface McpStdioOptions {
  readonly version: string;
  readonly token: string;
  readonly log: (line: string) => void;
  /** `ttlMs` on 2026-07-28 tools/list results. */
  readonly listTtlMs?: number;
  /**
   * How long a call (a round, on 2026-07-28) that waits for approval is held for its decision
   * (approval-hold.ts; no standing-wait bound here: the pipe is one principal's own). Default 45 s.
   */
  readonly approvalWaitMs?: number;
}

const DEFAULT_LIST_TTL_MS = 5_000;

/**
 * Reads stdin up to the end of the first message and puts it back, so the transport chosen for
 * the era reads it as if nothing had looked. Resolves with the first message, or null at EOF.
 */
function firstMessage(): Promise<unknown> {
  return new Promise((resolve) => {
    let buf = Buffer.alloc(0);
    const done = (value: unknown) => {
      process.stdin.off('data', onData);
      process.stdin.off('end', onEnd);
      process.stdin.pause();
      if (buf.length > 0) process.stdin.unshift(buf);
      resolve(value);
    };
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const nl = buf.indexOf(10);
      if (nl < 0) return;
      try {
        done(JSON.parse(buf.subarray(0, nl).toString('utf8')));
      } catch {
        done(undefined);
      }
    };
    const onEnd = () => done(null);
    process.stdin.on('data', onData);
    process.stdin.once('end', onEnd);
  });
}

/**
 * Resumes stdin once the chosen transport listens: a stream paused on purpose does not flow again
 * when a listener is added, and flowing with none would drop the first message.
 */
async function resumeWhenHeard(): Promise<void> {
  while (process.stdin.listenerCount('data') === 0) {
    await new Promise((resolve) => setImmediate(resolve));
  }
  process.stdin.resume();
}

/** Serves until the client closes stdin; resolves after the gate session is closed. */
export async function serveMcpStdio(
  tg: Pick<Toolgate, 'agent'>,
  options: McpStdioOptions,
): Promise<void> {
  // The agent API only: this front opens, uses and closes one agent's session; every request
  // proves the credential again (live-agent.ts), as an HTTP request does.
  const agent = liveAgentApi(tg.agent, options.token);
  const identity = await tg.agent.authenticate(options.token);
  if (!identity) {
    throw new ToolgateError('UNAUTHENTICATED', 'the agent key or JWT is not valid', {});
  }
  const first = await firstMessage();
  if (first === null) return;
  if (
    first !== undefined &&
    classifyInboundRequest({ httpMethod: 'POST', body: first }).kind !== 'legacy'
  ) {
    await serveModern(agent, identity, options);
    return;
  }
  const gateSession = await agent.sessions.open(identity);
  const binding = bindingOf(identity, gateSession.id);
  const server = createGatewayServer(agent, binding, {
    version: options.version,
    ...(options.approvalWaitMs !== undefined ? { approvalWaitMs: options.approvalWaitMs } : {}),
    onError: (err) => options.log(`toolgate mcp: tool call failed: ${String(err)}`),
  });
  const watcher = new ListChangedWatcher(
    agent,
    () => [{ server, binding }],
    (err) => options.log(`toolgate mcp: list_changed refresh failed: ${String(err)}`),
  );
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  const transport = new StdioServerTransport();
  await server.connect(transport);
  await resumeWhenHeard();
  process.stdin.once('end', () => void server.close());
  watcher.start();
  options.log(
    `toolgate mcp: serving agent ${identity.agentId} (session ${gateSession.id}) on stdio`,
  );
  await closed;
  watcher.stop();
  // Closed as the principal it was opened by, whether or not its credential still holds.
  await tg.agent.sessions.close(binding.sessionId, binding.principal).catch(() => {});
}

/** The 2026-07-28 era on stdio: one principal, its default run unless a request names another. */
async function serveModern(
  agent: AgentApi,
  principal: AgentPrincipal,
  options: McpStdioOptions,
): Promise<void> {
  const runs = new DefaultRuns(agent, { via: 'mcp-stdio' });
  // The connection's one principal: every request on it is theirs.
  const caller = { principal, runs: runs.for(principal) };
  const closed = new Promise<void>((resolve) => {
    process.stdin.once('end', () => resolve());
    process.stdin.once('close', () => resolve());
  });
  // The instance serving this connection: a catalog or grant change is sent through it, and the
  // SDK's stdio entry routes it onto the client's open `subscriptions/listen` streams.
  let served: Server | null = null;
  const handle = serveStdio(
    () => {
      served = createModernServer(agent, () => caller, {
        version: options.version,
        listTtlMs: options.listTtlMs ?? DEFAULT_LIST_TTL_MS,
        ...(options.approvalWaitMs !== undefined ? { approvalWaitMs: options.approvalWaitMs } : {}),
        onError: (err) => options.log(`toolgate mcp: tool call failed: ${String(err)}`),
      });
      return served;
    },
    {
      // The era is chosen already: this connection speaks 2026-07-28.
      legacy: 'reject',
      onerror: (err) => options.log(`toolgate mcp: ${String(err)}`),
    },
  );
  // Before the first message is read: a change after the client's listen is never the baseline.
  // Only a change of this principal's own set is announced (listen-streams.ts).
  let set = await permittedSetOf(agent, runs, principal);
  const watch = await watchRevisions(
    agent,
    async () => {
      const now = await permittedSetOf(agent, runs, principal);
      if (now === null || now === set) return;
      set = now;
      await served?.sendToolListChanged();
    },
    (err) => options.log(`toolgate mcp: list_changed failed: ${String(err)}`),
  );
  await resumeWhenHeard();
  options.log(`toolgate mcp: serving agent ${principal.agentId} (2026-07-28, runs) on stdio`);
  await closed;
  watch.stop();
  await handle.close().catch(() => {});
}
