/**
 * @module Request metrics of the HTTP port (C16): HTTP requests by route pattern, method and
 * outcome; MCP requests by JSON-RPC method and outcome; admission refusals by the cap that
 * refused. Every label is bounded here, whatever a client sends: a method or a JSON-RPC method
 * outside the known set is `other`, an unmatched path is `unmatched` (the front passes the route
 * pattern, never the URL), a reason outside the caps' closed set is `other`, and past
 * MAX_ROUTES distinct route patterns further ones are `other` — a safety net, since patterns are
 * the server's own.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import type { CapDetails } from '../../core/index.js';

const HTTP_METHODS: ReadonlySet<string> = new Set([
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'OPTIONS',
]);

/**
 * JSON-RPC methods of both MCP eras that clients send, plus the front's own names for a batch, a
 * client's response (no method) and a body not read (refused first, or not JSON): `unknown`.
 */
const MCP_METHODS: ReadonlySet<string> = new Set([
  'initialize',
  'ping',
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/roots/list_changed',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
  'subscriptions/listen',
  'server/discover',
  'batch',
  'response',
  'unknown',
]);

/** Every cap a refusal can name (CapDetails['limit']); the compiler keeps the list complete. */
const CAP_LIMITS = [
  'sessions_per_agent',
  'sessions_per_user',
  'mcp_sessions',
  'in_flight',
  'in_flight_per_caller',
  'in_flight_per_agent',
  'in_flight_per_user',
  'streams_per_agent',
  'streams_per_user',
  'waits_per_agent',
  'waits_per_user',
  'queue',
  'event_loop',
] as const satisfies readonly CapDetails['limit'][];
type Unlisted = Exclude<CapDetails['limit'], (typeof CAP_LIMITS)[number]>;
const complete: [Unlisted] extends [never] ? true : Unlisted = true;
void complete;
const CAPS: ReadonlySet<string> = new Set(CAP_LIMITS);

/** Distinct route patterns labelled before further ones count as `other`. */
const MAX_ROUTES = 512;

/** Seconds: from a fast probe to a slow tool call or an approval wait. */
const BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The status class of a response, or `aborted` (0) when the client left before it was sent. */
function outcomeOf(status: number): string {
  if (status === 0) return 'aborted';
  const cls = Math.trunc(status / 100);
  return cls >= 1 && cls <= 5 ? `${cls}xx` : 'other';
}

export class RequestMetrics {
  readonly #http: Counter<'route' | 'method' | 'outcome'>;
  readonly #httpSeconds: Histogram<'route' | 'method' | 'outcome'>;
  readonly #mcp: Counter<'method' | 'outcome'>;
  readonly #mcpSeconds: Histogram<'method' | 'outcome'>;
  readonly #refusals: Counter<'reason'>;
  readonly #routes = new Set<string>();

  constructor(registry: Registry) {
    const registers = [registry];
    this.#http = new Counter({
      name: 'toolgate_http_requests_total',
      help: 'HTTP requests answered, by route pattern (unmatched for none), method and outcome (status class, or aborted)',
      labelNames: ['route', 'method', 'outcome'],
      registers,
    });
    this.#httpSeconds = new Histogram({
      name: 'toolgate_http_request_duration_seconds',
      help: 'Time from a request’s arrival to the end of its answer, by route pattern, method and outcome (streams: their lifetime)',
      labelNames: ['route', 'method', 'outcome'],
      buckets: BUCKETS,
      registers,
    });
    this.#mcp = new Counter({
      name: 'toolgate_mcp_requests_total',
      help: 'MCP messages POSTed to /mcp, by JSON-RPC method (other for one outside the known set) and outcome (status class)',
      labelNames: ['method', 'outcome'],
      registers,
    });
    this.#mcpSeconds = new Histogram({
      name: 'toolgate_mcp_request_duration_seconds',
      help: 'Time to answer an MCP message POSTed to /mcp, by JSON-RPC method and outcome',
      labelNames: ['method', 'outcome'],
      buckets: BUCKETS,
      registers,
    });
    this.#refusals = new Counter({
      name: 'toolgate_admission_refusals_total',
      help: 'Requests refused by a cap before any work (429/503 with Retry-After), by the cap: in_flight, queue, event_loop, in_flight_per_*, sessions, streams, waits',
      labelNames: ['reason'],
      registers,
    });
  }

  /** One HTTP request answered (status 0: the client left first). `route` null: no route matched. */
  http(route: string | null, method: string, status: number, seconds: number): void {
    const labels = {
      route: this.#route(route),
      method: HTTP_METHODS.has(method) ? method : 'other',
      outcome: outcomeOf(status),
    };
    this.#http.inc(labels);
    this.#httpSeconds.observe(labels, seconds);
  }

  /** One message POSTed to /mcp; `method` as the front read it (undefined: not read). */
  mcp(method: string | undefined, status: number, seconds: number): void {
    const name = method ?? 'unknown';
    const labels = { method: MCP_METHODS.has(name) ? name : 'other', outcome: outcomeOf(status) };
    this.#mcp.inc(labels);
    this.#mcpSeconds.observe(labels, seconds);
  }

  /** One refusal by a cap, named by its CapDetails `limit`. */
  refused(limit: string): void {
    this.#refusals.inc({ reason: CAPS.has(limit) ? limit : 'other' });
  }

  #route(route: string | null): string {
    if (route === null) return 'unmatched';
    if (this.#routes.has(route)) return route;
    if (this.#routes.size >= MAX_ROUTES) return 'other';
    this.#routes.add(route);
    return route;
  }
}
