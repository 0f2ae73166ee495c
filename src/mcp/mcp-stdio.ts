/**
 * @module toolgate as an MCP server over stdio for a local agent (`toolgate mcp`). The agent key
 * is checked once at start; the process then serves one gate session until stdin closes. stdout
 * carries only JSON-RPC: anything for people goes to stderr.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ToolgateError } from '../core/index.js';
import type { Toolgate } from '../toolgate.js';
import { bindingOf, createGatewayServer } from './gateway-server.js';
import { ListChangedWatcher } from './list-changed.js';

export interface McpStdioOptions {
  readonly version: string;
  readonly token: string;
  readonly log: (line: string) => void;
}

/** Serves until the client closes stdin; resolves after the gate session is closed. */
export async function serveMcpStdio(
  tg: Pick<Toolgate, 'agent'>,
  options: McpStdioOptions,
): Promise<void> {
  // The agent API only: this front opens, uses and closes one agent's session.
  const { agent } = tg;
  const identity = await agent.authenticate(options.token);
  if (!identity) {
    throw new ToolgateError('UNAUTHENTICATED', 'the agent key or JWT is not valid', {});
  }
  const gateSession = await agent.sessions.open(identity.agentId, {
    ...(identity.user ? { tokenUser: identity.user } : {}),
    credential: identity.credential,
  });
  const binding = bindingOf(identity, gateSession.id);
  const server = createGatewayServer(agent, binding, {
    version: options.version,
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
  process.stdin.once('end', () => void server.close());
  watcher.start();
  options.log(
    `toolgate mcp: serving agent ${identity.agentId} (session ${gateSession.id}) on stdio`,
  );
  await closed;
  watcher.stop();
  await agent.sessions.close(binding.sessionId, binding).catch(() => {});
}
