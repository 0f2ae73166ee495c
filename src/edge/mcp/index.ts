/**
 * @module The MCP front (C15): toolgate as an MCP server over Streamable HTTP and stdio.
 * Anything exported here is public API.
 */
export { createGatewayServer, type McpBinding } from './gateway-server.js';
export { type McpHttpOptions, registerMcpHttp } from './mcp-http.js';
export { type McpStdioOptions, serveMcpStdio } from './mcp-stdio.js';
export { type OriginPolicy, originPolicy } from './origin-guard.js';
export { toolResult, upstreamResult } from './result-shape.js';
export { rpcMethodOf } from './rpc-method.js';
