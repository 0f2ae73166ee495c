/**
 * Runs every egress red-team case (egress-attacks.json) and the benign corpus
 * (egress-benign.json) against a real proxy on its Unix socket and a real upstream on
 * 127.0.0.1, one test per case. Kinds: `address` (a DNS answer), `connect` (a CONNECT target),
 * `http` (a plain absolute-form request, raw on the wire), `secret` (the scanner alone).
 * `{P}` in a case is the upstream's port; `127.0.0.1:{P}` is the only unsafe test target.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import {
  checkAddress,
  createByteBudget,
  EgressProxy,
  type LeaseCredential,
  type LeaseOptions,
  scanOutbound,
} from '../../src/execution/sandbox/egress/index.js';
import {
  rawExchange,
  startUpstream,
  statusOf,
  tableResolver,
  type Upstream,
} from '../support/egress.js';

interface EgressCase {
  readonly name: string;
  readonly kind: 'address' | 'connect' | 'http' | 'secret';
  readonly expect: 'allow' | 'deny';
  readonly rule?: string;
  readonly address?: string;
  readonly target?: string;
  readonly host?: string;
  readonly tunnel?: string;
  readonly method?: string;
  readonly headers?: Record<string, string | string[] | null>;
  readonly body?: string;
  readonly bodyRepeat?: number;
  readonly budget?: number;
  readonly maxRequestBodyBytes?: number;
  readonly ports?: 'default';
  readonly credential?: boolean;
  readonly credentialValue?: string;
  readonly texts?: readonly string[];
}

interface CaseFile {
  readonly resolver: Record<string, readonly string[]>;
  readonly allowHosts: readonly string[];
  readonly credential: LeaseCredential;
  readonly cases: readonly EgressCase[];
}

function load(file: string): CaseFile {
  return JSON.parse(readFileSync(new URL(file, import.meta.url), 'utf8')) as CaseFile;
}

const attacks = load('./egress-attacks.json');
const benign = load('./egress-benign.json');

let upstream: Upstream;
let proxy: EgressProxy;
let P = 0;
let n = 0;

function sub(text: string): string {
  return text.replaceAll('{P}', String(P)).replaceAll('%7BP%7D', String(P));
}

before(async () => {
  upstream = await startUpstream((req, res) => {
    const url = new URL(req.url ?? '/', 'http://upstream');
    if (url.pathname === '/redirect') {
      res.writeHead(302, { location: sub(url.searchParams.get('to') ?? '/') });
      res.end();
    } else if (url.pathname === '/big') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('b'.repeat(Number(url.searchParams.get('n') ?? '0')));
    } else {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    }
  });
  P = upstream.port;
  proxy = new EgressProxy({
    resolver: tableResolver(attacks.resolver),
    unsafeTestTargets: [`127.0.0.1:${P}`],
  });
});

after(async () => {
  await proxy.close();
  await upstream.close();
});

function credentialsOf(c: EgressCase, file: CaseFile): LeaseCredential[] {
  if (c.credentialValue !== undefined) {
    return [{ value: c.credentialValue, audienceHosts: ['api.example.test'] }];
  }
  return c.credential ? [file.credential] : [];
}

function rawRequest(c: EgressCase, target: string): string {
  const body = c.bodyRepeat !== undefined ? 'q'.repeat(c.bodyRepeat) : (c.body ?? '');
  const lines = [`${c.method ?? 'GET'} ${target} HTTP/1.1`];
  const authority = target.startsWith('http') ? (target.split('/')[2] ?? '') : '';
  for (const [name, value] of Object.entries(c.headers ?? { Host: null })) {
    const values = value === null ? [authority.slice(authority.indexOf('@') + 1)] : value;
    for (const v of Array.isArray(values) ? values : [values]) lines.push(`${name}: ${sub(v)}`);
  }
  lines.push('Connection: close');
  if (body.length > 0) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

async function runCase(c: EgressCase, file: CaseFile): Promise<void> {
  if (c.kind === 'address') {
    const v = checkAddress(c.address ?? '');
    if (c.expect === 'allow') assert.ok(v.ok, v.ok ? '' : v.reason);
    else {
      assert.equal(v.ok, false, 'allowed, expected a refusal');
      if (!v.ok) assert.equal(v.rule, c.rule, v.reason);
    }
    return;
  }
  if (c.kind === 'secret') {
    const r = scanOutbound(c.host ?? '', c.texts ?? [], credentialsOf(c, file));
    if (c.expect === 'allow') assert.equal(r, undefined, r?.message);
    else assert.equal(r?.rule, c.rule);
    return;
  }
  n += 1;
  const options: LeaseOptions = {
    leaseId: `rt${n}`,
    sessionId: 'redteam',
    toolId: 'egress_tool',
    allowHosts: file.allowHosts,
    byteBudget: createByteBudget(c.budget ?? 10_000_000),
    credentials: credentialsOf(c, file),
    ...(c.ports === 'default' ? {} : { httpPorts: [P], connectPorts: [P] }),
    ...(c.maxRequestBodyBytes !== undefined ? { maxRequestBodyBytes: c.maxRequestBodyBytes } : {}),
  };
  const lease = await proxy.openLease(options);
  try {
    const target = sub(c.target ?? '');
    let raw: string;
    if (c.kind === 'connect') {
      const host = c.host === undefined ? '' : `Host: ${sub(c.host)}\r\n`;
      const tunnel =
        c.tunnel ?? 'GET / HTTP/1.1\r\nHost: api.example.test\r\nConnection: close\r\n\r\n';
      raw = await rawExchange(
        lease.socketPath,
        `CONNECT ${target} HTTP/1.1\r\n${host}\r\n`,
        tunnel,
      );
    } else {
      raw = await rawExchange(lease.socketPath, rawRequest(c, target));
    }
    const stats = lease.stats();
    if (c.expect === 'allow') {
      assert.deepEqual(stats.denials, [], raw.slice(0, 300));
      assert.ok([200, 302].includes(statusOf(raw)), raw.slice(0, 300));
      assert.equal(stats.decisions[0]?.kind, 'allow');
    } else {
      const rules = stats.denials.map((d) => d.rule);
      assert.ok(
        rules.includes(c.rule ?? ''),
        `expected ${c.rule}, got [${rules.join(', ')}]: ${raw.slice(0, 200)}`,
      );
    }
  } finally {
    await lease.close();
  }
}

describe('red team: egress attacks', () => {
  test('there are at least 80 attack cases and every one names its rule', () => {
    assert.ok(attacks.cases.length >= 80);
    for (const c of attacks.cases) {
      assert.equal(c.expect, 'deny', c.name);
      assert.ok(c.rule, c.name);
    }
  });
  for (const c of attacks.cases) test(c.name, () => runCase(c, attacks));
});

describe('red team: egress benign corpus', () => {
  for (const c of benign.cases) test(c.name, () => runCase(c, benign));
});
