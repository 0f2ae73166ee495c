/**
 * Egress proxy throughput: a 10 MB download from a loopback server, directly over TCP
 * (the baseline, measured in the same run) and through the egress proxy's Unix socket, both as a
 * CONNECT tunnel (what HTTPS tools use) and as a plain absolute-form HTTP request.
 *
 * As in production, three processes: the upstream server and the client (the sandboxed tool)
 * are child processes; the proxy runs in this one (the gateway). The client times each download
 * itself. Runs are interleaved; the median of RUNS is reported as MB/s and as a ratio to direct.
 * Goal: ≥ 0.8× direct. For scale, a bare Unix-socket-to-TCP byte pipe in this process (no
 * rules at all) is measured too: what any proxy reached through a Unix socket can at best do.
 *
 *   npm run bench:proxy   (RUNS=9 MB=10 by default; the last line is one JSON object)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { createByteBudget, EgressProxy } from '../src/execution/sandbox/egress/index.js';

const RUNS = Number(process.env.RUNS ?? 9);
const MB = Number(process.env.MB ?? 10);
const HOST = 'bench.example.test';

/** The upstream: serves SIZE bytes on every request, prints its port. */
const SERVER = `
const http = require('node:http');
const size = Number(process.argv[1]);
const blob = Buffer.alloc(size, 0x61);
const server = http.createServer((_q, res) => {
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': size });
  res.end(blob);
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

/**
 * The client: reads one JSON command per line ({ way, port, socketPath }), downloads, and prints
 * the elapsed milliseconds (or "error …").
 */
const CLIENT = `
const http = require('node:http');
const net = require('node:net');
const rl = require('node:readline').createInterface({ input: process.stdin });
const HOST = ${JSON.stringify(HOST)};
function drain(req) {
  return new Promise((resolve, reject) => {
    req.on('response', (res) => {
      let n = 0;
      res.on('data', (c) => { n += c.length; });
      res.on('end', () => resolve(n));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
function tunnel(path, target) {
  return new Promise((resolve, reject) => {
    const s = net.connect({ path });
    let head = '';
    const onData = (c) => {
      head += c.toString('latin1');
      if (!head.includes('\\r\\n\\r\\n')) return;
      s.removeListener('data', onData);
      head.startsWith('HTTP/1.1 200') ? resolve(s) : reject(new Error(head.split('\\r\\n')[0]));
    };
    s.on('data', onData);
    s.on('error', reject);
    s.write('CONNECT ' + target + ' HTTP/1.1\\r\\nHost: ' + target + '\\r\\n\\r\\n');
  });
}
rl.on('line', async (line) => {
  const { way, port, socketPath, barePath } = JSON.parse(line);
  const t0 = performance.now();
  try {
    let n;
    if (way === 'direct') {
      n = await drain(http.request({ host: '127.0.0.1', port, path: '/blob', agent: false }));
    } else if (way === 'connect') {
      const s = await tunnel(socketPath, HOST + ':' + port);
      n = await drain(http.request({ path: '/blob', headers: { host: HOST }, createConnection: () => s }));
      s.destroy();
    } else if (way === 'bare') {
      n = await drain(http.request({ socketPath: barePath, path: '/blob', agent: false }));
    } else {
      n = await drain(http.request({ socketPath, path: 'http://' + HOST + ':' + port + '/blob',
        headers: { host: HOST + ':' + port }, setHost: false, agent: false }));
    }
    console.log(JSON.stringify({ ms: performance.now() - t0, bytes: n }));
  } catch (err) {
    console.log(JSON.stringify({ error: String(err) }));
  }
});
`;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
}

function child(code: string, args: string[]): { proc: ChildProcess; next: () => Promise<string> } {
  const proc = spawn(process.execPath, ['-e', code, ...args], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  const waiting: ((l: string) => void)[] = [];
  if (!proc.stdout) throw new Error('no stdout');
  createInterface({ input: proc.stdout }).on('line', (l) => {
    const w = waiting.shift();
    if (w) w(l);
    else lines.push(l);
  });
  const next = (): Promise<string> =>
    new Promise((resolve) => {
      const l = lines.shift();
      if (l !== undefined) resolve(l);
      else waiting.push(resolve);
    });
  return { proc, next };
}

export async function measureProxyThroughput(): Promise<Record<string, number>> {
  const size = MB * 1024 * 1024;
  const server = child(SERVER, [String(size)]);
  const client = child(CLIENT, []);
  const mbps: Record<string, number[]> = { direct: [], bare: [], connect: [], plain: [] };
  // The floor of any proxy on a Unix socket: a bare byte pipe in this process, no rules.
  const bareDir = mkdtempSync(join(tmpdir(), 'toolgate-bench-'));
  const barePath = join(bareDir, 'bare.sock');
  let barePort = 0;
  const bare = net.createServer((c) => {
    const u = net.connect({ host: '127.0.0.1', port: barePort });
    c.pipe(u);
    u.pipe(c);
    c.on('error', () => u.destroy());
    u.on('error', () => c.destroy());
  });
  await new Promise<void>((r) => bare.listen(barePath, r));
  try {
    const port = Number(await server.next());
    barePort = port;
    const exempt = new EgressProxy({
      resolver: async () => [{ address: '127.0.0.1', family: 4 }],
      unsafeTestTargets: [`127.0.0.1:${port}`],
    });
    const lease = await exempt.openLease({
      leaseId: 'bench',
      sessionId: 'bench',
      toolId: 'bench',
      allowHosts: [HOST],
      byteBudget: createByteBudget(Number.POSITIVE_INFINITY),
      httpPorts: [port],
      connectPorts: [port],
    });
    const run = async (way: string): Promise<number> => {
      client.proc.stdin?.write(
        `${JSON.stringify({ way, port, socketPath: lease.socketPath, barePath })}\n`,
      );
      const r = JSON.parse(await client.next()) as { ms?: number; bytes?: number; error?: string };
      if (r.error !== undefined || r.bytes !== size || r.ms === undefined) {
        const denials = JSON.stringify(lease.stats().denials);
        throw new Error(`${way}: ${r.error ?? `${r.bytes} of ${size} bytes`} ${denials}`);
      }
      return size / 1024 / 1024 / (r.ms / 1000);
    };
    try {
      for (const way of Object.keys(mbps)) await run(way); // warm-up
      for (let i = 0; i < RUNS; i += 1) {
        for (const way of Object.keys(mbps)) mbps[way]?.push(await run(way));
      }
    } finally {
      await exempt.close();
    }
  } finally {
    server.proc.kill();
    client.proc.kill();
    bare.close();
    rmSync(bareDir, { recursive: true, force: true });
  }
  const direct = median(mbps.direct ?? []);
  const connect = median(mbps.connect ?? []);
  const plain = median(mbps.plain ?? []);
  const bareMbps = median(mbps.bare ?? []);
  const round = (x: number, d = 1): number => Math.round(x * 10 ** d) / 10 ** d;
  return {
    proxy_download_mb: MB,
    proxy_runs: RUNS,
    proxy_direct_mb_per_s: round(direct),
    proxy_connect_mb_per_s: round(connect),
    proxy_plain_mb_per_s: round(plain),
    proxy_connect_ratio: round(connect / direct, 2),
    proxy_plain_ratio: round(plain / direct, 2),
    proxy_bare_relay_mb_per_s: round(bareMbps),
    proxy_bare_relay_ratio: round(bareMbps / direct, 2),
    proxy_connect_vs_bare_relay: round(connect / bareMbps, 2),
    proxy_goal_ratio: 0.8,
    proxy_goal_met: connect / direct >= 0.8 && plain / direct >= 0.8 ? 1 : 0,
    // Loopback throughput is CPU-bound: on a busy host the three processes fight for cores.
    proxy_load_avg_1m: round(loadavg()[0] ?? 0, 2),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const r = await measureProxyThroughput();
  console.log(
    `${MB} MB download over loopback, median of ${RUNS} runs (client, proxy, server in three processes):`,
  );
  console.log(`  direct TCP:            ${r.proxy_direct_mb_per_s} MB/s`);
  console.log(
    `  via proxy, CONNECT:    ${r.proxy_connect_mb_per_s} MB/s (${r.proxy_connect_ratio}× direct)`,
  );
  console.log(
    `  via proxy, plain HTTP: ${r.proxy_plain_mb_per_s} MB/s (${r.proxy_plain_ratio}× direct)`,
  );
  console.log(
    `  bare Unix-socket relay (no rules, the floor of any such proxy): ${r.proxy_bare_relay_mb_per_s} MB/s (${r.proxy_bare_relay_ratio}× direct)`,
  );
  console.log(`goal ≥ 0.8× direct met: ${r.proxy_goal_met === 1}`);
  console.log(JSON.stringify(r));
}
