/**
 * The egress proxy over its real Unix sockets, against a real upstream on 127.0.0.1: each rule
 * with its attack and a benign neighbour. Names resolve through a table so they can point at
 * loopback, metadata or private addresses; only `127.0.0.1:<upstream port>` is an unsafe test
 * target, so everything else the table returns is judged as it would be in production.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import {
  createByteBudget,
  type EgressLease,
  EgressProxy,
  egressAuditFields,
  type LeaseOptions,
} from '../../../src/execution/sandbox/egress/index.js';
import {
  rawExchange,
  rebindingResolver,
  ruleOf,
  startUpstream,
  statusOf,
  tableResolver,
  type Upstream,
  viaProxy,
} from '../../support/egress.js';

const TABLE: Record<string, readonly string[]> = {
  'api.example.test': ['127.0.0.1'],
  'other.example.test': ['127.0.0.1'],
  'evil.example.test': ['127.0.0.1'],
  'meta.example.test': ['169.254.169.254'],
  'meta6.example.test': ['fd00:ec2::254'],
  'private.example.test': ['10.0.0.5'],
  'cgnat.example.test': ['100.64.0.9'],
  'mapped.example.test': ['::ffff:127.0.0.1'],
  'mixed.example.test': ['127.0.0.1', '192.168.1.10'],
  'loop6.example.test': ['::1'],
};
const ALLOWED = Object.keys(TABLE).filter((h) => h !== 'evil.example.test');

let upstream: Upstream;
let proxy: EgressProxy;
/** Proxies a test makes for itself; closed in after() even when an assertion failed. */
const extraProxies: EgressProxy[] = [];
function extraProxy(options: ConstructorParameters<typeof EgressProxy>[0]): EgressProxy {
  const p = new EgressProxy(options);
  extraProxies.push(p);
  return p;
}
let P = 0;
const big = 'x'.repeat(5_000);

let leaseCount = 0;

function lease(extra: Partial<LeaseOptions> = {}, testPorts = true): Promise<EgressLease> {
  leaseCount += 1;
  return proxy.openLease({
    leaseId: `l${leaseCount}`,
    sessionId: 's1',
    toolId: 'fetch_tool',
    allowHosts: ALLOWED,
    byteBudget: createByteBudget(10_000_000),
    ...(testPorts ? { httpPorts: [P], connectPorts: [P] } : {}),
    ...extra,
  });
}

function connectReq(target: string, host: string = target): string {
  return `CONNECT ${target} HTTP/1.1\r\nHost: ${host}\r\n\r\n`;
}

before(async () => {
  upstream = await startUpstream((req, res) => {
    if (req.url === '/big') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(big);
      return;
    }
    if (req.url === '/huge') {
      res.writeHead(200, { 'content-type': 'text/plain', connection: 'close' });
      res.end(Buffer.alloc(4 * 1024 * 1024, 0x68));
      return;
    }
    if (req.url === '/redirect-away') {
      res.writeHead(302, { location: 'http://evil.example.test/steal' });
      res.end();
      return;
    }
    if (req.url === '/redirect-here') {
      res.writeHead(302, { location: '/landing' });
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ok: true, path: req.url }));
  });
  P = upstream.port;
  proxy = new EgressProxy({
    resolver: tableResolver(TABLE),
    unsafeTestTargets: [`127.0.0.1:${P}`],
  });
});

after(async () => {
  await Promise.all(extraProxies.map((p) => p.close()));
  await proxy.close();
  await upstream.close();
});

describe('egress proxy: the allowed path', () => {
  test('a plain HTTP request to an allowed host is forwarded and recorded with its address', async () => {
    const l = await lease();
    const before = upstream.seen.length;
    const res = await viaProxy(l.socketPath, `http://api.example.test:${P}/v1/items?q=1`);
    assert.equal(res.status, 200);
    assert.deepEqual(JSON.parse(res.body), { ok: true, path: '/v1/items?q=1' });
    const seen = upstream.seen[before];
    assert.equal(seen?.headers.host, `api.example.test:${P}`);
    assert.equal(seen?.headers['proxy-authorization'], undefined);
    const s = l.stats();
    assert.deepEqual(s.resolvedHosts, [{ host: 'api.example.test', address: '127.0.0.1' }]);
    assert.ok(s.bytesOut > 0 && s.bytesIn > 0);
    assert.equal(s.denials.length, 0);
    assert.equal(s.decisions[0]?.kind, 'allow');
    const audit = egressAuditFields(s);
    assert.equal(audit.egressHost, 'api.example.test=127.0.0.1');
    assert.equal(audit.bytesOut, s.bytesOut);
    assert.deepEqual(audit.denials, []);
    await l.close();
  });

  test('a CONNECT tunnel to an allowed host carries bytes both ways and counts them', async () => {
    const l = await lease();
    const out = await rawExchange(
      l.socketPath,
      connectReq(`api.example.test:${P}`),
      `GET /through HTTP/1.1\r\nHost: api.example.test\r\nConnection: close\r\n\r\n`,
    );
    assert.equal(statusOf(out), 200);
    assert.match(out, /"path":"\/through"/);
    const s = l.stats();
    assert.equal(s.decisions[0]?.kind, 'allow');
    assert.ok(s.bytesOut > 30 && s.bytesIn > 30);
    await l.close();
  });

  test('a tunnel delivers the whole body when the upstream closes as soon as it has sent it', async () => {
    const l = await lease();
    const socket = net.connect({ path: l.socketPath });
    socket.write(connectReq(`api.example.test:${P}`));
    await new Promise<void>((r) => socket.once('data', () => r()));
    socket.write('GET /huge HTTP/1.1\r\nHost: api.example.test\r\nConnection: close\r\n\r\n');
    // A slow reader: the proxy still holds bytes for it when the upstream closes.
    let n = 0;
    socket.on('data', (c: Buffer) => {
      n += c.length;
      socket.pause();
      setTimeout(() => socket.resume(), 15);
    });
    await new Promise<void>((r) => socket.once('close', () => r()));
    assert.ok(n >= 4 * 1024 * 1024, `received ${n} bytes`);
    await l.close();
  });

  test('host names are folded for case and one trailing dot, nothing else', async () => {
    const l = await lease();
    const out = await rawExchange(
      l.socketPath,
      connectReq(`API.Example.TEST.:${P}`),
      'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    assert.equal(statusOf(out), 200);
    await l.close();
  });

  test('a same-host redirect is passed back to the client (which asks the proxy again)', async () => {
    const l = await lease();
    const res = await viaProxy(l.socketPath, `http://api.example.test:${P}/redirect-here`);
    assert.equal(res.status, 302);
    await l.close();
  });
});

describe('egress proxy: the host allow-list', () => {
  test('an unlisted host is refused, by CONNECT and by plain HTTP, and nothing reaches it', async () => {
    const l = await lease();
    const before = upstream.seen.length;
    const raw = await rawExchange(l.socketPath, connectReq(`evil.example.test:${P}`));
    assert.equal(statusOf(raw), 403);
    assert.equal(ruleOf(raw), 'egress.host_not_allowed');
    const res = await viaProxy(l.socketPath, `http://evil.example.test:${P}/`);
    assert.equal(res.status, 403);
    assert.equal(res.headers['x-toolgate-egress-rule'], 'egress.host_not_allowed');
    assert.equal(upstream.seen.length, before);
    const s = l.stats();
    assert.equal(s.denials.length, 2);
    assert.equal(s.denials[0]?.rule, 'egress.host_not_allowed');
    assert.deepEqual(egressAuditFields(s).denials[0], {
      rule: 'egress.host_not_allowed',
      host: 'evil.example.test',
    });
    assert.equal(egressAuditFields(s).egressHost, undefined);
    await l.close();
  });

  test('hosts are compared by equality, never by suffix, prefix or containment', async () => {
    const l = await lease({ allowHosts: ['example.test'] });
    for (const host of ['api.example.test', 'example.test.evil.test', 'xexample.test']) {
      const raw = await rawExchange(l.socketPath, connectReq(`${host}:${P}`));
      assert.equal(ruleOf(raw), 'egress.host_not_allowed', host);
    }
    await l.close();
  });

  test('identity comes from the socket: a lease allows only its own list', async () => {
    const a = await lease({ allowHosts: ['api.example.test'] });
    const b = await lease({ allowHosts: ['other.example.test'] });
    const ok = await viaProxy(a.socketPath, `http://api.example.test:${P}/`);
    const no = await viaProxy(b.socketPath, `http://api.example.test:${P}/`, {
      headers: { 'x-toolgate-lease': a.leaseId, 'proxy-authorization': 'Basic YTpi' },
    });
    assert.equal(ok.status, 200);
    assert.equal(no.status, 403);
    assert.equal(b.stats().denials[0]?.rule, 'egress.host_not_allowed');
    await a.close();
    await b.close();
  });

  test('IP literals are refused in every spelling, even when they would be allowed', async () => {
    const l = await lease();
    for (const target of [
      `127.0.0.1:${P}`,
      `[::1]:${P}`,
      `2130706433:${P}`,
      `0x7f.1:${P}`,
      `0177.0.0.1:${P}`,
      `127.1:${P}`,
      `[::ffff:127.0.0.1]:${P}`,
      `::1:${P}`,
    ]) {
      const raw = await rawExchange(l.socketPath, connectReq(target));
      assert.equal(ruleOf(raw), 'egress.ip_literal', target);
    }
    const res = await viaProxy(l.socketPath, `http://127.0.0.1:${P}/`);
    assert.equal(res.headers['x-toolgate-egress-rule'], 'egress.ip_literal');
    await l.close();
  });

  test('userinfo in a CONNECT target or absolute-form URL is refused', async () => {
    const l = await lease();
    const raw = await rawExchange(
      l.socketPath,
      connectReq(`evil.example.test@api.example.test:${P}`),
    );
    assert.equal(ruleOf(raw), 'egress.userinfo');
    const res = await viaProxy(l.socketPath, `http://user:pw@api.example.test:${P}/`, {
      headers: { host: `api.example.test:${P}` },
    });
    assert.equal(res.headers['x-toolgate-egress-rule'], 'egress.userinfo');
    await l.close();
  });

  test('a Host header naming another host than the absolute-form target is refused', async () => {
    const l = await lease();
    const before = upstream.seen.length;
    const res = await viaProxy(l.socketPath, `http://api.example.test:${P}/`, {
      headers: { host: 'evil.example.test' },
    });
    assert.equal(res.headers['x-toolgate-egress-rule'], 'egress.host_mismatch');
    const twice = await rawExchange(
      l.socketPath,
      `GET http://api.example.test:${P}/ HTTP/1.1\r\nHost: api.example.test:${P}\r\nHost: evil.example.test\r\n\r\n`,
    );
    assert.equal(statusOf(twice) === 403 || statusOf(twice) === 400, true);
    assert.equal(upstream.seen.length, before);
    await l.close();
  });

  test('only absolute-form http:// and CONNECT are proxied', async () => {
    const l = await lease();
    const origin = await rawExchange(
      l.socketPath,
      'GET / HTTP/1.1\r\nHost: api.example.test\r\n\r\n',
    );
    assert.equal(ruleOf(origin), 'egress.request_form');
    const https = await rawExchange(
      l.socketPath,
      'GET https://api.example.test/ HTTP/1.1\r\nHost: api.example.test\r\n\r\n',
    );
    assert.equal(ruleOf(https), 'egress.scheme');
    const upgrade = await rawExchange(
      l.socketPath,
      `GET http://api.example.test:${P}/ HTTP/1.1\r\nHost: api.example.test:${P}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`,
    );
    assert.equal(ruleOf(upgrade), 'egress.upgrade');
    await l.close();
  });
});

describe('egress proxy: ports', () => {
  test('CONNECT goes only to 443 and plain HTTP only to 80 unless the lease says otherwise', async () => {
    const l = await lease({}, false);
    const c = await rawExchange(l.socketPath, connectReq(`api.example.test:${P}`));
    assert.equal(ruleOf(c), 'egress.port');
    const h = await viaProxy(l.socketPath, `http://api.example.test:${P}/`);
    assert.equal(h.headers['x-toolgate-egress-rule'], 'egress.port');
    const ssh = await rawExchange(l.socketPath, connectReq('api.example.test:22'));
    assert.equal(ruleOf(ssh), 'egress.port');
    await l.close();
  });

  test('a CONNECT target without a port or with a malformed one is refused', async () => {
    const l = await lease();
    for (const t of [
      'api.example.test',
      'api.example.test:',
      'api.example.test:0443',
      'api.example.test:99999',
    ]) {
      const raw = await rawExchange(l.socketPath, connectReq(t, 'api.example.test'));
      assert.equal(ruleOf(raw), 'egress.port', t);
    }
    await l.close();
  });
});

describe('egress proxy: resolved addresses', () => {
  test('by default the proxy refuses loopback even for an allowed name', async () => {
    const strict = extraProxy({ resolver: tableResolver(TABLE) });
    const l = await strict.openLease({
      leaseId: 'strict',
      sessionId: 's',
      toolId: 't',
      allowHosts: ['api.example.test'],
      byteBudget: createByteBudget(1e6),
      connectPorts: [P],
      httpPorts: [P],
    });
    const raw = await rawExchange(l.socketPath, connectReq(`api.example.test:${P}`));
    assert.equal(ruleOf(raw), 'egress.address_forbidden');
    assert.equal(l.stats().denials[0]?.address, '127.0.0.1');
    await strict.close();
  });

  test('an unsafe test target exempts exactly that ip:port and nothing else', async () => {
    const other = extraProxy({
      resolver: tableResolver(TABLE),
      unsafeTestTargets: [`127.0.0.1:${P + 1 > 65535 ? P - 1 : P + 1}`],
    });
    const l = await other.openLease({
      leaseId: 'other',
      sessionId: 's',
      toolId: 't',
      allowHosts: ['api.example.test'],
      byteBudget: createByteBudget(1e6),
      connectPorts: [P],
    });
    const raw = await rawExchange(l.socketPath, connectReq(`api.example.test:${P}`));
    assert.equal(ruleOf(raw), 'egress.address_forbidden');
    await other.close();
  });

  test('metadata, private, CGNAT, mapped and IPv6 loopback answers are refused', async () => {
    const l = await lease();
    const expected: Record<string, string> = {
      'meta.example.test': 'egress.metadata_address',
      'meta6.example.test': 'egress.metadata_address',
      'private.example.test': 'egress.address_forbidden',
      'cgnat.example.test': 'egress.address_forbidden',
      'mapped.example.test': 'egress.address_forbidden',
      'loop6.example.test': 'egress.address_forbidden',
    };
    for (const [host, rule] of Object.entries(expected)) {
      const raw = await rawExchange(l.socketPath, connectReq(`${host}:${P}`));
      assert.equal(ruleOf(raw), rule, host);
      const res = await viaProxy(l.socketPath, `http://${host}:${P}/`);
      assert.equal(res.headers['x-toolgate-egress-rule'], rule, host);
    }
    await l.close();
  });

  test('one forbidden address among the answers refuses the name', async () => {
    const l = await lease();
    const raw = await rawExchange(l.socketPath, connectReq(`mixed.example.test:${P}`));
    assert.equal(ruleOf(raw), 'egress.address_forbidden');
    await l.close();
  });

  test('the proxy connects to the address it checked and never resolves twice (rebinding)', async () => {
    const resolver = rebindingResolver(['127.0.0.1'], ['169.254.169.254']);
    let calls = 0;
    const counting = async (h: string) => {
      calls += 1;
      return resolver(h);
    };
    const rp = extraProxy({ resolver: counting, unsafeTestTargets: [`127.0.0.1:${P}`] });
    const l = await rp.openLease({
      leaseId: 'rebind',
      sessionId: 's',
      toolId: 't',
      allowHosts: ['api.example.test'],
      byteBudget: createByteBudget(1e6),
      httpPorts: [P],
    });
    const res = await viaProxy(l.socketPath, `http://api.example.test:${P}/once`);
    assert.equal(res.status, 200);
    assert.equal(calls, 1);
    const second = await viaProxy(l.socketPath, `http://api.example.test:${P}/twice`);
    assert.equal(second.headers['x-toolgate-egress-rule'], 'egress.metadata_address');
    await rp.close();
  });

  test('a name that does not resolve is refused with its own rule', async () => {
    const l = await lease({ allowHosts: ['nowhere.example.test'] });
    const raw = await rawExchange(l.socketPath, connectReq(`nowhere.example.test:${P}`));
    assert.equal(ruleOf(raw), 'egress.dns');
    await l.close();
  });
});

describe('egress proxy: redirects', () => {
  test('a redirect to another host is answered as an error, never passed on or followed', async () => {
    const l = await lease();
    const before = upstream.seen.length;
    const res = await viaProxy(l.socketPath, `http://api.example.test:${P}/redirect-away`);
    assert.equal(res.status, 403);
    assert.equal(res.headers['x-toolgate-egress-rule'], 'egress.redirect');
    assert.equal(res.headers.location, undefined);
    assert.equal(upstream.seen.length, before + 1);
    assert.equal(l.stats().denials[0]?.rule, 'egress.redirect');
    await l.close();
  });
});

describe('egress proxy: the byte budget', () => {
  test('a download past the budget is cut, recorded, and never overspends', async () => {
    const budget = createByteBudget(2_000);
    const l = await lease({ byteBudget: budget });
    // The client sees the response break off (an error, or a short body); never the whole body.
    const res = await viaProxy(l.socketPath, `http://api.example.test:${P}/big`).catch(
      () => undefined,
    );
    assert.notEqual(res?.body, big);
    const s = l.stats();
    assert.equal(s.denials.at(-1)?.rule, 'egress.budget');
    assert.equal(s.denials.at(-1)?.code, 'BUDGET_EXCEEDED');
    assert.ok(budget.spent() <= 2_000, `spent ${budget.spent()}`);
    await l.close();
  });

  test('a tunnel past the budget is cut', async () => {
    const budget = createByteBudget(1_000);
    const l = await lease({ byteBudget: budget });
    const out = await rawExchange(
      l.socketPath,
      connectReq(`api.example.test:${P}`),
      'GET /big HTTP/1.1\r\nHost: api.example.test\r\nConnection: close\r\n\r\n',
    );
    assert.ok(!out.includes(big), 'the whole body came through');
    assert.equal(l.stats().denials.at(-1)?.rule, 'egress.budget');
    assert.ok(budget.spent() <= 1_000);
    await l.close();
  });

  test('a request bigger than the remaining budget is refused before anything is sent', async () => {
    const l = await lease({ byteBudget: createByteBudget(500) });
    const before = upstream.seen.length;
    const res = await viaProxy(l.socketPath, `http://api.example.test:${P}/post`, {
      method: 'POST',
      body: 'y'.repeat(800),
    });
    assert.equal(res.status, 429);
    assert.equal(res.headers['x-toolgate-egress-rule'], 'egress.budget');
    assert.equal(upstream.seen.length, before);
    await l.close();
  });

  test('with budgetCounts "out", downloads do not spend the budget (benign neighbour)', async () => {
    const budget = createByteBudget(2_000);
    const l = await lease({ byteBudget: budget, budgetCounts: 'out' });
    const res = await viaProxy(l.socketPath, `http://api.example.test:${P}/big`);
    assert.equal(res.body, big);
    assert.ok(l.stats().bytesIn > 5_000);
    await l.close();
  });

  test('a request body over the buffer cap is refused', async () => {
    const l = await lease({ maxRequestBodyBytes: 100 });
    const res = await viaProxy(l.socketPath, `http://api.example.test:${P}/post`, {
      method: 'POST',
      body: 'z'.repeat(101),
    });
    assert.equal(res.status, 413);
    await l.close();
  });
});

describe('egress proxy: secret scanning of plain HTTP', () => {
  const KEY = ['AKIA', 'IOSFODNN7EXAMPLE'].join('');

  test('a secret-shaped value in the body, a header or the query is not sent', async () => {
    const l = await lease();
    const before = upstream.seen.length;
    const body = await viaProxy(l.socketPath, `http://api.example.test:${P}/post`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ note: `key=${KEY}` }),
    });
    assert.equal(body.headers['x-toolgate-egress-rule'], 'egress.secret.aws_access_key');
    const header = await viaProxy(l.socketPath, `http://api.example.test:${P}/`, {
      headers: { 'x-note': `ghp_${'a'.repeat(36)}` },
    });
    assert.equal(header.headers['x-toolgate-egress-rule'], 'egress.secret.github_token');
    const query = await viaProxy(
      l.socketPath,
      `http://api.example.test:${P}/?k=-----BEGIN%20RSA%20PRIVATE%20KEY-----`,
    );
    assert.equal(query.headers['x-toolgate-egress-rule'], 'egress.secret.private_key');
    assert.equal(upstream.seen.length, before);
    await l.close();
  });

  test('ordinary text that merely mentions keys is sent (benign neighbour)', async () => {
    const l = await lease();
    const res = await viaProxy(l.socketPath, `http://api.example.test:${P}/post`, {
      method: 'POST',
      body: 'rotate the AKIA key and the private key; sk-short; -----BEGIN PUBLIC KEY-----',
    });
    assert.equal(res.status, 200);
    await l.close();
  });

  test("the lease's credential goes to its audience and nowhere else", async () => {
    const value = 'tgsecret-0123456789abcdef';
    const l = await lease({
      credentials: [{ value, audienceHosts: ['api.example.test'] }],
    });
    const ok = await viaProxy(l.socketPath, `http://api.example.test:${P}/`, {
      headers: { authorization: `Bearer ${value}` },
    });
    assert.equal(ok.status, 200);
    const no = await viaProxy(l.socketPath, `http://other.example.test:${P}/`, {
      method: 'POST',
      body: `leak=${encodeURIComponent(value)}`,
    });
    assert.equal(no.headers['x-toolgate-egress-rule'], 'egress.credential_audience');
    const basic = await viaProxy(l.socketPath, `http://other.example.test:${P}/`, {
      headers: { authorization: `Basic ${Buffer.from(`u:${value}`).toString('base64')}` },
    });
    assert.equal(basic.headers['x-toolgate-egress-rule'], 'egress.credential_audience');
    await l.close();
  });
});

describe('egress proxy: a hostile upstream', () => {
  test('malformed upstream answers are failures, never a crash of the proxy', async () => {
    const answers = [
      'HTTP/1.1 200 OK\r\nX-Bad: a\u0001b\r\nContent-Length: 2\r\n\r\nok',
      'HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab',
      'NOT HTTP AT ALL\r\n\r\n',
      'HTTP/1.1 302 Found\r\nLocation: http://[::1\r\nContent-Length: 0\r\n\r\n',
    ];
    let i = 0;
    const raw = net.createServer((c) => {
      c.once('data', () => c.end(answers[i % answers.length] ?? ''));
      c.on('error', () => {});
    });
    await new Promise<void>((r) => raw.listen(0, '127.0.0.1', r));
    const q = (raw.address() as net.AddressInfo).port;
    const hp = extraProxy({
      resolver: tableResolver(TABLE),
      unsafeTestTargets: [`127.0.0.1:${q}`],
    });
    const l = await hp.openLease({
      leaseId: 'hostile',
      sessionId: 's',
      toolId: 't',
      allowHosts: ['api.example.test'],
      byteBudget: createByteBudget(1e6),
      httpPorts: [q],
    });
    try {
      for (i = 0; i < answers.length; i += 1) {
        const res = await viaProxy(l.socketPath, `http://api.example.test:${q}/`).catch(
          () => undefined,
        );
        assert.ok(res === undefined || res.status !== 200 || i === 1, `answer ${i}`);
      }
      // Still serving: the proxy process did not fall over.
      const ok = await viaProxy(l.socketPath, `http://evil.example.test:${q}/`);
      assert.equal(ok.status, 403);
    } finally {
      await new Promise<void>((r) => raw.close(() => r()));
    }
  });
});

describe('egress proxy: lease lifecycle', () => {
  test('a closed lease removes its socket and cuts open tunnels', async () => {
    const l = await lease();
    const socket = net.connect({ path: l.socketPath });
    await new Promise<void>((r) => socket.once('connect', () => r()));
    socket.write(connectReq(`api.example.test:${P}`));
    await new Promise<void>((r) => socket.once('data', () => r()));
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    await l.close();
    await closed;
    assert.equal(existsSync(l.socketPath), false);
    await l.close();
  });

  test('connections past the lease cap are refused', async () => {
    const l = await lease({ maxConnections: 1 });
    const first = net.connect({ path: l.socketPath });
    await new Promise<void>((r) => first.once('connect', () => r()));
    first.write('CONNECT api.example.test:');
    const second = net.connect({ path: l.socketPath });
    await new Promise<void>((r) => second.once('close', () => r()));
    assert.equal(l.stats().denials[0]?.rule, 'egress.connections');
    first.destroy();
    await l.close();
  });

  test('lease ids are checked and unique', async () => {
    await assert.rejects(lease({ leaseId: '../escape' }), /lease id/);
    const l = await lease({ leaseId: 'dup' });
    await assert.rejects(lease({ leaseId: 'dup' }), /already open/);
    await l.close();
  });

  test('an allow-list entry that is not a DNS name is refused when the lease opens', async () => {
    await assert.rejects(lease({ allowHosts: ['127.0.0.1'] }), /not a DNS host name/);
    await assert.rejects(lease({ allowHosts: ['*.example.test'] }), /not a DNS host name/);
  });
});
