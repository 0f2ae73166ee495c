/**
 * @module One load generator of test/mcp/mcp-load.test.ts, run in a worker thread: it connects
 * its share of SDK clients and calls tools until the deadline, then posts its counts and every
 * answer's wait. Several of them keep the load generator from being the bottleneck on a starved
 * host (one thread driving 200 SDK clients measured its own queueing, not the gateway's).
 *
 * Each client has its own connection pool of two (its standing GET event stream and its POSTs),
 * as an agent in its own process has: clients of one thread sharing one pool made that pool open
 * a fresh connection for every call that found all pooled ones busy, a burst of ~150 at the start
 * of the load, and a saturated Node server accepts one connection per event-loop turn (libuv), so
 * those calls sat unaccepted in the kernel's listen queue for up to the whole run. The test
 * prints how many connections were opened under load: 0 unless keep-alive breaks again.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Agent, fetch as undiciFetch } from 'undici';

export interface LoadJob {
  readonly base: string;
  /** One key per client of this worker. */
  readonly keys: readonly string[];
  /** Index of this worker's first client among all (one client in ten sends a denied call). */
  readonly first: number;
}

/** Sent by the test once every worker is connected: call until then (epoch ms). */
export interface LoadGo {
  readonly end: number;
}

export interface LoadResult {
  readonly counts: { allowed: number; denied: number; shed: number; errors: number };
  readonly waits: number[];
  readonly errors: string[];
  readonly slow: readonly { ms: number; client: number; call: number; at_ms: number }[];
  /** The worst delay of this worker's own event loop, ms: how much of a wait was the client's. */
  readonly clientLagMs: number;
  /** TCP connections the clients opened after the load started (a new one may wait to be accepted). */
  readonly connectsUnderLoad: number;
}

/** One client's own pool: a standing GET stream plus sequential POSTs need two connections. */
function ownPool(onConnect: () => void): { fetch: typeof fetch; close: () => Promise<void> } {
  const agent = new Agent({ connections: 2 });
  agent.on('connect', onConnect);
  return {
    fetch: ((url: string | URL, init?: RequestInit) =>
      undiciFetch(url, {
        ...(init as Parameters<typeof undiciFetch>[1]),
        dispatcher: agent,
      })) as unknown as typeof fetch,
    close: () => agent.close(),
  };
}

/** A refusal by admission control or a cap: immediate, with Retry-After, and structured. */
function shed(err: unknown): boolean {
  return (
    err instanceof StreamableHTTPError &&
    (err.code === 429 || err.code === 503) &&
    /LIMIT_REACHED|OVERLOADED/.test(err.message)
  );
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let connects = 0;
const pools: { close: () => Promise<void> }[] = [];
/** Each client's transport: at the end its session is ended as a polite client ends it (DELETE). */
const transports = new Map<Client, StreamableHTTPClientTransport>();

async function client(base: string, key: string): Promise<Client> {
  // A polite client: when told to come back, it does so after Retry-After (1 s), a few times.
  for (let attempt = 0; ; attempt++) {
    const c = new Client({ name: 'load', version: '1.0.0' });
    const pool = ownPool(() => {
      connects += 1;
    });
    pools.push(pool);
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
      fetch: pool.fetch,
    });
    try {
      await c.connect(transport);
      transports.set(c, transport);
      // The SDK client lists the tools and compiles their output schemas before its first call;
      // done here, that client-side work is not counted as the gateway's wait.
      await c.listTools();
      return c;
    } catch (err) {
      await c.close().catch(() => {});
      if (!shed(err) || attempt >= 30) throw err;
      await sleep(1000);
    }
  }
}

async function drive(job: LoadJob, go: () => Promise<LoadGo>): Promise<LoadResult> {
  const clients: Client[] = [];
  for (let i = 0; i < job.keys.length; i += 10) {
    clients.push(...(await Promise.all(job.keys.slice(i, i + 10).map((k) => client(job.base, k)))));
  }
  const counts = { allowed: 0, denied: 0, shed: 0, errors: 0 };
  const waits: number[] = [];
  const errors: string[] = [];
  /** A few of the slowest answers: which client, its how-manyth call, when it was sent. */
  const slow: { ms: number; client: number; call: number; at_ms: number }[] = [];
  const { end } = await go();
  const t0 = Date.now();
  const connectsBefore = connects;
  const lag = monitorEventLoopDelay({ resolution: 20 });
  lag.enable();
  await Promise.all(
    clients.map(async (c, j) => {
      const i = job.first + j;
      let n = 0;
      while (Date.now() < end) {
        n += 1;
        const started = Date.now();
        try {
          const result = (await c.callTool(
            i % 10 === 0
              ? { name: 'post_webhook', arguments: { url: 'https://evil.example/', payload: {} } }
              : { name: 'load_echo', arguments: {} },
          )) as CallToolResult;
          if (!result.isError) {
            counts.allowed += 1;
          } else {
            // A refusal must be a gate decision (rate limits do refuse under this load), never
            // an unexplained error result.
            counts.denied += 1;
            const meta = result._meta?.['toolgate/decision'] as { code?: string } | undefined;
            if (!meta?.code) {
              counts.errors += 1;
              if (errors.length < 5)
                errors.push(`undecided error result: ${JSON.stringify(result)}`);
            }
          }
        } catch (err) {
          if (shed(err)) {
            // Refused at once: come back after Retry-After, as the answer asked.
            counts.shed += 1;
            waits.push(Date.now() - started);
            await sleep(1000);
            continue;
          }
          counts.errors += 1;
          if (errors.length < 5) errors.push(String(err));
        }
        waits.push(Date.now() - started);
        if (Date.now() - started > 5000 && slow.length < 5)
          slow.push({ ms: Date.now() - started, client: i, call: n, at_ms: started - t0 });
      }
    }),
  );
  lag.disable();
  const connectsUnderLoad = connects - connectsBefore;
  // Ending the sessions lets the test see whether the gateway frees all a session held.
  await Promise.all(
    clients.map((c) =>
      transports
        .get(c)
        ?.terminateSession()
        .catch(() => {}),
    ),
  );
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await Promise.all(pools.map((p) => p.close().catch(() => {})));
  return {
    counts,
    waits,
    errors,
    slow,
    clientLagMs: Math.round(lag.max / 1e6),
    connectsUnderLoad,
  };
}

if (parentPort && workerData) {
  const port = parentPort;
  const go = () =>
    new Promise<LoadGo>((resolve) => {
      port.once('message', (m: LoadGo) => resolve(m));
      port.postMessage({ ready: true });
    });
  drive(workerData as LoadJob, go).then(
    (result) => port.postMessage(result),
    (err: unknown) => port.postMessage({ fatal: String(err) }),
  );
}
