/**
 * The proxy as a sandboxed tool meets it: a bubblewrap sandbox with no network of its own, the
 * lease socket bound in, socat bridging it to 127.0.0.1:3128 inside, and curl (a real client,
 * not ours) using it as its proxy, for plain HTTP and a CONNECT tunnel. Skipped, by name, where
 * bwrap, socat or curl is not installed.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import {
  createByteBudget,
  type EgressLease,
  EgressProxy,
} from '../../../src/execution/sandbox/egress/index.js';
import { startUpstream, tableResolver, type Upstream } from '../../support/egress.js';

const missing = ['bwrap', 'socat', 'curl'].filter(
  (tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0,
);
const skip = missing.length > 0 ? `not installed here: ${missing.join(', ')}` : false;

let upstream: Upstream;
let proxy: EgressProxy;
let lease: EgressLease;
let P = 0;

/**
 * Runs `script` in a sandbox without network whose only way out is the lease socket. Async: the
 * proxy answering it lives in this process.
 */
function inSandbox(script: string): Promise<{ status: number | null; stdout: string }> {
  const bridge =
    'socat TCP-LISTEN:3128,bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:/run/egress.sock & ' +
    'for i in $(seq 50); do (echo > /dev/tcp/127.0.0.1/3128) 2>/dev/null && break; sleep 0.02; done; ';
  const child = spawn(
    'bwrap',
    [
      '--ro-bind',
      '/',
      '/',
      '--dev',
      '/dev',
      '--proc',
      '/proc',
      '--tmpfs',
      '/tmp',
      '--tmpfs',
      '/run',
      '--bind',
      lease.socketPath,
      '/run/egress.sock',
      '--unshare-all',
      '--die-with-parent',
      'bash',
      '-c',
      `${bridge}${script}; s=$?; kill %1 2>/dev/null; exit $s`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  child.stdout.on('data', (c: Buffer) => {
    stdout += c.toString('utf8');
  });
  child.stderr.resume();
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  return new Promise((resolve) => {
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout });
    });
  });
}

describe('egress proxy bridged into a sandbox', { skip }, () => {
  before(async () => {
    upstream = await startUpstream();
    P = upstream.port;
    proxy = new EgressProxy({
      resolver: tableResolver({
        'api.example.test': ['127.0.0.1'],
        'evil.example.test': ['127.0.0.1'],
      }),
      unsafeTestTargets: [`127.0.0.1:${P}`],
      // This test runs bwrap as itself (not as nobody, as the namespace driver does when root):
      // the sandbox's user maps to the test's own, which must own the socket.
      socketOwner: process.getuid?.() ?? 0,
    });
    lease = await proxy.openLease({
      leaseId: 'bridge',
      sessionId: 's',
      toolId: 'curl_tool',
      allowHosts: ['api.example.test'],
      byteBudget: createByteBudget(1_000_000),
      httpPorts: [P],
      connectPorts: [P],
    });
  });

  after(async () => {
    await proxy.close();
    await upstream.close();
  });

  test('curl reaches the allowed host through the proxy, plain and tunnelled', async () => {
    const plain = await inSandbox(
      `curl -sS -x http://127.0.0.1:3128 http://api.example.test:${P}/plain`,
    );
    assert.equal(plain.status, 0, plain.stdout);
    assert.match(plain.stdout, /"path":"\/plain"/);
    const tunnel = await inSandbox(
      `curl -sS -p -x http://127.0.0.1:3128 http://api.example.test:${P}/tunnel`,
    );
    assert.equal(tunnel.status, 0, tunnel.stdout);
    assert.match(tunnel.stdout, /"path":"\/tunnel"/);
    const hosts = lease.stats().resolvedHosts;
    assert.deepEqual(hosts, [{ host: 'api.example.test', address: '127.0.0.1' }]);
  });

  test('an unlisted host is refused at the proxy, and the sandbox has no other route', async () => {
    const refused = await inSandbox(
      `curl -s -o /dev/null -w '%{http_code}' -x http://127.0.0.1:3128 http://evil.example.test:${P}/`,
    );
    assert.equal(refused.stdout, '403');
    const direct = await inSandbox(`curl -sS --max-time 2 http://127.0.0.1:${P}/`);
    assert.notEqual(direct.status, 0);
    assert.ok(lease.stats().denials.some((d) => d.rule === 'egress.host_not_allowed'));
  });
});
