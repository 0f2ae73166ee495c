/**
 * @module The `http` runtime (docs/architecture.md §4; C1 runtime, C6, C10): a tool that is one call to a remote
 * API. toolgate assembles the URL from the registered base and the path template; the model only
 * fills placeholders and parameters, never a scheme, host or port. The request goes out under the
 * proxy's rules: exact-host allow-list (the tool's egress hosts), one DNS look-up with every
 * address checked and the checked one dialled, https only, no redirect followed, the session's
 * byte budget, a secret scan of what is sent, and a cap on what comes back.
 */

import type net from 'node:net';
import tls from 'node:tls';
import type { ToolDefinition } from '../../../domain/catalog/index.js';
import { excerpt } from '../../../domain/policy/index.js';
import { http } from '../../node-http.js';
import {
  type ByteBudget,
  CheckedDialer,
  checkAllowed,
  checkHostName,
  type DialerOptions,
  type EgressAuditFields,
  type EgressDenyCode,
  scanOutbound,
  withDeadline,
} from '../../sandbox/index.js';
import type { RuntimeContext, RuntimeResult, ToolRuntime } from '../tool-runtime.js';
import { fillPathTemplate } from './http-path-template.js';

export interface HttpToolContext {
  /** The session's egress budget: what is sent and what comes back are both charged. */
  readonly budget: ByteBudget;
  /** The tool's secret, decrypted after the gate passed; sent only in its header, only to its host. */
  readonly credential?: string;
  /** A traced call's W3C context, sent as the `traceparent` header. */
  readonly traceparent?: string;
}

export type HttpToolErrorCode =
  | EgressDenyCode
  | 'INPUT_INVALID'
  | 'EXECUTION_FAILED'
  | 'OUTPUT_INVALID';

/** Bytes and destination are reported on every outcome, for the audit record. */
interface Traffic {
  readonly bytesOut: number;
  readonly bytesIn: number;
  readonly resolvedHost?: string;
  readonly address?: string;
}

export type HttpToolResult =
  | ({
      readonly ok: true;
      readonly status: number;
      readonly output: unknown;
      readonly resolvedHost: string;
      readonly address: string;
    } & Traffic)
  | ({
      readonly ok: false;
      readonly code: HttpToolErrorCode;
      readonly rule: string;
      readonly message: string;
      readonly status?: number;
    } & Traffic);

export interface HttpRuntimeOptions extends DialerOptions {
  /** Ports an `http` tool may reach; default [443]. */
  readonly ports?: readonly number[];
  /**
   * An extra CA to trust, for tests whose upstream has a test certificate. Never read from
   * configuration or any API.
   */
  readonly unsafeTestCa?: string;
  /** Largest response body accepted; default the tool's `sandbox.limits.output_bytes`. */
  readonly maxResponseBytes?: number;
}

const HOP_FREE_HEADERS = { accept: 'application/json', 'user-agent': 'toolgate-http-runtime' };
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

function failure(
  code: HttpToolErrorCode,
  rule: string,
  message: string,
  traffic: Partial<Traffic> = {},
  status?: number,
): HttpToolResult {
  return {
    ok: false,
    code,
    rule,
    message,
    bytesOut: traffic.bytesOut ?? 0,
    bytesIn: traffic.bytesIn ?? 0,
    ...(traffic.resolvedHost !== undefined ? { resolvedHost: traffic.resolvedHost } : {}),
    ...(traffic.address !== undefined ? { address: traffic.address } : {}),
    ...(status !== undefined ? { status } : {}),
  };
}

/** The query of a GET or DELETE: scalars as text, anything else as JSON. */
function queryOf(rest: Readonly<Record<string, unknown>>): string {
  const params = new URLSearchParams();
  const put = (k: string, v: unknown): void => {
    if (v === undefined) return;
    params.append(k, typeof v === 'string' ? v : JSON.stringify(v));
  };
  for (const [k, v] of Object.entries(rest)) {
    if (Array.isArray(v) && v.every((x) => typeof x !== 'object' || x === null)) {
      for (const x of v) put(k, x);
    } else put(k, v);
  }
  const q = params.toString();
  return q === '' ? '' : `?${q}`;
}

interface Target {
  readonly host: string;
  readonly port: number;
  readonly basePath: string;
}

export class HttpToolRunner {
  readonly #dialer: CheckedDialer;
  readonly #ports: readonly number[];
  readonly #ca: string | undefined;
  readonly #maxResponse: number | undefined;

  constructor(options: HttpRuntimeOptions = {}) {
    this.#dialer = new CheckedDialer(options);
    this.#ports = options.ports ?? [443];
    this.#ca = options.unsafeTestCa;
    this.#maxResponse = options.maxResponseBytes;
  }

  /** Checks the registered base URL again at run time: the catalog is not the last line. */
  #target(def: ToolDefinition, base: string): Target | HttpToolResult {
    if (!base.startsWith('https://')) {
      return failure('EGRESS_DENIED', 'egress.scheme', 'the base URL is not https');
    }
    let url: URL;
    try {
      url = new URL(base);
    } catch {
      return failure('EXECUTION_FAILED', 'http.base_url', 'the base URL does not parse');
    }
    const rest = base.slice('https://'.length);
    const end = rest.search(/[/?#]/);
    const authority = end === -1 ? rest : rest.slice(0, end);
    if (authority.includes('@') || url.username !== '' || url.password !== '') {
      return failure('EGRESS_DENIED', 'egress.userinfo', 'the base URL carries userinfo');
    }
    if (url.search !== '' || url.hash !== '') {
      return failure('EXECUTION_FAILED', 'http.base_url', 'the base URL has a query or fragment');
    }
    const host = checkHostName(url.hostname);
    if (!host.ok) return failure('EGRESS_DENIED', host.rule, host.message);
    const port = url.port === '' ? 443 : Number(url.port);
    if (!this.#ports.includes(port)) {
      return failure('EGRESS_DENIED', 'egress.port', `port ${port} is not allowed for http tools`);
    }
    const hosts = def.egress.mode === 'constrained' ? def.egress.hosts : [];
    const allowed = checkAllowed(host.value, new Set(hosts));
    if (!allowed.ok) return failure('EGRESS_DENIED', allowed.rule, allowed.message);
    const basePath = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
    return { host: host.value, port, basePath };
  }

  /**
   * Runs one call. Never throws and never follows a redirect; every outcome says how many bytes
   * went each way and to which host and address.
   */
  async run(
    def: ToolDefinition,
    args: Readonly<Record<string, unknown>>,
    ctx: HttpToolContext,
  ): Promise<HttpToolResult> {
    if (def.runtime.kind !== 'http') {
      return failure('EXECUTION_FAILED', 'runtime.kind', 'this tool does not have an http runtime');
    }
    const { method } = def.runtime;
    const target = this.#target(def, def.runtime.base_url);
    if ('ok' in target) return target;
    const filled = fillPathTemplate(def.runtime.path, args);
    if (!filled.ok) return failure('INPUT_INVALID', filled.rule, filled.message);
    const rest: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(args)) if (!filled.used.has(k)) rest[k] = v;
    const hasBody = BODY_METHODS.has(method);
    const path = `${target.basePath}${filled.path}${hasBody ? '' : queryOf(rest)}`;
    const authority = target.port === 443 ? target.host : `${target.host}:${target.port}`;
    // The assembled URL must parse back to the same host and the same path: no normalisation.
    const check = new URL(`https://${authority}${path}`);
    if (check.host !== authority || `${check.pathname}${check.search}` !== path) {
      return failure(
        'INPUT_INVALID',
        'http.path_argument',
        'the arguments do not make a clean path',
      );
    }
    const body = hasBody ? Buffer.from(JSON.stringify(rest), 'utf8') : Buffer.alloc(0);
    const headers: Record<string, string> = { ...HOP_FREE_HEADERS, host: authority };
    if (hasBody) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(body.length);
    }
    headers.connection = 'close';
    const cred = def.credentials;
    if (cred && ctx.credential !== undefined && cred.inject !== 'env') {
      headers[cred.as.toLowerCase()] = ctx.credential;
    }
    if (ctx.traceparent !== undefined) headers.traceparent = ctx.traceparent;
    const lines = [path, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    const secret = scanOutbound(
      target.host,
      [...lines, body.toString('utf8')],
      ctx.credential === undefined ? [] : [{ value: ctx.credential, audienceHosts: [target.host] }],
    );
    if (secret) {
      return failure('EGRESS_DENIED', secret.rule, secret.message, { resolvedHost: target.host });
    }
    const outBytes = lines.reduce((n, l) => n + Buffer.byteLength(l) + 2, 20) + body.length;
    if (ctx.budget.remaining() < outBytes) {
      return failure('BUDGET_EXCEEDED', 'egress.budget', "the session's egress budget is spent", {
        resolvedHost: target.host,
      });
    }
    const wallMs = def.sandbox.limits.wall_time_ms;
    const maxResponse = this.#maxResponse ?? def.sandbox.limits.output_bytes;
    const live: { socket?: net.Socket } = {};
    try {
      return await withDeadline(
        this.#send(target, { method, path, headers, body, outBytes, maxResponse }, ctx, live),
        wallMs,
        'the call',
      );
    } catch {
      // Past the deadline the connection is cut, so nothing more is sent or charged.
      live.socket?.destroy();
      return failure('EXECUTION_FAILED', 'http.timeout', `the call took longer than ${wallMs} ms`, {
        resolvedHost: target.host,
      });
    }
  }

  async #send(
    target: Target,
    req: {
      method: string;
      path: string;
      headers: Record<string, string>;
      body: Buffer;
      outBytes: number;
      maxResponse: number;
    },
    ctx: HttpToolContext,
    live: { socket?: net.Socket },
  ): Promise<HttpToolResult> {
    const dialed = await this.#dialer.dial(target.host, target.port);
    if (!dialed.ok) {
      const code = dialed.rule === 'egress.dns' || dialed.rule === 'egress.upstream_unreachable';
      return failure(code ? 'EXECUTION_FAILED' : 'EGRESS_DENIED', dialed.rule, dialed.message, {
        resolvedHost: target.host,
        ...(dialed.address !== undefined ? { address: dialed.address } : {}),
      });
    }
    live.socket = dialed.socket;
    const where = { resolvedHost: target.host, address: dialed.address };
    let secure: tls.TLSSocket;
    try {
      secure = await handshake(dialed.socket, target.host, this.#ca);
    } catch {
      dialed.socket.destroy();
      return failure(
        'EXECUTION_FAILED',
        'http.tls',
        'the TLS handshake with the API failed',
        where,
      );
    }
    live.socket = secure;
    if (secure.destroyed)
      return failure('EXECUTION_FAILED', 'http.timeout', 'the call was cut', where);
    ctx.budget.consume(req.outBytes);
    let bytesIn = 0;
    return new Promise<HttpToolResult>((resolve) => {
      let settled = false;
      const done = (r: HttpToolResult): void => {
        if (settled) return;
        settled = true;
        secure.destroy();
        resolve(r);
      };
      const traffic = (): Traffic => ({ bytesOut: req.outBytes, bytesIn, ...where });
      const request = http.request({
        method: req.method,
        path: req.path,
        headers: req.headers,
        setHost: false,
        createConnection: () => secure,
      });
      request.on('error', () =>
        done(failure('EXECUTION_FAILED', 'http.upstream', 'the API connection failed', traffic())),
      );
      request.on('response', (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400) {
          const to = res.headers.location;
          done(
            failure(
              'EGRESS_DENIED',
              'egress.redirect',
              `the API answered a redirect${redirectHost(to)}; redirects are never followed`,
              traffic(),
              status,
            ),
          );
          return;
        }
        const chunks: Buffer[] = [];
        const charge = (n: number): boolean => {
          if (ctx.budget.remaining() < n) {
            done(
              failure(
                'BUDGET_EXCEEDED',
                'egress.budget',
                "the session's egress budget is spent",
                traffic(),
              ),
            );
            return false;
          }
          ctx.budget.consume(n);
          bytesIn += n;
          return true;
        };
        let head = 16;
        for (const h of res.rawHeaders) head += Buffer.byteLength(h) + 2;
        if (!charge(head)) return;
        let bodyBytes = 0;
        res.on('data', (chunk: Buffer) => {
          if (settled) return;
          bodyBytes += chunk.length;
          if (bodyBytes > req.maxResponse) {
            done(
              failure(
                'OUTPUT_INVALID',
                'http.response_too_large',
                `the API answered more than ${req.maxResponse} bytes`,
                traffic(),
                status,
              ),
            );
            return;
          }
          if (!charge(chunk.length)) return;
          chunks.push(chunk);
        });
        res.on('error', () =>
          done(
            failure('EXECUTION_FAILED', 'http.upstream', 'the API response broke off', traffic()),
          ),
        );
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let output: unknown = null;
          if (text.trim() !== '') {
            try {
              output = JSON.parse(text);
            } catch {
              done(
                failure(
                  'EXECUTION_FAILED',
                  'http.response_not_json',
                  'the API did not answer JSON',
                  traffic(),
                  status,
                ),
              );
              return;
            }
          }
          if (status < 200 || status > 299) {
            done(
              failure(
                'EXECUTION_FAILED',
                'http.status',
                `the API answered HTTP ${status}`,
                traffic(),
                status,
              ),
            );
            return;
          }
          done({
            ok: true,
            status,
            output,
            ...traffic(),
            resolvedHost: target.host,
            address: dialed.address,
          });
        });
      });
      request.end(req.body);
    });
  }
}

function handshake(
  socket: net.Socket,
  servername: string,
  ca: string | undefined,
): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const secure = tls.connect({
      socket,
      servername,
      ALPNProtocols: ['http/1.1'],
      rejectUnauthorized: true,
      ...(ca !== undefined ? { ca: [...tls.rootCertificates, ca] } : {}),
    });
    secure.once('secureConnect', () => {
      secure.removeListener('error', reject);
      secure.on('error', () => {});
      resolve(secure);
    });
    secure.once('error', reject);
  });
}

/** What one http call puts into its audit record: where it connected, bytes each way, a refusal. */
export function httpAuditFields(result: HttpToolResult): EgressAuditFields {
  const connected = result.resolvedHost !== undefined && result.address !== undefined;
  return {
    ...(connected ? { egressHost: `${result.resolvedHost}=${result.address}` } : {}),
    bytesOut: result.bytesOut,
    bytesIn: result.bytesIn,
    denials: result.ok
      ? []
      : [
          result.resolvedHost === undefined
            ? { rule: result.rule }
            : { rule: result.rule, host: result.resolvedHost },
        ],
  };
}

/**
 * The port over HttpToolRunner: the tool's credential goes in its header (one value, sent only to
 * the tool's host); every outcome reports its traffic, and a failure's outcome is its rule.
 */
export class HttpRuntime implements ToolRuntime {
  readonly kind = 'http';
  readonly #runner: Pick<HttpToolRunner, 'run'>;

  constructor(runner: Pick<HttpToolRunner, 'run'> = new HttpToolRunner()) {
    this.#runner = runner;
  }

  async run(
    def: ToolDefinition,
    args: Record<string, unknown>,
    context: RuntimeContext,
  ): Promise<RuntimeResult> {
    const creds = context.credentials;
    const credential =
      creds && def.credentials?.inject !== 'env' ? Object.values(creds.headers)[0] : undefined;
    const r = await this.#runner.run(def, args, {
      budget: context.budget,
      ...(credential !== undefined ? { credential } : {}),
      ...(context.traceparent !== undefined ? { traceparent: context.traceparent } : {}),
    });
    const egress = httpAuditFields(r);
    if (!r.ok) {
      return {
        ok: false,
        code: r.code,
        rule: r.rule,
        message: r.message,
        bytes: 0,
        outcome: r.rule,
        egress,
      };
    }
    return { ok: true, output: r.output, outcome: 'ok', egress };
  }
}

/**
 * Where a refused redirect pointed, for the caller's message: its host only. A Location can carry
 * anything the API put there — a signed URL, the request's own credential in a query — and this
 * message reaches the caller and the audit record unscrubbed, so its path and query never do.
 */
function redirectHost(location: string | undefined): string {
  if (location === undefined) return '';
  try {
    const host = new URL(location).hostname;
    return host === '' ? '' : ` to ${excerpt(host)}`;
  } catch {
    return '';
  }
}
