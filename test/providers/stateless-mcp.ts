/**
 * @module A real MCP server behind a test's own HTTP(S) listener, as the HTTP provider suites
 * run one: a fresh server and transport per request.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/** The `remote` server of one tool, `lookup`: a record by its key. */
export function lookupServer(): McpServer {
  const server = new McpServer({ name: 'remote', version: '1.0.0' });
  server.registerTool(
    'lookup',
    { description: 'Look up a record by key.', inputSchema: { key: z.string() } },
    async ({ key }) => ({ content: [{ type: 'text', text: `record ${key}` }] }),
  );
  return server;
}

/**
 * Answers one Streamable HTTP request with a server of its own from `make` (stateless, as the
 * SDK's examples do); `onBody` sees the request's text first.
 */
export function serveStatelessMcp(
  req: IncomingMessage,
  res: ServerResponse,
  make: () => McpServer,
  onBody: (text: string) => void = () => {},
): void {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', async () => {
    const text = Buffer.concat(chunks).toString('utf8');
    onBody(text);
    const mcp = make();
    const transport = new StreamableHTTPServerTransport({});
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, text ? JSON.parse(text) : undefined);
  });
}
