/**
 * @module One lease of the egress proxy: a Unix socket bound into one sandbox run, whose every
 * connection is that run's (identity comes from the socket, never from a header). It forwards
 * absolute-form HTTP requests and CONNECT tunnels under the lease's rules, in this order: request
 * form, host syntax (no IP literal, no userinfo), port, exact-host allow-list, Host header
 * agreement, body size, secret scan (plain HTTP only), byte budget, DNS and address class, and on
 * the way back: no redirect to another host, and the budget on every chunk.
 *
 * A CONNECT tunnel carries TLS the proxy cannot read: there, the host allow-list, the address
 * checks and the byte budget are what apply; the secret scan does not.
 */
import { chmod, chown, unlink } from 'node:fs/promises';
import type net from 'node:net';
import type { Duplex } from 'node:stream';
import { excerpt } from '../../../domain/policy/index.js';
import { http, type IncomingMessage, type Server, type ServerResponse } from '../../node-http.js';
import type { ByteBudget } from './byte-budget.js';
import type { CheckedDialer } from './checked-dialer.js';
import {
  allowDecision,
  denyDecision,
  type EgressAllow,
  type EgressDecision,
  type EgressDeny,
  type EgressRefusal,
  refusal,
} from './egress-decision.js';
import {
  type Authority,
  checkAllowed,
  normalizeAllowList,
  normalizeHostName,
  parseAuthority,
} from './egress-host.js';
import { type LeaseCredential, scanOutbound } from './secret-scan.js';

export interface LeaseOptions {
  readonly leaseId: string;
  readonly sessionId: string;
  readonly toolId: string;
  /** Exact DNS names (lower-case; a trailing dot is folded). No wildcards, no suffixes. */
  readonly allowHosts: readonly string[];
  /** The session's egress budget; shared by the session's leases. */
  readonly byteBudget: ByteBudget;
  /** `both` (default) charges downloads too; `out` only what is sent. */
  readonly budgetCounts?: 'out' | 'both';
  readonly credentials?: readonly LeaseCredential[];
  /** Ports CONNECT may reach; default [443]. */
  readonly connectPorts?: readonly number[];
  /** Ports plain HTTP may reach; default [80]. */
  readonly httpPorts?: readonly number[];
  /** Largest plain-HTTP request body the proxy buffers to scan; default 1 MiB. */
  readonly maxRequestBodyBytes?: number;
  /** A connection silent this long is closed; default 60 s. */
  readonly idleTimeoutMs?: number;
  /** Connections open at once from the sandbox; more are refused. Default 64. */
  readonly maxConnections?: number;
}

export interface LeaseStats {
  readonly leaseId: string;
  readonly sessionId: string;
  readonly toolId: string;
  /** Each distinct `host` → `address` the lease connected to, in first-use order. */
  readonly resolvedHosts: readonly { readonly host: string; readonly address: string }[];
  readonly bytesOut: number;
  readonly bytesIn: number;
  readonly denials: readonly EgressDeny[];
  /** Every decision, oldest first, up to MAX_DECISIONS; `decisionsDropped` counts the rest. */
  readonly decisions: readonly EgressDecision[];
  readonly decisionsDropped: number;
}

export interface EgressLease {
  readonly leaseId: string;
  readonly socketPath: string;
  stats(): LeaseStats;
  /** Stops accepting, cuts every open connection and removes the socket. Idempotent. */
  close(): Promise<void>;
}

export const MAX_DECISIONS = 1_000;
const DEFAULT_MAX_BODY = 1_048_576;
const DEFAULT_IDLE_MS = 60_000;

/** Headers that describe one hop, never forwarded (RFC 9110 §7.6.1), plus proxy credentials. */
const HOP_BY_HOP = new Set([
  'connection',
  'proxy-connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
]);

/** Failures of the network rather than refusals of policy answer 502, the rest 403/429. */
const UPSTREAM_RULES = new Set([
  'egress.dns',
  'egress.upstream_unreachable',
  'egress.upstream_failed',
]);

function statusFor(d: EgressRefusal): number {
  if (d.code === 'BUDGET_EXCEEDED') return 429;
  if (UPSTREAM_RULES.has(d.rule)) return 502;
  if (d.rule === 'egress.body_too_large') return 413;
  return 403;
}

function denialBody(d: EgressRefusal): string {
  return JSON.stringify({ code: d.code ?? 'EGRESS_DENIED', rule: d.rule, message: d.message });
}

function isRedirect(status: number): boolean {
  return status >= 300 && status < 400 && status !== 304;
}

function hopHeaders(connection: string | string[] | undefined): Set<string> {
  const named = new Set(HOP_BY_HOP);
  const values = Array.isArray(connection) ? connection : connection ? [connection] : [];
  for (const v of values) for (const n of v.split(',')) named.add(n.trim().toLowerCase());
  return named;
}

/** Flat [name, value, …] without hop-by-hop headers, in their original order and case. */
function forwardable(raw: readonly string[], connection: string | string[] | undefined): string[] {
  const drop = hopHeaders(connection);
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] ?? '';
    if (!drop.has(name.toLowerCase())) out.push(name, raw[i + 1] ?? '');
  }
  return out;
}

function headBytes(firstLine: string, flat: readonly string[]): number {
  let n = Buffer.byteLength(firstLine) + 4;
  for (let i = 0; i + 1 < flat.length; i += 2) {
    n += Buffer.byteLength(flat[i] ?? '') + Buffer.byteLength(flat[i + 1] ?? '') + 4;
  }
  return n;
}

/** Splits an absolute-form target into raw authority and the path it forwards (no fragment). */
function splitAbsolute(target: string): { authority: string; path: string } {
  const rest = target.slice('http://'.length);
  let end = rest.length;
  for (const d of ['/', '?', '#']) {
    const at = rest.indexOf(d);
    if (at !== -1 && at < end) end = at;
  }
  let path = rest.slice(end);
  const hash = path.indexOf('#');
  if (hash !== -1) path = path.slice(0, hash);
  if (path === '' || path.startsWith('?')) path = `/${path}`;
  return { authority: rest.slice(0, end), path };
}

export class Lease implements EgressLease {
  readonly leaseId: string;
  readonly socketPath: string;
  readonly #o: LeaseOptions;
  readonly #allow: ReadonlySet<string>;
  readonly #dialer: CheckedDialer;
  readonly #clock: () => Date;
  readonly #server: Server;
  readonly #sockets = new Set<Duplex>();
  readonly #decisions: EgressDecision[] = [];
  readonly #denials: EgressDeny[] = [];
  readonly #resolved = new Map<string, { host: string; address: string }>();
  #dropped = 0;
  #bytesOut = 0;
  #bytesIn = 0;
  #closed = false;

  constructor(socketPath: string, options: LeaseOptions, dialer: CheckedDialer, clock: () => Date) {
    this.leaseId = options.leaseId;
    this.socketPath = socketPath;
    this.#o = options;
    this.#allow = normalizeAllowList(options.allowHosts);
    this.#dialer = dialer;
    this.#clock = clock;
    this.#server = http.createServer({ requestTimeout: 60_000, headersTimeout: 30_000 });
    // A run cannot exhaust the gateway's file descriptors through its lease.
    this.#server.maxConnections = options.maxConnections ?? 64;
    this.#server.on('drop', () => {
      this.#deny(refusal('egress.connections', 'too many connections open on this lease'), {});
    });
    this.#server.on('connection', (s: net.Socket) => this.#track(s));
    this.#server.on('request', (req, res) => {
      this.#onRequest(req, res).catch(() => res.destroy());
    });
    this.#server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      this.#onConnect(req, socket, head).catch(() => socket.destroy());
    });
    this.#server.on('upgrade', (req: IncomingMessage, socket: Duplex) => {
      this.#refuseRaw(
        socket,
        refusal('egress.upgrade', 'protocol upgrades are not forwarded'),
        req.method,
      );
    });
    this.#server.on('clientError', (_err, socket: Duplex) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
      else socket.destroy();
    });
  }

  /** Listens with the socket's mode set, and handed to `owner` (the sandbox's user) if given. */
  listen(mode: number, owner?: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(this.socketPath, () => {
        this.#server.removeListener('error', reject);
        chmod(this.socketPath, mode)
          .then(() => (owner === undefined ? undefined : chown(this.socketPath, owner, owner)))
          .then(() => resolve(), reject);
      });
    });
  }

  stats(): LeaseStats {
    return {
      leaseId: this.leaseId,
      sessionId: this.#o.sessionId,
      toolId: this.#o.toolId,
      resolvedHosts: [...this.#resolved.values()],
      bytesOut: this.#bytesOut,
      bytesIn: this.#bytesIn,
      denials: [...this.#denials],
      decisions: this.#decisions.map((d) => ({ ...d })),
      decisionsDropped: this.#dropped,
    };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    for (const s of this.#sockets) s.destroy();
    await closed;
    await unlink(this.socketPath).catch(() => undefined);
  }

  #track(s: Duplex): void {
    this.#sockets.add(s);
    s.once('close', () => this.#sockets.delete(s));
    if ('setTimeout' in s && typeof s.setTimeout === 'function') {
      (s as net.Socket).setTimeout(this.#o.idleTimeoutMs ?? DEFAULT_IDLE_MS, () => s.destroy());
    }
  }

  #record(d: EgressDecision): void {
    if (d.kind === 'deny') this.#denials.push(d);
    if (this.#decisions.length < MAX_DECISIONS) this.#decisions.push(d);
    else this.#dropped += 1;
  }

  #deny(r: EgressRefusal, where: { method?: string; host?: string; address?: string }): void {
    this.#record(denyDecision(r, this.#clock(), where));
  }

  #allowed(where: { method: string; host: string; port: number; address: string }): EgressAllow {
    const d = allowDecision(this.#clock(), where);
    this.#record(d);
    const key = `${where.host} ${where.address}`;
    if (!this.#resolved.has(key)) {
      this.#resolved.set(key, { host: where.host, address: where.address });
    }
    return d;
  }

  /** Charges `n` bytes in one direction; false (and nothing charged) when the budget is short. */
  #charge(dir: 'out' | 'in', n: number, d: EgressAllow): boolean {
    if (dir === 'out' || (this.#o.budgetCounts ?? 'both') === 'both') {
      if (this.#o.byteBudget.remaining() < n) return false;
      this.#o.byteBudget.consume(n);
    }
    if (dir === 'out') {
      this.#bytesOut += n;
      d.bytesOut += n;
    } else {
      this.#bytesIn += n;
      d.bytesIn += n;
    }
    return true;
  }

  #budgetDenial(where: { method?: string; host?: string; address?: string }): EgressRefusal {
    const r = refusal(
      'egress.budget',
      "the session's egress byte budget is spent; the connection was closed",
      'BUDGET_EXCEEDED',
    );
    this.#deny(r, where);
    return r;
  }

  /** Host-level rules shared by both request forms; the target's authority is already parsed. */
  #checkTarget(
    target: { ok: true; value: Authority } | ({ ok: false } & EgressRefusal),
    ports: readonly number[],
    hostHeader: string | undefined,
    hostHeaderCount: number,
    defaultPort: number | undefined,
  ): Authority | EgressRefusal {
    if (this.#closed) return refusal('egress.lease_closed', 'this lease is closed');
    if (!target.ok) return target;
    const { host, port } = target.value;
    if (!ports.includes(port)) {
      return refusal('egress.port', `port ${port} is not allowed for this kind of request`);
    }
    const allowed = checkAllowed(host, this.#allow);
    if (!allowed.ok) return allowed;
    if (hostHeaderCount > 1) {
      return refusal('egress.host_mismatch', 'the request carries more than one Host header');
    }
    if (hostHeader !== undefined) {
      const h = parseAuthority(hostHeader, defaultPort ?? port);
      if (!h.ok || h.value.host !== host || h.value.port !== port) {
        return refusal(
          'egress.host_mismatch',
          `the Host header ${excerpt(hostHeader)} does not name the request target ${excerpt(host)}`,
        );
      }
    }
    return target.value;
  }

  async #onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const target = req.url ?? '';
    const lower = target.slice(0, 8).toLowerCase();
    const refuse = (r: EgressRefusal, host?: string, address?: string): void => {
      this.#deny(r, {
        method,
        ...(host !== undefined ? { host } : {}),
        ...(address !== undefined ? { address } : {}),
      });
      this.#respondDenied(res, r);
    };
    if (!lower.startsWith('http://')) {
      refuse(
        lower.startsWith('https://')
          ? refusal('egress.scheme', 'https goes through CONNECT, not an absolute-form request')
          : refusal('egress.request_form', 'only absolute-form http:// requests and CONNECT'),
      );
      return;
    }
    const { authority, path } = splitAbsolute(`http://${target.slice(7)}`);
    const hostHeaders = countHeader(req.rawHeaders, 'host');
    const parsed = parseAuthority(authority, 80);
    const checked = this.#checkTarget(
      parsed,
      this.#o.httpPorts ?? [80],
      req.headers.host,
      hostHeaders,
      80,
    );
    if ('rule' in checked) {
      refuse(checked, parsed.ok ? parsed.value.host : undefined);
      return;
    }
    const { host, port } = checked;
    const max = this.#o.maxRequestBodyBytes ?? DEFAULT_MAX_BODY;
    const body = await readBody(req, max);
    if (body === undefined) {
      refuse(
        refusal('egress.body_too_large', `the request body is over ${max} bytes; nothing was sent`),
        host,
      );
      return;
    }
    const headers = forwardable(req.rawHeaders, req.headers.connection);
    const authorityHeader = port === 80 ? host : `${host}:${port}`;
    headers.push('Host', authorityHeader, 'Connection', 'close');
    if (body.length > 0 || method === 'POST' || method === 'PUT' || method === 'PATCH') {
      headers.push('Content-Length', String(body.length));
    }
    const lines: string[] = [path];
    for (let i = 0; i + 1 < headers.length; i += 2) lines.push(`${headers[i]}: ${headers[i + 1]}`);
    lines.push(body.toString('utf8'));
    const secret = scanOutbound(host, lines, this.#o.credentials ?? []);
    if (secret) {
      refuse(secret, host);
      return;
    }
    const outBytes = headBytes(`${method} ${path} HTTP/1.1`, headers) + body.length;
    if (this.#o.byteBudget.remaining() < outBytes) {
      const r = this.#budgetDenial({ method, host });
      this.#respondDenied(res, r);
      return;
    }
    const dialed = await this.#dialer.dial(host, port);
    if (!dialed.ok) {
      refuse(dialed, host, dialed.address);
      return;
    }
    const upstreamSocket = dialed.socket;
    this.#track(upstreamSocket);
    if (this.#closed) {
      upstreamSocket.destroy();
      refuse(refusal('egress.lease_closed', 'this lease is closed'), host);
      return;
    }
    const decision = this.#allowed({ method, host, port, address: dialed.address });
    this.#charge('out', outBytes, decision);
    const where = { method, host, address: dialed.address };
    const upstream = http.request({
      method,
      path,
      headers: headers,
      setHost: false,
      createConnection: () => upstreamSocket,
    });
    upstream.on('error', () => {
      if (!res.headersSent) {
        refuse(refusal('egress.upstream_failed', 'the upstream failed'), host, dialed.address);
      } else res.destroy();
    });
    res.on('close', () => upstream.destroy());
    upstream.on('response', (ures) => {
      this.#relayResponse(ures, res, { host, path, decision, where, upstream: upstreamSocket });
    });
    upstream.end(body);
  }

  #relayResponse(
    ures: IncomingMessage,
    res: ServerResponse,
    ctx: {
      host: string;
      path: string;
      decision: EgressAllow;
      where: { method: string; host: string; address: string };
      upstream: net.Socket;
    },
  ): void {
    const status = ures.statusCode ?? 502;
    const fail = (r: EgressRefusal): void => {
      ures.destroy();
      ctx.upstream.destroy();
      this.#respondDenied(res, r);
    };
    const location = ures.headers.location;
    if (isRedirect(status) && location !== undefined) {
      let elsewhere = true;
      try {
        const next = new URL(location, `http://${ctx.host}${ctx.path}`);
        elsewhere =
          (next.protocol !== 'http:' && next.protocol !== 'https:') ||
          normalizeHostName(next.hostname) !== ctx.host ||
          next.username !== '' ||
          next.password !== '';
      } catch {
        elsewhere = true;
      }
      if (elsewhere) {
        const r = refusal(
          'egress.redirect',
          `the upstream redirected to another host (${excerpt(location)}); it is not followed`,
        );
        this.#deny(r, ctx.where);
        fail(r);
        return;
      }
    }
    const headers = forwardable(ures.rawHeaders, ures.headers.connection);
    const length = ures.headers['content-length'];
    if (length !== undefined) headers.push('Content-Length', length);
    headers.push('Connection', 'close');
    if (!this.#charge('in', headBytes(`HTTP/1.1 ${status}`, headers), ctx.decision)) {
      fail(this.#budgetDenial(ctx.where));
      return;
    }
    try {
      res.writeHead(status, ures.statusMessage, headers);
    } catch {
      // A header node refuses to write (bad characters): the upstream's fault, never a crash.
      const r = refusal('egress.upstream_failed', 'the upstream answered a malformed header');
      this.#deny(r, ctx.where);
      fail(r);
      return;
    }
    ures.on('data', (chunk: Buffer) => {
      if (!this.#charge('in', chunk.length, ctx.decision)) {
        this.#budgetDenial(ctx.where);
        ures.destroy();
        ctx.upstream.destroy();
        res.destroy();
        return;
      }
      if (!res.write(chunk)) ures.pause();
    });
    res.on('drain', () => ures.resume());
    ures.on('end', () => res.end());
    ures.on('aborted', () => res.destroy());
    ures.on('error', () => res.destroy());
  }

  async #onConnect(req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    const target = req.url ?? '';
    const parsed = parseAuthority(target);
    const checked = this.#checkTarget(
      parsed,
      this.#o.connectPorts ?? [443],
      req.headers.host,
      countHeader(req.rawHeaders, 'host'),
      undefined,
    );
    if ('rule' in checked) {
      this.#refuseRaw(client, checked, 'CONNECT', parsed.ok ? parsed.value.host : undefined);
      return;
    }
    const { host, port } = checked;
    if (this.#o.byteBudget.remaining() <= 0) {
      this.#refuseRaw(client, this.#budgetDenial({ method: 'CONNECT', host }), undefined);
      return;
    }
    const dialed = await this.#dialer.dial(host, port);
    if (!dialed.ok) {
      this.#refuseRaw(client, dialed, 'CONNECT', host, dialed.address);
      return;
    }
    const upstream = dialed.socket;
    this.#track(upstream);
    if (this.#closed || client.destroyed) {
      upstream.destroy();
      client.destroy();
      return;
    }
    const decision = this.#allowed({ method: 'CONNECT', host, port, address: dialed.address });
    const where = { method: 'CONNECT', host, address: dialed.address };
    const cut = (): void => {
      this.#budgetDenial(where);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
    // A clean close of the upstream ends the client's side after what is still queued for it;
    // destroying it here would drop the tail of a download.
    upstream.on('close', (hadError: boolean) => {
      if (hadError) client.destroy();
      else if (!client.writableEnded) client.end();
    });
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) {
      if (!this.#charge('out', head.length, decision)) return cut();
      upstream.write(head);
    }
    relay(client, upstream, (n) => this.#charge('out', n, decision), cut);
    relay(upstream, client, (n) => this.#charge('in', n, decision), cut);
  }

  /** Answers a refusal on a raw socket (CONNECT, upgrade) and closes it; records it first. */
  #refuseRaw(
    socket: Duplex,
    r: EgressRefusal,
    method: string | undefined,
    host?: string,
    address?: string,
  ): void {
    if (method !== undefined) {
      this.#deny(r, {
        method,
        ...(host !== undefined ? { host } : {}),
        ...(address !== undefined ? { address } : {}),
      });
    }
    const body = denialBody(r);
    const status = statusFor(r);
    socket.end(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? 'Forbidden'}\r\n` +
        'Content-Type: application/json\r\n' +
        `X-Toolgate-Egress-Rule: ${r.rule}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  }

  #respondDenied(res: ServerResponse, r: EgressRefusal): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const body = denialBody(r);
    res.writeHead(statusFor(r), {
      'content-type': 'application/json',
      'x-toolgate-egress-rule': r.rule,
      'content-length': Buffer.byteLength(body),
      connection: 'close',
    });
    res.end(body);
  }
}

function countHeader(raw: readonly string[], name: string): number {
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]?.toLowerCase() === name) n += 1;
  return n;
}

/** The whole body, or undefined as soon as it passes `max` bytes (the rest is not read). */
function readBody(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > max) {
        done = true;
        req.pause();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!done) resolve(Buffer.concat(chunks, size));
      done = true;
    });
    req.on('error', () => {
      if (!done) resolve(undefined);
      done = true;
    });
  });
}

/** Copies `from` to `to`, asking `charge` before each chunk; backpressure pauses `from`. */
function relay(
  from: Duplex,
  to: Duplex,
  charge: (n: number) => boolean,
  overrun: () => void,
): void {
  from.on('data', (chunk: Buffer) => {
    if (!charge(chunk.length)) {
      overrun();
      return;
    }
    if (!to.write(chunk)) from.pause();
  });
  to.on('drain', () => from.resume());
  from.on('end', () => to.end());
}
