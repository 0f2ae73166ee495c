/**
 * @module The `fetch` an HTTP provider's MCP client uses: the egress rules of the `http` runtime
 * (C6, C10) for a Streamable HTTP upstream. https only, the exact host of the provider's
 * URL (parsed and compared for equality), its port, no userinfo, one DNS look-up with every
 * address checked and the checked address dialled (CheckedDialer: no private, loopback or metadata
 * address unless a test names it in `unsafeTestTargets`), certificate checked for that host, no
 * redirect followed, and the payload scanned for secrets (a match is never sent). The request
 * itself is the outbound rules' one (src/execution/sandbox/egress/checked-request.ts).
 */
import { parseTraceparent } from '../../core/index.js';
import {
  type ByteBudget,
  CheckedDialer,
  type DialerOptions,
  requestBody,
  requestOver,
  scanOutbound,
} from '../sandbox/index.js';

export interface CheckedFetchOptions extends DialerOptions {
  /** An extra CA to trust, for tests whose upstream has a test certificate. Never configuration. */
  readonly unsafeTestCa?: string;
}

/** Why a request was not sent; the MCP client reports it as a failed request. */
export class EgressRefused extends Error {
  constructor(
    readonly rule: string,
    message: string,
    readonly code: 'EGRESS_DENIED' | 'BUDGET_EXCEEDED' = 'EGRESS_DENIED',
  ) {
    super(message);
  }
}

/**
 * What one provider connection of one gate session charges its bytes to: the session's egress
 * budget of the call in progress (set per call), and the refusal that stopped it, if any.
 */
export interface EgressMeter {
  budget: ByteBudget | null;
  refusal: EgressRefused | null;
}

const BUDGET_SPENT = "the session's egress budget is spent";

/** Checks an HTTP provider's URL as configured; returns the host and port it may reach. */
export function checkProviderUrl(raw: string): { host: string; port: number; url: URL } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new EgressRefused('egress.url', 'the provider URL does not parse');
  }
  if (url.protocol !== 'https:')
    throw new EgressRefused('egress.scheme', 'the provider URL is not https');
  if (url.username !== '' || url.password !== '') {
    throw new EgressRefused('egress.userinfo', 'the provider URL carries userinfo');
  }
  if (/^[0-9.]+$/.test(url.hostname) || url.hostname.startsWith('[')) {
    throw new EgressRefused(
      'egress.ip_literal',
      'the provider URL names an IP address, not a host',
    );
  }
  return { host: url.hostname, port: url.port === '' ? 443 : Number(url.port), url };
}

/**
 * A fetch bound to one provider URL: any request to another host or port is refused before a
 * connection is made.
 */
export function checkedFetch(
  providerUrl: string,
  options: CheckedFetchOptions = {},
  meter: EgressMeter | null = null,
): typeof fetch {
  const refuse = (refusal: EgressRefused): EgressRefused => {
    if (meter) meter.refusal = refusal;
    return refusal;
  };
  const allowed = checkProviderUrl(providerUrl);
  const dialer = new CheckedDialer(options);
  return async (input, given) => {
    let init = given;
    const target = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    const { host, port } = checkProviderUrl(target.toString());
    if (host !== allowed.host || port !== allowed.port) {
      throw new EgressRefused('egress.host_not_allowed', 'the request leaves the provider host');
    }
    const body = await requestBody(init);
    // A traced request carries its context in `params._meta`; the HTTP header mirrors it.
    const traceparent = body === undefined ? null : traceparentIn(body);
    if (traceparent) {
      const headers = new Headers(init?.headers);
      headers.set('traceparent', traceparent);
      init = { ...init, headers };
    }
    // The payload (a tool's arguments, chosen by the agent) is scanned for secrets as the egress
    // proxy scans what sandboxed tools send: a match is not sent at all.
    if (body !== undefined) {
      const text = typeof body === 'string' ? body : body.toString('utf8');
      const secret = scanOutbound(host, [text, target.search]);
      if (secret) throw refuse(new EgressRefused(secret.rule, secret.message));
    } else if (target.search !== '') {
      const secret = scanOutbound(host, [target.search]);
      if (secret) throw refuse(new EgressRefused(secret.rule, secret.message));
    }
    // Bytes out and in count against the session's egress budget, as through the egress proxy.
    const sending = body === undefined ? 0 : Buffer.byteLength(body);
    const budget = meter?.budget ?? null;
    if (budget) {
      if (budget.remaining() < sending) {
        throw refuse(new EgressRefused('egress.budget', BUDGET_SPENT, 'BUDGET_EXCEEDED'));
      }
      budget.consume(sending);
    }
    const dialed = await dialer.dial(host, port);
    if (!dialed.ok) throw new EgressRefused(dialed.rule, dialed.message);
    // Redirects are answered as they are: the client sees a failed request, never a new host.
    return requestOver(target, host, dialed.socket, init, body, {
      ...(options.unsafeTestCa !== undefined ? { unsafeTestCa: options.unsafeTestCa } : {}),
      ...(budget
        ? {
            onResponse: (res) => {
              res.on('data', (chunk: Buffer) => {
                if (budget.remaining() < chunk.length) {
                  res.destroy(
                    refuse(new EgressRefused('egress.budget', BUDGET_SPENT, 'BUDGET_EXCEEDED')),
                  );
                  return;
                }
                budget.consume(chunk.length);
              });
            },
          }
        : {}),
    });
  };
}

/**
 * The `traceparent` in a JSON-RPC request's `params._meta` (the gate's own, put there by the
 * upstream pool for a traced call), checked; null when there is none. Never throws.
 */
function traceparentIn(body: string | Buffer): string | null {
  const text = typeof body === 'string' ? body : body.toString('utf8');
  if (!text.includes('"traceparent"')) return null;
  try {
    const message = JSON.parse(text) as { params?: { _meta?: Record<string, unknown> } };
    const value = message?.params?._meta?.traceparent;
    return parseTraceparent(value) ? (value as string) : null;
  } catch {
    return null;
  }
}
