/**
 * The load generator of bench/edge.ts, in a process of its own so that it never shares the
 * gateway's event loop (nor the in-process figures' one). Driven over IPC: each message names a
 * path, a number of clients and a duration; each client is one undici `Client` (one keep-alive
 * connection, one request in flight), closed loop. Answers with calls/s, p50, p99 and the
 * generator's own CPU time.
 *
 *   forked by bench/edge.ts; not run by hand
 */
import { performance } from 'node:perf_hooks';
import { Client } from 'undici';

export type Path = 'healthz' | 'rest' | 'mcp_2026' | 'mcp_2025';

export interface LoadRequest {
  readonly path: Path;
  readonly base: string;
  readonly key: string;
  readonly clients: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
}

export interface LoadFigures {
  readonly clients: number;
  readonly calls: number;
  readonly calls_per_s: number;
  readonly p50_ms: number;
  readonly p99_ms: number;
  readonly errors: number;
  /** CPU the generator itself spent per second of the measurement (1.0 = one core). */
  readonly generator_cpu: number;
  readonly first_error?: string;
}

const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';
const RUN_META = 'io.toolgate/run';
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'bench-edge', version: '1' },
};
const ARGS = { ticket_id: 'T-1042', label: 'bug' };

interface Reply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

async function send(
  client: Client,
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<Reply> {
  const res = await client.request({
    method,
    path,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

/** A JSON-RPC answer, whether it came as JSON or as one SSE `data:` line. */
function rpcResult(reply: Reply): Record<string, unknown> {
  let text = reply.text;
  if (String(reply.headers['content-type'] ?? '').startsWith('text/event-stream')) {
    const data = text.split('\n').find((l) => l.startsWith('data: '));
    text = data ? data.slice(6) : '';
  }
  const msg = JSON.parse(text) as { result?: Record<string, unknown>; error?: unknown };
  if (reply.status !== 200 || !msg.result || msg.result.isError) {
    throw new Error(`status ${reply.status}: ${reply.text.slice(0, 300)}`);
  }
  return msg.result;
}

/** One client: its connection, its setup (session, run, MCP session) and its call. */
interface Caller {
  call(i: number): Promise<void>;
  close(): Promise<void>;
}

async function caller(req: LoadRequest): Promise<Caller> {
  const client = new Client(req.base, { pipelining: 1, keepAliveTimeout: 60_000 });
  const auth = { authorization: `Bearer ${req.key}` };
  const json = { ...auth, 'content-type': 'application/json' };
  const mcp = { ...json, accept: 'application/json, text/event-stream' };
  const close = () => client.close();
  switch (req.path) {
    case 'healthz':
      return {
        async call() {
          const r = await send(client, 'GET', '/healthz', {});
          if (r.status !== 200) throw new Error(`healthz ${r.status}`);
        },
        close,
      };
    case 'rest': {
      const opened = await send(client, 'POST', '/v1/sessions', json, {});
      if (opened.status !== 201) throw new Error(`session: ${opened.status} ${opened.text}`);
      const { id } = JSON.parse(opened.text) as { id: string };
      const path = `/v1/sessions/${id}/calls`;
      return {
        async call() {
          const r = await send(client, 'POST', path, json, { tool: 'add_label', arguments: ARGS });
          if (r.status !== 200) throw new Error(`rest ${r.status}: ${r.text.slice(0, 300)}`);
        },
        async close() {
          await send(client, 'DELETE', `/v1/sessions/${id}`, auth).catch(() => undefined);
          await client.close();
        },
      };
    }
    case 'mcp_2026': {
      const headers = {
        ...mcp,
        'mcp-protocol-version': MODERN,
        'mcp-method': 'tools/call',
        'mcp-name': 'add_label',
      };
      let run: string | undefined;
      return {
        async call(i) {
          const meta = run ? { ...ENVELOPE, [RUN_META]: run } : ENVELOPE;
          const result = rpcResult(
            await send(client, 'POST', '/mcp', headers, {
              jsonrpc: '2.0',
              id: i,
              method: 'tools/call',
              params: { name: 'add_label', arguments: ARGS, _meta: meta },
            }),
          );
          const given = (result._meta as Record<string, unknown> | undefined)?.[RUN_META];
          if (run === undefined && typeof given === 'string') run = given;
        },
        close,
      };
    }
    case 'mcp_2025': {
      const init = await send(client, 'POST', '/mcp', mcp, {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: {
          protocolVersion: LEGACY,
          capabilities: {},
          clientInfo: { name: 'bench-edge', version: '1' },
        },
      });
      rpcResult(init);
      const session = String(init.headers['mcp-session-id'] ?? '');
      if (!session) throw new Error('no Mcp-Session-Id');
      const headers = { ...mcp, 'mcp-session-id': session, 'mcp-protocol-version': LEGACY };
      const note = await send(client, 'POST', '/mcp', headers, {
        jsonrpc: '2.0',
        method: 'notifications/initialized',
      });
      if (note.status !== 202) throw new Error(`initialized: ${note.status} ${note.text}`);
      return {
        async call(i) {
          rpcResult(
            await send(client, 'POST', '/mcp', headers, {
              jsonrpc: '2.0',
              id: i + 1,
              method: 'tools/call',
              params: { name: 'add_label', arguments: ARGS },
            }),
          );
        },
        async close() {
          await send(client, 'DELETE', '/mcp', headers).catch(() => undefined);
          await client.close();
        },
      };
    }
  }
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

export async function load(req: LoadRequest): Promise<LoadFigures> {
  const callers = await Promise.all(Array.from({ length: req.clients }, () => caller(req)));
  let errors = 0;
  let firstError: string | undefined;
  const times: number[] = [];
  let seq = 0;
  const loop = async (c: Caller, until: number, record: boolean) => {
    while (performance.now() < until) {
      const t0 = performance.now();
      try {
        await c.call(seq++);
        if (record) times.push(performance.now() - t0);
      } catch (err) {
        errors++;
        firstError ??= err instanceof Error ? err.message : String(err);
        if (errors > 100) throw err;
      }
    }
  };
  try {
    const warm = performance.now() + req.warmupSeconds * 1000;
    await Promise.all(callers.map((c) => loop(c, warm, false)));
    errors = 0;
    const cpu0 = process.cpuUsage();
    const start = performance.now();
    const until = start + req.seconds * 1000;
    await Promise.all(callers.map((c) => loop(c, until, true)));
    const elapsed = (performance.now() - start) / 1000;
    const cpu = process.cpuUsage(cpu0);
    times.sort((a, b) => a - b);
    return {
      clients: req.clients,
      calls: times.length,
      calls_per_s: Math.round(times.length / elapsed),
      p50_ms: r3(quantile(times, 0.5)),
      p99_ms: r3(quantile(times, 0.99)),
      errors,
      generator_cpu: r3((cpu.user + cpu.system) / 1e6 / elapsed),
      ...(firstError ? { first_error: firstError } : {}),
    };
  } finally {
    await Promise.all(callers.map((c) => c.close().catch(() => undefined)));
  }
}

if (process.send) {
  process.on('message', (msg: LoadRequest) => {
    load(msg).then(
      (figures) => process.send?.({ ok: true, figures }),
      (err: unknown) =>
        process.send?.({ ok: false, error: err instanceof Error ? err.stack : String(err) }),
    );
  });
  process.send({ ready: true });
}
