/**
 * Raw JSON-RPC over MCP's Streamable HTTP for the OAuth suites, where which token sends each
 * request is the point (a session or run one token opened, used by another): each answer with its
 * status and `WWW-Authenticate` challenge, read from JSON or from the event stream.
 */
import assert from 'node:assert/strict';
import { MODERN_ENVELOPE, postMcp } from '../support/world.js';

export interface Rpc {
  readonly status: number;
  readonly challenge: string | null;
  readonly body: {
    result?: {
      tools?: { name: string }[];
      isError?: boolean;
      _meta?: Record<string, unknown>;
      [field: string]: unknown;
    };
    error?: { code?: number; data?: { code?: string; details?: unknown } };
  };
  readonly session: string | null;
}

/** A raw POST to `base`/mcp as `token`, its JSON-RPC answer read from JSON or the event stream. */
export async function rpc(
  base: string,
  token: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<Rpc> {
  const res = await postMcp(base, body, token, headers);
  const text = await res.text();
  const json = (res.headers.get('content-type') ?? '').includes('text/event-stream')
    ? (text
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => JSON.parse(l.slice(6)) as Rpc['body'] & { id?: unknown })
        .find((m) => m.id !== undefined) ?? {})
    : text
      ? (JSON.parse(text) as Rpc['body'])
      : {};
  return {
    status: res.status,
    challenge: res.headers.get('www-authenticate'),
    body: json,
    session: res.headers.get('mcp-session-id'),
  };
}

/**
 * A session-era MCP session (`version`, 2025-06-18 unless named) `token` opens at `base`: its
 * requests, as whichever token sends them.
 */
export async function rpcSession(base: string, token: string, version = '2025-06-18') {
  const opened = await rpc(
    base,
    token,
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: version,
        capabilities: {},
        clientInfo: { name: 'raw', version: '1' },
      },
    },
    {},
  );
  assert.equal(opened.status, 200);
  const session = opened.session ?? '';
  const headers = { 'mcp-session-id': session, 'mcp-protocol-version': version };
  await rpc(base, token, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  let id = 10;
  const request = (as: string, method: string, params?: unknown) =>
    rpc(base, as, { jsonrpc: '2.0', id: id++, method, ...(params ? { params } : {}) }, headers);
  return {
    request,
    list: (as: string) => request(as, 'tools/list'),
    call: (as: string, params: unknown) => request(as, 'tools/call', params),
  };
}

/** A raw 2026-07-28 request to `base`/mcp as `token`, in the run `run` when one is named. */
export function modernRpc(
  base: string,
  token: string,
  method: string,
  params: Record<string, unknown>,
  run?: string,
): Promise<Rpc> {
  const meta = { ...MODERN_ENVELOPE, ...(run ? { 'io.toolgate/run': run } : {}) };
  const name = params.name ?? params.uri;
  return rpc(
    base,
    token,
    { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: meta } },
    {
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
    },
  );
}
