/**
 * @module Two (or more) toolgate replicas on one PostgreSQL database behind HAProxy, for the
 * replica tests and `npm run bench:mcp`: each replica is the built CLI's `serve` in its own
 * process, on a port the kernel picked (`--port 0`, read back from its banner); HAProxy balances
 * round-robin with no stickiness for 2026-07-28 requests (2025-era MCP sessions stick to the
 * replica that opened them, by their `Mcp-Session-Id`) and health-checks `/readyz` every 200 ms (down after two failures). No fixed ports: the
 * frontend is a loopback socket this process binds on port 0 and hands to HAProxy as an inherited
 * file descriptor (`bind fd@3`), so no other process can take the port between choosing and
 * binding it. Each response names the replica that served it in `X-Toolgate-Replica`, set by
 * HAProxy itself (nothing is added to toolgate's per-call path).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { cleanEnv, MAIN } from '../support/cli.js';

/** The response header HAProxy sets to the name of the replica that answered. */
export const REPLICA_HEADER = 'x-toolgate-replica';

export interface Replica {
  readonly name: string;
  readonly port: number;
  readonly base: string;
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  output(): string;
}

export interface ReplicaOptions {
  /** The shared database (PostgreSQL) every replica serves. */
  readonly db: string;
  /** The shared data folder: one approval key, audit key and master key for all replicas. */
  readonly dataDir: string;
  /** The working directory of the process (its own logs, nothing shared). */
  readonly cwd: string;
  /** The bootstrap admin token every replica and the CLI accept (TOOLGATE_ADMIN_TOKEN). */
  readonly adminToken: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly extraArgs?: readonly string[];
}

/** Is HAProxy installed (scripts/test-all.sh installs it from Debian)? */
export function haproxyAvailable(): boolean {
  return spawnSync('haproxy', ['-v'], { stdio: 'ignore' }).status === 0;
}

/** What `child` prints on stdout and stderr, gathered in `log.out`; `exited` once it exits. */
function watch(child: ChildProcess): { log: { out: string }; exited: Promise<void> } {
  const log = { out: '' };
  child.stdout?.on('data', (c: Buffer) => {
    log.out += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    log.out += c.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { log, exited };
}

/** `toolgate serve --port 0` as replica `name`; resolves once its banner shows the address. */
export function startReplica(name: string, options: ReplicaOptions): Promise<Replica> {
  const child = spawn(
    process.execPath,
    [
      MAIN,
      '--db',
      options.db,
      '--data-dir',
      options.dataDir,
      'serve',
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      // A call that waits for approval is answered pending after a second: these suites decide
      // on another replica only once they saw it.
      '--approval-wait',
      '1',
      ...(options.extraArgs ?? []),
    ],
    {
      cwd: options.cwd,
      env: { ...cleanEnv(), TOOLGATE_ADMIN_TOKEN: options.adminToken, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const { log, exited } = watch(child);
  return new Promise((resolve, reject) => {
    // Bounded, with room for a host loaded by other test runs.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`replica ${name} printed no address in 90 s:\n${log.out}`));
    }, 90_000);
    const onData = () => {
      const port = /listening on http:\/\/127\.0\.0\.1:(\d+)\n/.exec(log.out)?.[1];
      if (!port || !/try: .*\n/.test(log.out)) return;
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      resolve({
        name,
        port: Number(port),
        base: `http://127.0.0.1:${port}`,
        child,
        exited,
        output: () => log.out,
      });
    };
    child.stdout?.on('data', onData);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`replica ${name} exited before its banner:\n${log.out}`));
    });
  });
}

/** Starts replicas `a`, `b`, … at once; if one fails to start, the others are stopped. */
export async function startReplicas(count: number, options: ReplicaOptions): Promise<Replica[]> {
  const started = await Promise.allSettled(
    Array.from({ length: count }, (_, i) => startReplica(String.fromCharCode(97 + i), options)),
  );
  const replicas = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = started.find((r) => r.status === 'rejected');
  if (failed) {
    await Promise.all(replicas.map((r) => stopReplica(r)));
    throw failed.reason;
  }
  return replicas;
}

export interface Balancer {
  /** http://127.0.0.1:PORT — the frontend clients use. */
  readonly base: string;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

function listenLoopback(): Promise<Server> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen({ host: '127.0.0.1', port: 0, backlog: 511 }, () => resolve(srv));
  });
}

/** The file descriptor of a listening socket (Linux: libuv's TCP handle exposes it). */
function fdOf(srv: Server): number {
  const fd = (srv as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) throw new Error('no file descriptor for the socket');
  return fd;
}

/** The HAProxy configuration: round-robin, sessions only for 2025-era clients, short checks. */
export function haproxyConfig(replicas: readonly Pick<Replica, 'name' | 'port'>[]): string {
  return [
    'global',
    '  maxconn 1024',
    'defaults',
    '  mode http',
    '  timeout connect 1s',
    '  timeout client 60s',
    '  timeout server 60s',
    // A check waits for a slow answer on a loaded host: only a replica that is gone (connection
    // refused at once) or stuck goes down.
    '  timeout check 2s',
    // A request sent to a replica that refuses the connection goes to another one.
    '  retries 2',
    '  option redispatch',
    'frontend mcp',
    '  bind fd@3',
    '  default_backend replicas',
    'backend replicas',
    '  balance roundrobin',
    '  option httpchk GET /readyz',
    `  http-response set-header ${REPLICA_HEADER} %[srv_name]`,
    // 2025-era clients keep an MCP session in the replica that opened it; requests without the
    // header (every 2026-07-28 request) match nothing and stay round-robin.
    '  stick-table type string len 64 size 100k expire 30m',
    '  stick store-response res.hdr(mcp-session-id)',
    '  stick match req.hdr(mcp-session-id)',
    ...replicas.map(
      (r) => `  server ${r.name} 127.0.0.1:${r.port} check inter 200ms fall 2 rise 2`,
    ),
    '',
  ].join('\n');
}

/** HAProxy in front of `replicas`; resolves once every replica answered through it. */
export async function startBalancer(replicas: readonly Replica[], dir: string): Promise<Balancer> {
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, haproxyConfig(replicas));
  const socket = await listenLoopback();
  const address = socket.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const child = spawn('haproxy', ['-f', file, '-db'], {
    stdio: ['ignore', 'pipe', 'pipe', fdOf(socket)],
  });
  // HAProxy holds its own copy of the socket now; this process never accepts on it.
  socket.close();
  const { log, exited } = watch(child);
  child.once('error', (err) => {
    log.out += `${err.message}\n`;
  });
  const base = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  const seen = new Set<string>();
  const until = Date.now() + 30_000;
  while (seen.size < replicas.length) {
    if (child.exitCode !== null || child.pid === undefined)
      throw new Error(`haproxy exited:\n${log.out}`);
    if (Date.now() > until) {
      await stop();
      throw new Error(
        `haproxy did not reach every replica in 30 s (saw ${[...seen]}):\n${log.out}`,
      );
    }
    try {
      const res = await fetch(`${base}/healthz`);
      await res.arrayBuffer();
      const name = res.headers.get(REPLICA_HEADER);
      if (res.status === 200 && name) seen.add(name);
    } catch {
      // Not listening yet.
    }
    if (seen.size < replicas.length) await new Promise((r) => setTimeout(r, 100));
  }
  return { base, child, stop };
}

/** Stops a replica (SIGTERM, then SIGKILL after 10 s) and waits for it. */
export async function stopReplica(replica: Replica): Promise<void> {
  const { child } = replica;
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await replica.exited;
  clearTimeout(timer);
}
